# Every target does its own set-up, idempotently: a fresh clone needs only `make demo` or `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
SAMPLE := build/sample

# Conformance: the real consumers (lerobot 0.6.1 needs Python 3.12) in an environment cached outside the clone.
PY312 ?= $(firstword $(wildcard $(shell pyenv root 2>/dev/null)/versions/3.12*/bin/python3.12) $(shell command -v python3.12))
CONF_VENV ?= $(HOME)/.cache/robokit/conformance-py312
CONF_STAMP := $(CONF_VENV)/.installed-$(shell cat pyproject.toml conformance-requirements.txt | sha1sum | cut -c1-12)

.PHONY: demo test lint conformance bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	rm -rf $(SAMPLE)
	$(BIN)/robokit sample --out $(SAMPLE) --episodes 2
	$(BIN)/robokit info $(SAMPLE)/episode_000 $(SAMPLE)/episode_001

lint: $(STAMP)
	$(BIN)/ruff check robokit tests bench
	$(BIN)/mypy

# pytest exit 5 ("no tests collected") is a failure here, like any other non-zero exit.
test: lint
	$(BIN)/pytest -q -p no:cacheprovider

$(CONF_STAMP): pyproject.toml conformance-requirements.txt
	@test -n "$(PY312)" || { echo "conformance needs Python 3.12 (lerobot 0.6 requires it)"; exit 1; }
	test -x $(CONF_VENV)/bin/python || $(PY312) -m venv $(CONF_VENV)
	$(CONF_VENV)/bin/pip install -q -r conformance-requirements.txt
	$(CONF_VENV)/bin/pip install -q -e '.[dev]'
	rm -f $(CONF_VENV)/.installed-*
	touch $(CONF_STAMP)

conformance: $(CONF_STAMP)
	MUJOCO_GL=egl $(CONF_VENV)/bin/pytest -q -p no:cacheprovider -m conformance

clean:
	rm -rf $(VENV) build
