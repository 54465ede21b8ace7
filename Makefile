# Two commands a newcomer needs: `make demo` and `make test`.
# Both create .venv and install usdgrip with the extras it needs.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
comma  := ,
STAMP  := $(VENV)/.installed
export QT_QPA_PLATFORM ?= offscreen
# The newest OpenUSD supported: `make test` runs on it, and its usdGenSchema writes
# schemas/usdGrip/generated* (`make schema`; tests/test_schema.py checks they are not stale).
NEWEST_USD := 26.11

.PHONY: test test-oldest-usd demo lint format schema bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]" "usd-core==$(NEWEST_USD).*"
	touch $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# $(call check_usd,VENV,VERSION): the venv runs that OpenUSD release, or one line saying how to fix it.
check_usd = $(1)/bin/python -c "import sys; from pxr import Usd; v = Usd.GetVersion(); \
	sys.exit(None if v[:3] == (0, $(subst .,$(comma) ,$(2))) else \
	f'$(1) has OpenUSD {v[1]}.{v[2]}, expected $(2): rm $(1)/.installed and run make again'); \
	print('usd-core', '$(2)')"

test: lint
	$(call check_usd,$(VENV),$(NEWEST_USD))
	$(BIN)/python -m pytest -n 2 -q

# The library on the oldest OpenUSD it supports (usd-core from PyPI, this python3), in a
# second venv: schema registration, sites and slots, every rule on its cases and the
# examples, sampling, overlays and planning. CI runs it after `make test`.
OLDEST_USD    := 24.11
OLDEST_VENV   := .venv-usd$(OLDEST_USD)
OLDEST_STAMP  := $(OLDEST_VENV)/.installed
OLDEST_TESTS  := tests/test_schema.py tests/test_sites.py tests/test_slots.py \
                 tests/test_rules_cases.py tests/test_validate_scan.py tests/test_sampling_usd.py \
                 tests/test_overlays.py tests/test_planning_cli.py

$(OLDEST_STAMP): pyproject.toml
	$(PYTHON) -m venv $(OLDEST_VENV)
	$(OLDEST_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(OLDEST_VENV)/bin/python -m pip install --quiet -e ".[usd,schema,plan]" "usd-core==$(OLDEST_USD).*" \
		pytest pytest-timeout pytest-xdist hypothesis
	touch $(OLDEST_STAMP)

# schemas/usdGrip/generated* are written by NEWEST_USD's usdGenSchema (its output changes
# between releases): their staleness check runs in `make test` and skips here, saying so.
test-oldest-usd: $(OLDEST_STAMP)
	$(call check_usd,$(OLDEST_VENV),$(OLDEST_USD))
	$(OLDEST_VENV)/bin/python -m pytest -n 2 -q -p no:cacheprovider $(OLDEST_TESTS)

demo: $(STAMP)
	bash examples/demo.sh

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

schema: $(STAMP)
	$(BIN)/python -m usdgrip.schema_gen

bench: $(STAMP)
	for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf $(VENV) $(OLDEST_VENV) build dist .pytest_cache .ruff_cache
