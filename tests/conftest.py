"""Shared fixtures and helpers: users, API clients, live app processes (web server, Celery worker) and the browser."""

from __future__ import annotations

import os
import re
import socket
import sys
import time
from pathlib import Path

import httpx
import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from chat import turns
from evaluation.bench_live import AppProcess as BenchAppProcess

# Fixture modules are registered as plugins so test modules can request their fixtures without importing them.
pytest_plugins = ["tests.openai_stub"]
# The browser helpers assert too; rewritten, their failures show the values like the tests' own asserts.
pytest.register_assert_rewrite("tests.browser")

ROOT = Path(__file__).resolve().parent.parent
REDIS_URL = os.environ.get("DELLM_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture
def make_user(db):
    """Users with usable passwords and API tokens, for tests that sign in, call the API or need more than two users."""

    def make(username: str = "alice", password: str = "correct-horse-battery"):
        user = get_user_model().objects.create_user(username=username, password=password)
        user.raw_password = password
        user.token = Token.objects.create(user=user).key
        return user

    return make


@pytest.fixture
def user(make_user):
    """The user most tests act as."""
    return make_user("alice")


@pytest.fixture
def other_user(make_user):
    """A second user, to show that one user's data never reaches another."""
    return make_user("mallory")


def client_for(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {user.token}")
    return client


@pytest.fixture
def api(user) -> APIClient:
    """An API client authenticated with the first user's token, for the REST endpoints."""
    return client_for(user)


@pytest.fixture
def other_api(other_user) -> APIClient:
    """An API client with the second user's token, to show that the first user's data is refused to others."""
    return client_for(other_user)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class AppProcess(BenchAppProcess):
    """A real process of the app (uvicorn or a Celery worker) on the test database, its output in test-artifacts/."""

    def __init__(self, args: list[str], env: dict, log_name: str):
        super().__init__(args, env, log_name, logs=ARTIFACTS)


def app_env(**overrides) -> dict:
    from django.db import connection

    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": "dellm_site.settings",
            "DELLM_DB_NAME": connection.settings_dict["NAME"],
            "HF_HUB_OFFLINE": "1",
            "PYTHONUNBUFFERED": "1",
            "XDG_RUNTIME_DIR": env.get("XDG_RUNTIME_DIR", "/tmp"),
            # Processes the tests start load models only when a test needs them (the warm-start tests ask).
            "DELLM_WARM_AT_START": "0",
        }
    )
    env.pop("REDIS_URL", None)
    env.update({k: v for k, v in overrides.items() if v is not None})
    return env


def start_web(env: dict, log_name: str) -> tuple[AppProcess, str]:
    port = _free_port()
    app = AppProcess(
        [sys.executable, "-m", "uvicorn", "dellm_site.asgi:application", "--host", "127.0.0.1", "--port", str(port)],
        env,
        log_name,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if app.proc.poll() is not None:
            raise RuntimeError(f"the web server exited:\n{app.output()}")
        try:
            if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                return app, base
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    app.stop()
    raise RuntimeError(f"the web server did not start:\n{app.output()}")


@pytest.fixture
def live_app(transactional_db):
    """The app in its own uvicorn process (in-memory layer, in-process tasks), for real HTTP and browser clients."""
    app, base = start_web(app_env(), "web.log")
    yield base
    app.stop()


@pytest.fixture
def redis_url():
    """A clean Redis database for the broker and channel layer, so no test sees another's queued work."""
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.RedisError as exc:  # the Makefile starts Redis; say so plainly if it is missing
        pytest.fail(f"Redis is not reachable at {REDIS_URL}: {exc}")
    client.flushdb()
    yield REDIS_URL
    client.flushdb()


def start_worker(env: dict, log_name: str = "worker.log") -> AppProcess:
    return AppProcess(
        [sys.executable, "-m", "celery", "-A", "dellm_site", "worker", "--pool", "solo", "--loglevel", "INFO",
         "--without-gossip", "--without-mingle", "--without-heartbeat"],
        env,
        log_name,
    )


@pytest.fixture
def stack_factory(transactional_db, redis_url):
    """Production-shaped stacks (uvicorn + Celery workers on Redis, extra environment such as an LLM), stopped after."""
    started: list[AppProcess] = []

    def make(**overrides) -> dict:
        env = app_env(REDIS_URL=redis_url, **overrides)
        worker = start_worker(env)
        web, base = start_web(env, "web-redis.log")
        started.extend([worker, web])
        return {"base": base, "worker": worker, "web": web, "env": env}

    def add_worker(env: dict, log_name: str) -> AppProcess:
        worker = start_worker(env, log_name)
        started.append(worker)
        return worker

    make.add_worker = add_worker
    yield make
    for process in reversed(started):
        process.stop()


@pytest.fixture
def live_stack(stack_factory):
    """The production-shaped stack (uvicorn web + a Celery worker, both on Redis) with the default environment."""
    return stack_factory()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """Run the tests that use the shared browser last: once it starts, Playwright's event loop runs in this thread."""
    items.sort(key=lambda item: "chromium" in getattr(item, "fixturenames", ()))


@pytest.fixture(scope="session")
def chromium():
    """One headless Debian Chromium for the whole session, so each browser test only opens a fresh context."""
    from playwright.sync_api import sync_playwright

    from tests.browser import CHROMIUM, CHROMIUM_ARGS, require_chromium

    require_chromium()

    # Playwright's sync API keeps its event loop running in this thread, where Django would then refuse ORM calls.
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as pw:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def rows_containing(needle: str, *, whole_word: bool = False) -> dict[str, int]:
    """Every text, varchar or JSON column of every table, with how many rows contain ``needle`` (with
    ``whole_word``, only as a word of its own: "4826" inside a hash such as "...e94826fa..." is a chance run of hex
    digits, not a deleted number)."""
    from django.db import connection

    pattern = f"(^|[^[:alnum:]]){re.escape(needle)}([^[:alnum:]]|$)" if whole_word else None
    hits = {}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' "
            "AND data_type IN ('text', 'character varying', 'jsonb', 'json')"
        )
        for table, column in cursor.fetchall():
            if pattern:
                cursor.execute(f'SELECT COUNT(*) FROM "{table}" WHERE "{column}"::text ~* %s', [pattern])
            else:
                cursor.execute(f'SELECT COUNT(*) FROM "{table}" WHERE "{column}"::text ILIKE %s', [f"%{needle}%"])
            count = cursor.fetchone()[0]
            if count:
                hits[f"{table}.{column}"] = count
    return hits


def say(user, conversation, text: str):
    """Post ``text`` as ``user`` through the chat service; returns (user_message, reply, context)."""
    return turns.message_post(user=user, conversation_id=conversation.pk, content=text)
