"""Live benchmarks: the chat as a user meets it, on real server processes.

- ``first_turn_after_start_ms``: a server is started (uvicorn, as ``make run`` starts it); the first chat turn is
  sent as soon as it accepts connections. Baseline: the same with the warm start off (``DELLM_WARM_AT_START=0``).
- ``turn_overhead_p50_ms``: a chat turn's server time with an instant LLM, through ``chat.turns`` on a history of
  ~1,000 items, with its tasks queued (not run), and where the time goes, per stage.
- ``ws_turns_per_s``: 50 websocket clients at once against a real server on the Redis channel layer with a Celery
  worker, each sending several turns; every reply must arrive and be stored.

``live_benchmarks(quick=..., log=...)`` returns ``{NAME: {value, unit, p50, p95, params, baseline?}}`` entries in
the shape of ``reports/bench.json``; ``manage.py dellm_bench --live`` merges them into it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from unittest import mock

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.test import Client
from django.test.utils import override_settings

ROOT = Path(settings.BASE_DIR)
INSTANT_LLM = {"BACKEND": "evaluation.bench.instant.InstantLLM", "OPTIONS": {}}
TOPICS = ["cooking", "football", "jazz", "gardening", "chess", "hiking", "photography", "astronomy", "sailing"]


def _quantile(runs: list[float], q: float) -> float:
    ordered = sorted(runs)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def _entry(runs: list[float], unit: str = "ms", **params) -> dict:
    p50 = statistics.median(runs)
    return {"value": round(p50, 2), "unit": unit, "p50": round(p50, 2), "p95": round(_quantile(runs, 0.95), 2),
            "params": {"runs": len(runs), **params}}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _app_env(**overrides: str | None) -> dict:
    """The environment of a server or worker process on this database (the benchmark's own)."""
    env = dict(os.environ)
    env.update({"DJANGO_SETTINGS_MODULE": "dellm_site.settings", "DELLM_DB_NAME": connection.settings_dict["NAME"],
                "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1", "DELLM_TOKEN_DELAY": "0"})
    env.pop("REDIS_URL", None)
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


class AppProcess:
    """A process of the app (uvicorn or a Celery worker), its output kept in ``logs`` (reports/live/ by default).
    The test suite starts its servers and workers with it too."""

    def __init__(self, args: list[str], env: dict, log_name: str, logs: Path | None = None):
        logs = logs or ROOT / "reports" / "live"
        logs.mkdir(parents=True, exist_ok=True)
        self.log_path = logs / log_name
        self.log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def output(self) -> str:
        self.log.flush()
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def _server(env: dict, log_name: str) -> tuple[AppProcess, str, float]:
    """Start uvicorn as ``make run`` does; return it, its base URL and the ms until it answered /healthz (any
    status: with workers, /healthz says 503 while they are still starting)."""
    import httpx

    port = _free_port()
    server = AppProcess([sys.executable, "-m", "uvicorn", "dellm_site.asgi:application", "--host", "127.0.0.1",
                       "--port", str(port), "--no-access-log"], env, log_name)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            output = server.output()
            server.stop()
            raise RuntimeError(f"the server exited:\n{output}")
        try:
            httpx.get(f"{base}/healthz", timeout=5)
            return server, base, (time.perf_counter() - server.started) * 1000
        except httpx.HTTPError:
            pass
        time.sleep(0.02)
    output = server.output()
    server.stop()
    raise RuntimeError(f"the server did not start:\n{output}")


def _models_ready(base: str, timeout: float = 300) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if httpx.get(f"{base}/healthz", timeout=30).json().get("models") in ("ready", "failed"):
            return
        time.sleep(0.2)


def _user(username: str):
    """A fresh benchmark user with an API token and a conversation."""
    from rest_framework.authtoken.models import Token

    from chat.models import Conversation

    User = get_user_model()
    User.objects.filter(username=username).delete()
    user = User.objects.create_user(username=username, password="bench-password-123")
    user.token = Token.objects.create(user=user).key
    user.conversation = Conversation.objects.create(owner=user, title="bench")
    return user


# --- first turn after start -----------------------------------------------------------------------------------

def first_turn_after_start(*, runs: int, log: Callable[[str], object], baseline: bool = True) -> dict:
    """Start a server, send one chat turn the moment it answers; warm start on, and off (the baseline, unless
    ``baseline`` is False)."""
    import httpx

    user = _user("bench-live-first")
    results: dict[str, dict[str, list[float]]] = {}
    for mode, warm in (("warm", "1"), ("cold", "0"))[: 2 if baseline else 1]:
        got = results[mode] = defaultdict(list)
        for run in range(runs):
            server, base, ready_ms = _server(_app_env(DELLM_WARM_AT_START=warm), f"first-turn-{mode}.log")
            try:
                started = time.perf_counter()
                response = httpx.post(
                    f"{base}/api/conversations/{user.conversation.pk}/messages/",
                    headers={"Authorization": f"Token {user.token}"},
                    json={"content": f"I keep bees in my garden, run {run}."},
                    timeout=120,
                )
                got["turn_ms"].append((time.perf_counter() - started) * 1000)
                assert response.status_code == 201, response.text
                got["ready_ms"].append(ready_ms)
                models = httpx.get(f"{base}/healthz", timeout=30).json().get("models")
                got["models_loaded_at_turn_end"].append(float(models == "ready"))
            finally:
                server.stop()
            log(f"  first turn ({mode} start): ready {ready_ms:.0f} ms, turn {got['turn_ms'][-1]:.0f} ms")
    warm = results["warm"]
    entry = _entry(warm["turn_ms"], measures="the first chat turn (REST), sent the moment the server answers",
                   time_to_ready_ms=round(statistics.median(warm["ready_ms"]), 1),
                   models_ready_by_turn_end=sum(warm["models_loaded_at_turn_end"]) / len(warm["turn_ms"]),
                   server="uvicorn dellm_site.asgi:application, in-memory layer, instant LLM")
    if "cold" in results:
        cold = results["cold"]
        entry["params"].update(time_to_ready_cold_ms=round(statistics.median(cold["ready_ms"]), 1),
                               baseline="the same with DELLM_WARM_AT_START=0 (the model loads on the first turn)")
        entry["baseline"] = round(statistics.median(cold["turn_ms"]), 2)
        entry["ratio"] = round(entry["baseline"] / entry["value"], 2) if entry["value"] else None
    return entry


# --- turn overhead --------------------------------------------------------------------------------------------

def _history(user, *, items: int) -> None:
    """``items`` stored items: statements and their replies, embedded, each reply with its edge, as turns leave them."""
    from chat.models import Message, Role
    from dellm_site.ai.embedding import get_embedder
    from memory.models import Edge, Embedding

    embedder = get_embedder()
    texts = [f"I enjoy {TOPICS[i % len(TOPICS)]} on day {i} with friend number {i * 7 % 500}."
             for i in range(items // 2)]
    vectors = embedder.embed(texts)
    ack = embedder.embed_one("Noted, I will remember that.").tolist()
    edges, embeddings = [], []
    with transaction.atomic():
        for text, vector in zip(texts, vectors, strict=True):
            asked = Message.objects.create(conversation=user.conversation, owner=user, role=Role.USER, content=text)
            reply = Message.objects.create(conversation=user.conversation, owner=user, role=Role.ASSISTANT,
                                           content="Noted, I will remember that.", question=asked)
            edges.append(Edge(src_id=asked.pk, dst_id=reply.pk, owner=user))
            embeddings += [Embedding(node=asked, owner=user, vector=vector.tolist(), backend=embedder.name),
                           Embedding(node=reply, owner=user, vector=ack, backend=embedder.name)]
        Edge.objects.bulk_create(edges)
        Embedding.objects.bulk_create(embeddings, batch_size=1000)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


@contextlib.contextmanager
def _stage_timers(stages: dict[str, float]) -> Iterator[None]:
    """Time the stages of ``chat.turns`` by wrapping the names it calls (restored on exit)."""
    from chat import turns

    def timed(name: str, fn: Callable) -> Callable:
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                stages[name] += (time.perf_counter() - started) * 1000
        return wrapper

    def timed_llm(get_llm: Callable) -> Callable:
        class Timed:
            def __init__(self, llm):
                self.llm = llm

            def stream(self, prompt):
                # A backend may compute its answer when asked (the local one does), before the first piece.
                started = time.perf_counter()
                iterator = iter(self.llm.stream(prompt))
                stages["llm (instant)"] += (time.perf_counter() - started) * 1000
                while True:
                    started = time.perf_counter()
                    try:
                        piece = next(iterator)
                    except StopIteration:
                        return
                    finally:
                        stages["llm (instant)"] += (time.perf_counter() - started) * 1000
                    yield piece

            def __getattr__(self, name):
                return getattr(self.llm, name)
        return lambda: Timed(get_llm())

    def timed_embedder(get_embedder: Callable) -> Callable:
        class Timed:
            def __init__(self, embedder):
                self.embedder = embedder

            def embed_one(self, text):
                return timed("embed question", self.embedder.embed_one)(text)

            def __getattr__(self, name):
                return getattr(self.embedder, name)
        return lambda: Timed(get_embedder())

    wrapped = {
        "conversation_get": timed("load conversation", turns.conversation_get),
        "_recognise": timed("recognise forget request", turns._recognise),
        "_user_message_store": timed("store question (+ its embedding)", turns._user_message_store),
        "context_retrieve": timed("retrieve context", turns.context_retrieve),
        "edges_record": timed("record edges", turns.edges_record),
        "_reply_store": timed("store reply (edges, queue tasks)", turns._reply_store),
        "facts_of_message": timed("memory note", turns.facts_of_message),
        "get_llm": timed_llm(turns.get_llm),
        "get_embedder": timed_embedder(turns.get_embedder),
    }
    with mock.patch.multiple(turns, **wrapped):
        yield


@contextlib.contextmanager
def tasks_queued() -> Iterator[str]:
    """The turn's tasks are sent to the broker (as with workers), not run inside the turn; without REDIS_URL the
    broker is Celery's in-process memory transport, so sending costs what serialising and publishing cost."""
    from dellm_site.celery import app

    eager = app.conf.task_always_eager
    app.conf.task_always_eager = False
    try:
        yield app.conf.broker_url.split("://")[0]
    finally:
        app.conf.task_always_eager = eager


def turn_overhead(*, items: int, turns_count: int, log: Callable[[str], object]) -> dict:
    """Chat turns through ``chat.turns.message_post`` with an instant LLM on a history of ``items`` items."""
    from chat import turns

    user = _user("bench-live-turns")
    log(f"  history of {items} items...")
    _history(user, items=items)
    questions = [f"What do I enjoy about {TOPICS[i % len(TOPICS)]} on day {i * 3}?" if i % 2 else
                 f"I went {TOPICS[i % len(TOPICS)]} again on day {i}." for i in range(turns_count)]
    stages: dict[str, float] = defaultdict(float)
    runs = []
    with override_settings(DELLM_LLM=INSTANT_LLM), tasks_queued() as broker:
        turns.message_post(user=user, conversation_id=user.conversation.pk, content="Warm-up question?")
        with _stage_timers(stages):
            for question in questions:
                started = time.perf_counter()
                result = turns.message_post(user=user, conversation_id=user.conversation.pk, content=question)
                runs.append((time.perf_counter() - started) * 1000)
                assert result.reply is not None
    eager_runs = []
    with override_settings(DELLM_LLM=INSTANT_LLM):
        for question in questions[: max(3, turns_count // 4)]:
            started = time.perf_counter()
            turns.message_post(user=user, conversation_id=user.conversation.pk, content=question + " (in-process)")
            eager_runs.append((time.perf_counter() - started) * 1000)
    per_stage = {name: round(total / len(runs), 2) for name, total in sorted(stages.items(), key=lambda kv: -kv[1])}
    log(f"  turn overhead p50 {statistics.median(runs):.1f} ms; per stage (mean ms): {per_stage}")
    return _entry(runs, measures="server time of one chat turn (chat.turns.message_post), instant LLM, tasks queued",
                  history_items=items, broker=broker, stage_mean_ms=per_stage,
                  stages_note="stages nest: 'store reply' includes 'record edges'",
                  in_process_tasks_p50_ms=round(statistics.median(eager_runs), 2),
                  in_process_note="without workers the turn also runs its tasks (embed question and reply, "
                                  "extract facts) before it returns")


# --- concurrent websocket turns -------------------------------------------------------------------------------

def _session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def _say(client: int, turn: int) -> str:
    return f"My code {client}-{turn} is blue." if turn % 2 == 0 else f"What is my code {client}-{turn - 1}?"


async def _ws_client(base: str, client: int, cookie: str, conversation_id: int, turns_each: int) -> dict:
    from websockets.asyncio.client import connect

    url = base.replace("http://", "ws://") + f"/ws/chat/{conversation_id}/"
    latencies, replies, errors = [], [], []
    async with connect(url, additional_headers={"Cookie": cookie, "Origin": base}, open_timeout=60) as ws:
        for turn in range(turns_each):
            started = time.perf_counter()
            await ws.send(json.dumps({"type": "message", "content": _say(client, turn)}))
            while True:
                try:
                    frame = json.loads(await asyncio.wait_for(ws.recv(), 120))
                except TimeoutError:
                    errors.append("timeout")
                    break
                if frame["type"] == "reply":
                    latencies.append((time.perf_counter() - started) * 1000)
                    replies.append(frame["message"]["id"])
                    break
                if frame["type"] == "error":
                    errors.append(frame.get("code"))
                    break
    return {"latencies": latencies, "replies": replies, "errors": errors}


def ws_turns(*, clients: int, turns_each: int, log: Callable[[str], object]) -> dict:
    """``clients`` websocket clients at once, ``turns_each`` turns each, on Redis with a worker."""
    import redis

    from chat.models import Message, Role

    redis_url = os.environ.get("DELLM_BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
    try:
        redis.Redis.from_url(redis_url).flushdb()
    except redis.RedisError as exc:
        log(f"  ws_turns_per_s: Redis unreachable at {redis_url} ({exc}); not measured")
        return {"value": None, "unit": "turns/s", "params": {"error": f"Redis unreachable at {redis_url}"}}
    users = [_user(f"bench-live-ws{n}") for n in range(clients)]
    cookies = [_session_cookie(user) for user in users]
    env = _app_env(REDIS_URL=redis_url, DJANGO_SETTINGS_MODULE="evaluation.bench.live_settings")
    worker = AppProcess([sys.executable, "-m", "celery", "-A", "dellm_site", "worker", "--pool", "solo", "--loglevel",
                       "WARNING", "--without-gossip", "--without-mingle", "--without-heartbeat"], env, "ws-worker.log")
    server = None
    try:
        server, base, _ = _server(env, "ws-server.log")
        # Throughput, not start-up: the clients start once the server has its models (first_turn measures that).
        _models_ready(base)

        async def run_all():
            return await asyncio.gather(*(
                _ws_client(base, n, cookies[n], users[n].conversation.pk, turns_each) for n in range(clients)
            ))

        started = time.perf_counter()
        results = asyncio.run(run_all())
        elapsed = time.perf_counter() - started
    finally:
        if server is not None:
            server.stop()
        worker.stop()
        redis.Redis.from_url(redis_url).flushdb()
    expected = clients * turns_each
    latencies = [ms for r in results for ms in r["latencies"]]
    received = sum(len(r["replies"]) for r in results)
    errors = [e for r in results for e in r["errors"]]
    conversations = [u.conversation.pk for u in users]
    stored_questions = Message.objects.filter(conversation_id__in=conversations, role=Role.USER).count()
    stored_replies = set(
        Message.objects.filter(conversation_id__in=conversations, role=Role.ASSISTANT).values_list("pk", flat=True)
    )
    replied = {pk for r in results for pk in r["replies"]}
    lost = expected - len(replied & stored_replies)
    value = received / elapsed
    log(f"  {received}/{expected} replies in {elapsed:.1f} s: {value:.1f} turns/s, lost {lost}, errors {len(errors)}")
    return {
        "value": round(value, 2), "unit": "turns/s",
        "p50": round(statistics.median(latencies), 2) if latencies else None,
        "p95": round(_quantile(latencies, 0.95), 2) if latencies else None,
        "params": {"clients": clients, "turns_per_client": turns_each, "turns": expected,
                   "elapsed_s": round(elapsed, 2),
                   "latency_unit": "ms (send to reply frame)", "lost": lost, "errors": len(errors),
                   "stored_questions": stored_questions, "stored_replies": len(stored_replies),
                   "server": "uvicorn, Redis channel layer, one Celery worker (solo pool), instant LLM"},
    }


def live_benchmarks(*, quick: bool, log: Callable[[str], object] = print) -> dict[str, dict]:
    """Every live benchmark, small with ``quick`` (well under a minute), in bench.json's shape."""
    results = {}
    log("first turn after start...")
    results["first_turn_after_start_ms"] = first_turn_after_start(runs=1 if quick else 3, baseline=not quick, log=log)
    log("turn overhead...")
    results["turn_overhead_p50_ms"] = turn_overhead(items=200 if quick else 1000, turns_count=10 if quick else 60,
                                                    log=log)
    log("concurrent websocket turns...")
    results["ws_turns_per_s"] = ws_turns(clients=10 if quick else 50, turns_each=2 if quick else 6, log=log)
    return results
