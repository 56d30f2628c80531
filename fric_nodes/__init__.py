"""rclpy nodes of the fric package: friction_renderer, transmission_sim, mujoco_sim,
friction_identifier and haptic_stage, thin ROS 2 wrappers around the pure numpy/scipy code in
fric_core."""

import os as _os

# One BLAS thread per node process, unless the user says otherwise (set before numpy loads):
# OpenBLAS workers busy-wait ~50 ms after start-up and after each parallel call, and under a
# SCHED_FIFO ``thread_priority`` on the node's CPU they starve the servo loop for that long
# (measured: bench/loop_latency.py baseline, 42-50 ms stalls with 2 workers, none with 1). The
# nodes' numpy work is per-cycle vectors; nothing here gains from threaded BLAS.
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
