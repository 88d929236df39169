# Two entry points: `make demo` and `make test`. Each creates .venv and installs the project:
# `make demo` only what the demo needs (the runtime dependencies), `make test` the test extras too
# (pytest, hypothesis, OR-Tools, matplotlib, Ray).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
SMOKERS := -i examples/smokers/smokers.mln -e examples/smokers/evidence.db -q Smokes,Cancer

.PHONY: demo test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $(STAMP)

$(TEST_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP) $(TEST_STAMP)

demo: $(STAMP)
	$(BIN)/mln check $(SMOKERS)
	@echo "--- MAP (exact, ILP): the most likely world"
	$(BIN)/mln infer $(SMOKERS) --map
	@echo "--- marginals (MC-SAT)"
	$(BIN)/mln infer $(SMOKERS)

test: $(TEST_STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadfile

bench: $(TEST_STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
