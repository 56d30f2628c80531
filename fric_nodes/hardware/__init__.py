"""The haptic stage's device side, no ROS: the serial protocol (:mod:`.stage_protocol`,
docs/serial_protocol.md), the host's serial I/O thread (:mod:`.serial_link`) and its account of
the device's frames (:mod:`.device_timeline`), and a device emulator on a pseudo-terminal
(:mod:`.stage_emulator`, ``python -m fric_nodes.hardware.stage_emulator``)."""
