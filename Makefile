# Every target sets itself up: a fresh clone needs only Python >= 3.10 and pip.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
TEST_STAMP := $(VENV)/.installed-test
DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: demo test bench lint clean

$(BIN)/python:
	$(PY) -m venv $(VENV)

# the test oracle (torch 2.13) and linters; the demo's packages stay out of it
$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[test]'
	touch $(TEST_STAMP)

# what the demo needs (scikit-learn's digits, tqdm, matplotlib), not the oracle
$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e '.[demo]'
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/python examples/digits_cnn.py

test: $(TEST_STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/python -m pytest -p no:cacheprovider tests

bench: $(TEST_STAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) build src/*.egg-info demo_out
