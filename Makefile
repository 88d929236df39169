# Two entry points: `make demo` and `make test`. Each creates .venv and installs the project.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/mln check -i examples/smokers/smokers.mln -e examples/smokers/evidence.db -q Smokes,Cancer
	@echo "--- MAP (exact, ILP): the most likely world"
	$(BIN)/mln infer -i examples/smokers/smokers.mln -e examples/smokers/evidence.db -q Smokes,Cancer --map
	@echo "--- marginals (MC-SAT)"
	$(BIN)/mln infer -i examples/smokers/smokers.mln -e examples/smokers/evidence.db -q Smokes,Cancer

test: $(STAMP)
	$(BIN)/python -m pytest

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
