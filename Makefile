# Every target sets itself up: a fresh clone needs only Python >= 3.10 and pip.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench lint clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/mlp_demo.py

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/python -m pytest -p no:cacheprovider tests

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) build src/*.egg-info
