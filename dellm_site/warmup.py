"""Warm start: load what the first chat turn needs (the embedding model above all: a few hundred milliseconds in
numpy, several seconds through sentence-transformers and torch) when a server or worker process starts, in a
background thread, so the process answers at once and the first message does not wait for the load.

One load per process: ``warm_up_in_background`` starts the thread at most once, and a turn that arrives while
the model is still loading waits for that same load (the embedder loads under its own lock), never a second
one. The web server starts it from ``dellm_site.asgi`` (``DELLM_WARM_AT_START``), a Celery worker from its
start-up signals (``dellm_site.celery``); management commands and the test suite do not, unless asked.
"""

from __future__ import annotations

import logging
import threading
import time

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_thread: threading.Thread | None = None
# What the apps add to the warm-up (name, action): each app registers its own lazily loaded pieces from its
# AppConfig.ready, so this module needs no app of its own (the forget-intent model and the kinds of information
# that target resolution uses register from provenance).
STEPS: list[tuple[str, object]] = []


def warm_up_register(name: str, action) -> None:
    """Add ``action`` (no arguments) to what ``warm_up`` loads, under ``name``; once per name."""
    if all(existing != name for existing, _ in STEPS):
        STEPS.append((name, action))
_state: dict[str, object] = {"status": "not started", "ms": None}


def warm_up() -> dict:
    """Load, in this thread, every lazily loaded piece of a chat turn: the embedder (with one embedding, so the
    first real one pays no first-call cost either), what the apps registered (``warm_up_register``: the
    forget-intent model, the kinds of information), the LLM backend and a database connection. Returns how long
    each took, in milliseconds."""
    from django.db import connection

    from dellm_site.ai.embedding import get_embedder
    from dellm_site.ai.llm import get_llm

    timings: dict[str, float] = {}

    def step(name: str, action) -> None:
        started = time.perf_counter()
        action()
        timings[name] = round((time.perf_counter() - started) * 1000, 1)

    step("embedder", lambda: get_embedder().embed_one("warm up"))
    for name, action in list(STEPS):
        step(name, action)
    step("llm", get_llm)
    try:
        step("database", connection.ensure_connection)
    finally:
        connection.close()  # this thread's connection; request threads open their own
    return timings


def warm_up_in_background() -> threading.Thread:
    """Start ``warm_up`` in a daemon thread, once per process (later calls return the same thread)."""
    global _thread
    with _lock:
        if _thread is not None:
            return _thread

        def run() -> None:
            started = time.perf_counter()
            try:
                timings = warm_up()
            except Exception:  # the first turn loads what is missing itself
                _state["status"] = "failed"
                logger.exception("warm-up failed; the first turn will load what it needs")
                return
            _state.update(status="ready", ms=round((time.perf_counter() - started) * 1000, 1), steps=timings)
            logger.info("warm: ready in %s ms (%s)", _state["ms"], timings)

        _state["status"] = "loading"
        _thread = threading.Thread(target=run, name="warm-up", daemon=True)
        _thread.start()
        return _thread


def warm_state() -> dict:
    """Where this process's warm-up stands: ``status`` (not started, loading, ready, failed) and ``ms``."""
    return dict(_state)
