"""Not nodes: the ``fric`` command line (:mod:`.cli`, :mod:`.cli_ros`), the launch-file runner
(:mod:`.launch_runner`), running the haptic pipeline from scripts (:mod:`.pipeline`), the recorded
run's analysis (:mod:`.run_report`) and the one-line user-error messages (:mod:`.user_errors`).
Nothing is imported here: a node that needs one of them loads only that one."""
