# DeLLM: `make run` serves the app, `make test` runs the whole suite.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PORT ?= 8000
HOST ?= 127.0.0.1
export XDG_RUNTIME_DIR ?= /tmp
# The benchmark data (personas, TOFU) lives beside the project; a clone elsewhere on this machine finds it too.
export DELLM_EVAL_DATA_DIR ?= $(abspath $(firstword $(wildcard ../shared/data /work/shared/data)))

# The app runs without debug pages (DJANGO_DEBUG=1 opts in), on a signing key made once and kept in
# .data/ (SECRET_KEY, when set, wins); `make run` serves plain HTTP, so its cookies are not marked Secure.
SECRET_FILE := .data/secret_key
APP_ENV = DELLM_SECRET_KEY_FILE=$(abspath $(SECRET_FILE)) \
	SESSION_COOKIE_SECURE=$${SESSION_COOKIE_SECURE:-0} CSRF_COOKIE_SECURE=$${CSRF_COOKIE_SECURE:-0}

.PHONY: run test lint install install-test migrate superuser eval bench services browser compose clean-data help

help:
	@echo "make run   - install, migrate and serve DeLLM at http://$(HOST):$(PORT) (DJANGO_DEBUG=1 for debug pages)"
	@echo "make test  - install test tools (Chromium too), lint, and run the whole suite"
	@echo "make lint  - check the code with ruff"

$(VENV)/.installed: requirements.txt constraints.txt scripts/build_pgvector.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt -c constraints.txt
	scripts/build_pgvector.sh $(PY)
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed requirements-test.txt
	$(PY) -m pip install --quiet -r requirements-test.txt -c constraints.txt
	touch $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test

$(SECRET_FILE):
	mkdir -p $(@D)
	umask 077 && $(PYTHON) -c 'import secrets; print(secrets.token_urlsafe(50))' > $@

migrate: install $(SECRET_FILE)
	$(APP_ENV) $(PY) manage.py migrate --noinput

superuser: migrate
	$(APP_ENV) $(PY) manage.py createsuperuser

# Static files are collected for WhiteNoise's manifest storage; interrupted deletions are finished by a
# background thread of the server (DELLM_FORGET_RESUME_AT_START), so start-up never waits for them.
run: migrate
	$(APP_ENV) $(PY) manage.py collectstatic --noinput -v0
	@echo
	@echo "  DeLLM is starting at http://$(HOST):$(PORT)"
	@echo "  Open it and click 'Sign up' to create an account (or: make superuser, for /admin/)."
	@echo "  Offline backends: no API key needed. Set OPENAI_API_KEY to use a real model. Ctrl+C stops."
	@echo
	$(APP_ENV) DELLM_FORGET_RESUME_AT_START=1 DELLM_TOKEN_DELAY=$${DELLM_TOKEN_DELAY:-0.02} $(PY) -m uvicorn dellm_site.asgi:application --host $(HOST) --port $(PORT) --no-access-log

# Debian's Chromium for the browser tests; Redis for the broker/channel-layer tests.
browser:
	@test -x /usr/bin/chromium || { (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || echo "warning: could not install chromium"; }

# Debian's docker-compose validates docker-compose.yml (no engine is needed for `config`).
compose:
	@command -v docker-compose >/dev/null || { (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-compose >/dev/null) || echo "warning: could not install docker-compose"; }

services:
	@scripts/ensure_redis.sh

lint: install-test
	$(PY) -m ruff check .

test: install-test browser compose services lint
	$(PY) -m pytest

# The deletion benchmark (reports/eval.json, eval.md, eval_fig8.png), on a database of its own,
# then the deletion-request detector (reports/intents.json, intents.md).
# --control also runs DeLLM without the deletion requests, to separate their effect from re-asking.
EVAL_ARGS ?= --control
eval: install $(SECRET_FILE)
	$(APP_ENV) DELLM_DB_NAME=dellm_eval $(PY) manage.py migrate --noinput -v0
	$(APP_ENV) DELLM_DB_NAME=dellm_eval $(PY) manage.py dellm_eval $(EVAL_ARGS)
	$(APP_ENV) DELLM_DB_NAME=dellm_eval $(PY) manage.py dellm_eval --intents

# Benchmarks run on a database of their own so they never touch your chats. The full scale (default) loads
# its 1.1M-item dataset once into dellm_bench_scale_full and reuses it; BENCH_ARGS=--quick uses ~25k items.
bench: install $(SECRET_FILE)
	$(APP_ENV) DELLM_DB_NAME=dellm_bench $(PY) manage.py migrate --noinput -v0
	$(APP_ENV) DELLM_DB_NAME=dellm_bench $(PY) manage.py dellm_bench $(BENCH_ARGS)

clean-data:
	rm -rf .data/pg
