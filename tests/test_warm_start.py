"""Warm start: a server or worker process loads the embedding model as it starts, in the background, once; a turn
that arrives meanwhile waits for that same load."""

from __future__ import annotations

import threading
import time

import httpx
import numpy as np
import pytest

from dellm_site import warmup
from dellm_site.ai import embedding
from provenance.forgetting import categories, intent, spelling
from tests.conftest import app_env, start_web, start_worker

MODEL_LOADED = "embedder: loaded"


def wait_for(predicate, timeout=120, interval=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False


class SlowModel:
    """Stands in for the embedding model: slow to construct, counted."""

    built = 0
    release = threading.Event()
    dimensions = 384

    def __init__(self, *args, **kwargs):
        type(self).built += 1
        assert self.release.wait(30), "the test never let the load finish"

    layer_count = 6

    def encode(self, texts, **kwargs):
        return np.ones((len(texts), 384), dtype=np.float32)

    def encode_layers(self, texts):
        return np.full((len(texts), self.layer_count, 384), 384 ** -0.5, dtype=np.float32)


@pytest.fixture
def fresh_warmup(monkeypatch):
    """A process that has not warmed up yet, with an embedder whose model loads only when the test says so."""
    from dellm_site.ai import minilm

    SlowModel.built = 0
    SlowModel.release = threading.Event()
    monkeypatch.setattr(minilm, "MiniLM", SlowModel)
    embedder = embedding.LocalEmbedder()
    monkeypatch.setattr(embedding, "get_embedder", lambda: embedder)
    monkeypatch.setattr(intent, "get_embedder", lambda: embedder)  # the detector reads the same model's layers
    # The kinds of information are embedded by the same model, into a cache of their own for this test only.
    monkeypatch.setattr(categories, "get_embedder", lambda: embedder)
    monkeypatch.setattr(categories, "_cache", {})
    spelling._english.cache_clear()  # built again by the warm-up
    monkeypatch.setattr(warmup, "_thread", None)
    monkeypatch.setattr(warmup, "_state", {"status": "not started", "ms": None})
    yield embedder
    SlowModel.release.set()


@pytest.mark.django_db(transaction=True)
def test_a_turn_during_the_load_waits_for_the_same_load(fresh_warmup):
    thread = warmup.warm_up_in_background()
    assert warmup.warm_up_in_background() is thread  # at most one warm-up per process
    assert wait_for(lambda: SlowModel.built == 1, timeout=30)
    assert warmup.warm_state()["status"] == "loading"

    # A turn's embedding, asked for while the model is loading, waits instead of loading a second copy.
    got: list[np.ndarray] = []
    turn = threading.Thread(target=lambda: got.append(fresh_warmup.embed_one("Where do I live?")))
    turn.start()
    turn.join(0.5)
    assert turn.is_alive() and not got

    SlowModel.release.set()
    turn.join(30)
    thread.join(30)
    assert len(got) == 1 and got[0].shape == (384,)
    assert SlowModel.built == 1
    state = warmup.warm_state()
    assert state["status"] == "ready"
    assert set(state["steps"]) == {"embedder", "intent", "kinds", "spelling", "llm", "database"}
    # The word list a mistyped target is read against is built too, not left to the first Forget in words.
    assert spelling._english.cache_info().currsize == 1


def test_the_test_process_and_the_processes_it_starts_do_not_warm_up_unless_asked(settings, transactional_db):
    assert settings.DELLM_WARM_AT_START is False
    assert app_env()["DELLM_WARM_AT_START"] == "0"


@pytest.mark.django_db(transaction=True)
def test_the_server_loads_the_model_at_start_and_answers_meanwhile(make_user):
    user = make_user("warm")
    web, base = start_web(app_env(DELLM_WARM_AT_START="1"), "web-warm.log")
    try:
        first = httpx.get(f"{base}/healthz", timeout=30)
        # The server answers while its models load; loading never makes it unhealthy.
        assert first.status_code == 200 and first.json()["models"] in ("loading", "ready"), first.text
        headers = {"Authorization": f"Token {user.token}"}
        conversation = httpx.post(f"{base}/api/conversations/", headers=headers, json={}, timeout=30).json()
        reply = httpx.post(
            f"{base}/api/conversations/{conversation['id']}/messages/",
            headers=headers,
            json={"content": "I keep bees in my garden."},
            timeout=120,
        )
        assert reply.status_code == 201, reply.text
        assert wait_for(lambda: httpx.get(f"{base}/healthz", timeout=30).json()["models"] == "ready"), web.output()
        log = web.output()
        assert "warm: ready" in log
        assert log.count(MODEL_LOADED) == 1, log  # the turn and the warm-up shared one load
    finally:
        web.stop()


@pytest.mark.django_db(transaction=True)
def test_the_server_has_the_model_without_any_request():
    web, base = start_web(app_env(DELLM_WARM_AT_START="1"), "web-warm-idle.log")
    try:
        assert wait_for(lambda: "warm: ready" in web.output()), web.output()
        assert web.output().count(MODEL_LOADED) == 1
        assert httpx.get(f"{base}/healthz", timeout=30).json()["models"] == "ready"
    finally:
        web.stop()


def test_a_server_started_with_warm_up_off_loads_nothing_at_start(transactional_db):
    web, base = start_web(app_env(DELLM_WARM_AT_START="0"), "web-cold.log")
    try:
        assert httpx.get(f"{base}/healthz", timeout=30).json()["models"] == "not started"
        assert MODEL_LOADED not in web.output()
    finally:
        web.stop()


@pytest.mark.redis
def test_a_worker_warms_up_as_it_starts(transactional_db, redis_url):
    worker = start_worker(app_env(REDIS_URL=redis_url, DELLM_WARM_AT_START="1"), "worker-warm.log")
    try:
        assert wait_for(lambda: "warm: ready" in worker.output()), worker.output()
        assert worker.output().count(MODEL_LOADED) == 1
    finally:
        worker.stop()
