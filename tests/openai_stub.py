"""A small, real OpenAI-compatible HTTP server for tests, and the ``openai_stub`` fixture.

The server is the standard library's ``ThreadingHTTPServer`` running in a background thread on
``127.0.0.1`` (a free port). It speaks enough of the OpenAI protocol for the official ``openai``
client:

- ``POST /v1/chat/completions``: a JSON ``chat.completion`` with ``usage``; with ``"stream": true``,
  server-sent events ``data: {chat.completion.chunk}`` ... ``data: [DONE]`` (a first chunk with the
  role, one chunk per word of the reply, a last chunk with ``finish_reason: "stop"``, and a usage
  chunk with empty ``choices`` when ``stream_options.include_usage`` is set).
- ``POST /v1/embeddings``: one deterministic vector per input, derived from a SHA-256 of the text
  (not normalised, the way real servers may answer), ``embedding_dimensions`` long unless the request
  asks for ``dimensions``. ``encoding_format`` ``"float"`` gives lists of floats, ``"base64"`` (what
  the official client asks for by default) gives little-endian float32 bytes in base64.
- ``GET /v1/models``: a list holding ``model_ids``.

The reply (what ``stub_reply`` computes from the request's ``messages``)::

    "STUB saw: " + <the last non-empty line of the last user message>

and, when that message holds numbered past items (lines ``[n] text``, the shape of
``dellm_site.ai.prompts.Prompt.render``), ``" | past items: "`` + the items' texts joined by ``" ; "``.
For a DeLLM prompt the last line is ``"User message: <question>"``, so the reply names the question
and every context item the stub was given. Set ``stub.reply`` to a string to answer that instead, and
``stub.tool_call = (name, arguments)`` to answer a non-streamed request offering that tool with a call.

Every request is recorded before anything else happens (even one that is then refused):
``stub.requests`` is the list of JSON bodies (``{}`` for a GET), ``stub.calls`` the list of
``Call(method, path, authorization, body)``. ``stub.chat_requests`` and ``stub.embedding_requests``
filter the bodies by endpoint.

Misbehaviour on demand:

- a request whose header is not ``Authorization: Bearer <stub.api_key>`` gets a 401 with an
  OpenAI-shaped error (``{"error": {"message", "type", "param", "code"}}``);
- ``stub.fail_next(status, times=1, message=None)``: the next ``times`` requests get that status and
  an OpenAI-shaped error (note that the client retries 408/409/429/5xx unless ``max_retries=0``);
- ``stub.fail_next_stream(message)``: the next streamed reply sends its first word, then an
  ``data: {"error": {...}}`` event (what vLLM and others do when generation fails mid-stream);
- ``stub.delay``: seconds to wait before answering each request (to exercise client timeouts);
  ``stub.chunk_delay``: seconds to wait before each streamed chunk.

Closing the stub wakes every waiting handler, so a long ``delay`` never holds up the test run.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from tests.openai_stub_protocol import REPLY_PREFIX, STUB_API_KEY, Call, stub_reply, stub_vector
from tests.openai_stub_server import StubHandler, StubServer

__all__ = ["REPLY_PREFIX", "STUB_API_KEY", "Call", "OpenAIStub", "openai_stub", "stub_reply", "stub_vector"]


class OpenAIStub:
    """The server and its knobs. Use as a context manager, or through the ``openai_stub`` fixture."""

    def __init__(self, api_key: str = STUB_API_KEY, embedding_dimensions: int = 8, model_ids=("stub-model",)):
        self.api_key = api_key
        self.embedding_dimensions = embedding_dimensions
        self.model_ids = list(model_ids)
        self.reply: str | None = None
        # (function name, arguments): answer a non-streamed request that offers that tool with a call to it.
        self.tool_call: tuple[str, dict] | None = None
        self.delay = 0.0
        self.chunk_delay = 0.0
        self.calls: list[Call] = []
        self._failures: list[tuple[int, str]] = []
        self._stream_failures: list[str] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = StubServer(("127.0.0.1", 0), StubHandler)
        self._server.stub = self
        self.port = self._server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), name="openai-stub", daemon=True
        )
        self._thread.start()

    # --- what the tests look at -------------------------------------------------------------
    @property
    def requests(self) -> list[dict]:
        with self._lock:
            return [call.body for call in self.calls]

    @property
    def chat_requests(self) -> list[dict]:
        with self._lock:
            return [call.body for call in self.calls if call.path.endswith("/chat/completions")]

    @property
    def embedding_requests(self) -> list[dict]:
        with self._lock:
            return [call.body for call in self.calls if call.path.endswith("/embeddings")]

    # --- misbehaviour -----------------------------------------------------------------------
    def fail_next(self, status: int, times: int = 1, message: str | None = None) -> None:
        """Answer the next ``times`` requests with ``status`` and an OpenAI-shaped error body."""
        with self._lock:
            self._failures.extend([(status, message or f"Stub failure {status}.")] * times)

    def fail_next_stream(self, message: str = "The stub failed while generating.") -> None:
        """Break the next streamed reply after its first word with an in-stream error event."""
        with self._lock:
            self._stream_failures.append(message)

    def reset(self) -> None:
        with self._lock:
            self.calls.clear()
            self._failures.clear()
            self._stream_failures.clear()
        self.delay = self.chunk_delay = 0.0
        self.reply = None
        self.tool_call = None

    # --- life cycle -------------------------------------------------------------------------
    def close(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.close_connections()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> OpenAIStub:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- used by the handler ----------------------------------------------------------------
    def record(self, call: Call) -> None:
        with self._lock:
            self.calls.append(call)

    def take_failure(self) -> tuple[int, str] | None:
        with self._lock:
            return self._failures.pop(0) if self._failures else None

    def take_stream_failure(self) -> str | None:
        with self._lock:
            return self._stream_failures.pop(0) if self._stream_failures else None

    def sleep(self, seconds: float) -> bool:
        """Wait ``seconds`` (woken early by ``close``); True when the stub is closing."""
        return self._stopping.wait(seconds) if seconds > 0 else self._stopping.is_set()


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    """A running OpenAI-compatible stub server, so the OpenAI backends are tested over real HTTP without a network."""
    stub = OpenAIStub()
    try:
        yield stub
    finally:
        stub.close()
