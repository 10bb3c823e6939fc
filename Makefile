# Every target does its own set-up, idempotently: a fresh clone needs only `make demo` or `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SAMPLE := build/sample
DEMO_OUT := build/demo
DEMO_FORMATS := lerobot rlds webdataset mcap viam-binary viam-sequence usd mjcf

# Conformance: the real consumers (lerobot 0.6.1 needs Python 3.12) in an environment cached outside the clone.
PY312 ?= $(firstword $(wildcard $(shell pyenv root 2>/dev/null)/versions/3.12*/bin/python3.12) $(shell command -v python3.12))
CONF_VENV ?= $(HOME)/.cache/robokit/conformance-py312
CONF_STAMP := $(CONF_VENV)/.installed-$(shell cat pyproject.toml conformance-requirements.txt | sha1sum | cut -c1-12)
# A second one for TensorFlow (RLDS) and WebDataset, which run their tests in a process of their own.
PY311 ?= $(firstword $(shell command -v python3.11) $(shell command -v python3))
CONF_TF_VENV ?= $(HOME)/.cache/robokit/conformance-tf
CONF_TF_STAMP := $(CONF_TF_VENV)/.installed-$(shell cat pyproject.toml conformance-tf-requirements.txt | sha1sum | cut -c1-12)
CONF_TF_TESTS := tests/converters/rlds tests/converters/webdataset

.PHONY: demo test lint conformance bench clean run fuzz

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# Bytecode compiled as a wheel install has it (under PYTHONDONTWRITEBYTECODE every start would compile robokit).
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	$(BIN)/python -m compileall -q robokit > /dev/null
	touch $(STAMP)

# The main job on built-in sample data: simulated recordings + a sample scene -> every format in one
# pass -> each output loaded by its consumer -> the exported actions replayed in the simulator.
demo: $(STAMP)
	rm -rf $(SAMPLE) $(DEMO_OUT)
	MUJOCO_GL=egl $(BIN)/robokit sim record --out $(SAMPLE) --episodes 3 --duration 6
	$(BIN)/robokit sample --scene --out $(SAMPLE)/scene
	$(BIN)/robokit info $(SAMPLE)/episode_000
	MUJOCO_GL=egl $(BIN)/robokit convert $(SAMPLE)/episode_000 $(SAMPLE)/episode_001 $(SAMPLE)/episode_002 \
		$(SAMPLE)/scene/scene.yaml $(foreach f,$(DEMO_FORMATS),--to $(f)) --out $(DEMO_OUT) \
		--fps 15 --action joint_commands/position --pose tf/tool0 --pose tf/cube --collision-from-splat --no-cache
	MUJOCO_GL=egl $(BIN)/robokit check $(DEMO_OUT)
	MUJOCO_GL=egl $(BIN)/robokit sim replay $(DEMO_OUT)/lerobot --model $(SAMPLE)/scene.xml --interpolate

# `make run SCRIPT=module:function ARGS='...'` runs a script's entry point from this checkout, e.g.
# SCRIPT=training-export-service:main (dashes in the module name stand for underscores).
run: $(STAMP)
	@test -n "$(SCRIPT)" || { echo "give SCRIPT=module:function, e.g. training-export-service:main"; exit 2; }
	$(BIN)/python -c 'import importlib, sys; m, _, f = sys.argv[1].partition(":"); sys.argv[:2] = [m]; \
		getattr(importlib.import_module(m.replace("-", "_")), f or "main")()' '$(SCRIPT)' $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check robokit tests bench
	$(BIN)/mypy

# pytest exit 5 ("no tests collected") is a failure here, like any other non-zero exit.
test: lint
	$(BIN)/pytest -q -p no:cacheprovider

# Seeded mutations of every reader kind through `robokit info` and `robokit convert`; exits 1 on any
# traceback, hang or silent loss (details in build/fuzz-report.json). `make test` runs a small budget.
FUZZ_CASES ?= 1000
FUZZ_SEED ?= 0
fuzz: $(STAMP)
	$(BIN)/python -m tests.fuzz.harness --cases $(FUZZ_CASES) --seed $(FUZZ_SEED)

$(CONF_STAMP): pyproject.toml conformance-requirements.txt
	@test -n "$(PY312)" || { echo "conformance needs Python 3.12 (lerobot 0.6 requires it)"; exit 1; }
	test -x $(CONF_VENV)/bin/python || $(PY312) -m venv $(CONF_VENV)
	$(CONF_VENV)/bin/pip install -q -r conformance-requirements.txt
	$(CONF_VENV)/bin/pip install -q -e '.[dev]'
	rm -f $(CONF_VENV)/.installed-*
	touch $(CONF_STAMP)

$(CONF_TF_STAMP): pyproject.toml conformance-tf-requirements.txt
	test -x $(CONF_TF_VENV)/bin/python || $(PY311) -m venv $(CONF_TF_VENV)
	$(CONF_TF_VENV)/bin/pip install -q -r conformance-tf-requirements.txt
	$(CONF_TF_VENV)/bin/pip install -q -e '.[dev]'
	rm -f $(CONF_TF_VENV)/.installed-*
	touch $(CONF_TF_STAMP)

# The environments are shared between clones: point their editable robokit at this one before testing.
conformance: $(CONF_STAMP) $(CONF_TF_STAMP)
	$(CONF_VENV)/bin/pip install -q --no-deps -e .
	MUJOCO_GL=egl $(CONF_VENV)/bin/pytest -q -p no:cacheprovider -m conformance $(addprefix --ignore=,$(CONF_TF_TESTS))
	$(CONF_TF_VENV)/bin/pip install -q --no-deps -e .
	TF_CPP_MIN_LOG_LEVEL=3 $(CONF_TF_VENV)/bin/pytest -q -p no:cacheprovider -m conformance $(CONF_TF_TESTS)

clean:
	rm -rf $(VENV) build
