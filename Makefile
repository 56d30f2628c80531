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
# One BLAS thread (as fric_nodes sets for its processes): fric's linear algebra is small
# matrices, and OpenBLAS's busy-waiting workers on 2 shared cores made a 200×200 eigh take
# 0.5 s instead of 2 ms while another process ran (the arm fit 6 s instead of 0.2 s).
export OPENBLAS_NUM_THREADS ?= 1
export PYTHONDONTWRITEBYTECODE := 1

VENV  := .venv
PY    := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench venv clean

demo: $(STAMP)
	$(PY) examples/haptic_demo.py --out out/demo
	$(PY) examples/arm_friction_demo.py --out out/demo/arm

test: $(STAMP)
	$(PY) -m pytest -q -p no:cacheprovider --durations=20 test

bench: $(STAMP)
	@benches='$(sort $(wildcard bench/*.py))'; \
	if [ -z "$$benches" ]; then echo "error: no bench/*.py found" >&2; exit 1; fi; \
	for f in $$benches; do echo "== $$f"; $(PY) "$$f"; done

venv: $(STAMP)

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
$(STAMP): setup.py setup.cfg package.xml $(wildcard fric_*/__init__.py) $(wildcard fric_core/*.c fric_core/*/*.c) | $(PY)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[ros,dev,mujoco,fleet,ray]'
	touch $@

clean:
	rm -rf $(VENV) out build install log .pytest_cache *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
