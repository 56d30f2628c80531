# fric — the user commands. `make demo` and `make test` work on a fresh clone: they create .venv
# (Python 3.11 + ROS 2 kilted wheels from PyPI) on first use.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test

# DDS stays on loopback; every recipe (and every process it starts) sees these.
ROS_DOMAIN_ID ?= 42
export ROS_DOMAIN_ID
export ROS_AUTOMATIC_DISCOVERY_RANGE := LOCALHOST
export MPLBACKEND := Agg
export PYTHONDONTWRITEBYTECODE := 1

VENV  := .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# The real ros2 CLI and launch system (ros2 launch/run/node/topic/param/service/lifecycle), built
# from upstream as wheels in $(ROS2CLI_WHEELS_DIR): a TEST FIXTURE for test/conformance, never a
# dependency of fric. Installed without dependencies into its own prefix $(ROS2CLI) on top of .venv's
# interpreter and ROS wheels (bin/ros2, lib/python3.11/site-packages, share/ament_index); the tests
# put it on PATH, PYTHONPATH and AMENT_PREFIX_PATH of the processes they start, nothing else sees
# it. Without the wheels directory the conformance tests skip (unless ros2 is on PATH).
ROS2CLI_WHEELS_DIR ?= ../shared/ros2-cli
ROS2CLI_WHEELS := $(wildcard $(ROS2CLI_WHEELS_DIR)/*.whl)
ROS2CLI := .venv-ros2cli
ROS2CLI_STAMP := $(ROS2CLI)/.installed

.PHONY: demo test bench venv ros2-cli clean

demo: $(STAMP)
	$(PY) examples/haptic_demo.py --out out/demo
	$(PY) examples/arm_friction_demo.py --out out/demo/arm

test: $(STAMP) ros2-cli
	$(PY) -m pytest -q -p no:cacheprovider test

bench: $(STAMP)
	@benches='$(sort $(wildcard bench/*.py))'; \
	if [ -z "$$benches" ]; then echo "error: no bench/*.py found" >&2; exit 1; fi; \
	for f in $$benches; do echo "== $$f"; $(PY) "$$f"; done

venv: $(STAMP)

ifneq ($(ROS2CLI_WHEELS),)
ros2-cli: $(ROS2CLI_STAMP)
else
ros2-cli:
	@echo "$(ROS2CLI_WHEELS_DIR)/*.whl not found: no $(ROS2CLI); test/conformance runs only if ros2 is on PATH"
endif

# The wheels' own imports that .venv lacks (README of the wheels); the rest (pyyaml, packaging,
# catkin_pkg, empy, lifecycle_msgs) is in .venv already.
$(ROS2CLI_STAMP): $(ROS2CLI_WHEELS) | $(STAMP)
	rm -rf $(ROS2CLI)
	$(PY) -m pip install --quiet --no-deps --ignore-installed --no-warn-script-location \
	  --prefix $(ROS2CLI) $(ROS2CLI_WHEELS) psutil argcomplete lark
	touch $@

# The ROS 2 kilted wheels on PyPI are built for CPython 3.11 only (cp311), so the venv must be 3.11.
$(PY):
	@py=; \
	for c in python3.11 python3; do \
	  p=$$(command -v $$c) || continue; \
	  if "$$p" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then py=$$p; break; fi; \
	done; \
	if [ -z "$$py" ]; then \
	  echo "error: fric needs Python 3.11 (python3.11, or python3 being 3.11, on PATH):" >&2; \
	  echo "       the ROS 2 kilted wheels on PyPI are built for CPython 3.11 only." >&2; \
	  exit 1; \
	fi; \
	echo "creating $(VENV) with $$py"; \
	"$$py" -m venv $(VENV) || { rm -rf $(VENV); exit 1; }

# Re-install when a package is added too: the editable finder only maps the packages it was installed with.
$(STAMP): setup.py setup.cfg package.xml $(wildcard fric_*/__init__.py) $(wildcard fric_core/*/*.c) | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[ros,dev]'
	touch $@

clean:
	rm -rf $(VENV) $(ROS2CLI) out build install log .pytest_cache *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
