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
and every context item the stub was given. Set ``stub.reply`` to a string to answer that instead.

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

import base64
import hashlib
import json
import re
import socket
import struct
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import NamedTuple

import pytest

STUB_API_KEY = "sk-stub-0123456789"
REPLY_PREFIX = "STUB saw: "
_ITEM_LINE = re.compile(r"^\[\d+\] (.*)$")


class Call(NamedTuple):
    method: str
    path: str
    authorization: str | None
    body: dict


def _text_of(content) -> str:
    """The text of a message's ``content``: a string, or a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def stub_reply(messages: list[dict]) -> str:
    """The stub's default reply to a chat request with these ``messages`` (see the module docstring)."""
    user_texts = [_text_of(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    text = user_texts[-1] if user_texts else ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    reply = REPLY_PREFIX + (lines[-1] if lines else "")
    items = [match.group(1) for line in lines if (match := _ITEM_LINE.match(line))]
    if items:
        reply += " | past items: " + " ; ".join(items)
    return reply


def stub_vector(text: str, dimensions: int) -> list[float]:
    """A deterministic, not normalised vector for ``text``: floats in [-1, 1) from SHA-256 blocks."""
    values: list[float] = []
    counter = 0
    while len(values) < dimensions:
        block = hashlib.sha256(f"{counter}:{text}".encode()).digest()
        values.extend((b - 128) / 128.0 for b in block)
        counter += 1
    return values[:dimensions]


def _pieces(text: str) -> list[str]:
    """The reply cut into words, each with the whitespace that follows it; they join back to ``text``."""
    return [piece for piece in re.findall(r"\S*\s*", text) if piece] or [text]


def _words(text: str) -> int:
    return len(text.split())


class OpenAIStub:
    """The server and its knobs. Use as a context manager, or through the ``openai_stub`` fixture."""

    def __init__(self, api_key: str = STUB_API_KEY, embedding_dimensions: int = 8, model_ids=("stub-model",)):
        self.api_key = api_key
        self.embedding_dimensions = embedding_dimensions
        self.model_ids = list(model_ids)
        self.reply: str | None = None
        self.delay = 0.0
        self.chunk_delay = 0.0
        self.calls: list[Call] = []
        self._failures: list[tuple[int, str]] = []
        self._stream_failures: list[str] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _Server(("127.0.0.1", 0), _Handler)
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
    def _record(self, call: Call) -> None:
        with self._lock:
            self.calls.append(call)

    def _take_failure(self) -> tuple[int, str] | None:
        with self._lock:
            return self._failures.pop(0) if self._failures else None

    def _take_stream_failure(self) -> str | None:
        with self._lock:
            return self._stream_failures.pop(0) if self._stream_failures else None

    def _sleep(self, seconds: float) -> bool:
        """Wait ``seconds`` (woken early by ``close``); True when the stub is closing."""
        return self._stopping.wait(seconds) if seconds > 0 else self._stopping.is_set()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # Do not wait for handler threads on close: a client may hold a keep-alive connection open for as
    # long as it lives. ``close_connections`` ends them instead.
    block_on_close = False
    stub: OpenAIStub

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()

    def close_connections(self) -> None:
        with self.connections_lock:
            connections = list(self.connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def handle_error(self, request, client_address):
        # A client that gave up (a timeout test) closes its socket; that is not worth a traceback.
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "unknown_url"),
    429: ("requests", "rate_limit_exceeded"),
}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "OpenAIStub/1.0"
    server: _Server

    timeout = 60  # seconds an idle keep-alive connection is kept

    def setup(self):
        super().setup()
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def finish(self):
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format, *args):  # quiet: tests read ``stub.calls`` instead
        pass

    @property
    def stub(self) -> OpenAIStub:
        return self.server.stub

    # --- plumbing ---------------------------------------------------------------------------
    def _read_body(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return {}
        try:
            body = json.loads(raw)
        except ValueError:
            return {"_unparsed": raw.decode("utf-8", "replace")}
        return body if isinstance(body, dict) else {"_body": body}

    def _send_json(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-request-id", f"req_{uuid.uuid4().hex[:12]}")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _send_error(self, status: int, message: str) -> None:
        kind, code = _ERROR_TYPES.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
        self._send_json(status, {"error": {"message": message, "type": kind, "param": None, "code": code}})

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _send_event(self, payload) -> None:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        self._write_chunk(f"data: {data}\n\n".encode())

    # --- dispatch ---------------------------------------------------------------------------
    def do_GET(self):
        self._handle("GET", {})

    def do_POST(self):
        self._handle("POST", self._read_body())

    def _handle(self, method: str, body: dict) -> None:
        stub = self.stub
        path = self.path.split("?", 1)[0].rstrip("/")
        stub._record(Call(method, path, self.headers.get("Authorization"), body))
        try:
            if stub._sleep(stub.delay):
                self.close_connection = True
                return
            failure = stub._take_failure()
            if failure is not None:
                self._send_error(*failure)
                return
            if self.headers.get("Authorization") != f"Bearer {stub.api_key}":
                self._send_error(401, "Incorrect API key provided. You can find your API key in your account settings.")
                return
            route = {
                ("POST", "/v1/chat/completions"): self._chat,
                ("POST", "/v1/embeddings"): self._embeddings,
                ("GET", "/v1/models"): self._models,
            }.get((method, path))
            if route is None:
                self._send_error(404, f"Unknown request URL: {method} {path}.")
                return
            route(body)
        except (ConnectionError, TimeoutError):
            self.close_connection = True  # the client went away (e.g. it timed out); nothing to answer

    # --- endpoints --------------------------------------------------------------------------
    def _chat(self, body: dict) -> None:
        messages = body.get("messages")
        if not body.get("model") or not isinstance(messages, list) or not messages:
            self._send_error(400, "'model' and a non-empty 'messages' list are required.")
            return
        stub = self.stub
        reply = stub.reply if stub.reply is not None else stub_reply(messages)
        usage = {
            "prompt_tokens": sum(_words(_text_of(m.get("content"))) for m in messages if isinstance(m, dict)),
            "completion_tokens": _words(reply),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        ident, created, model = f"chatcmpl-{uuid.uuid4().hex[:16]}", int(time.time()), body["model"]
        if not body.get("stream"):
            self._send_json(
                200,
                {
                    "id": ident,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply, "refusal": None},
                            "logprobs": None,
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": usage,
                },
            )
            return

        def chunk(delta: dict, finish_reason=None) -> dict:
            return {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
            }

        def events() -> Iterator[dict | str]:
            yield chunk({"role": "assistant", "content": ""})
            failure = stub._take_stream_failure()
            for piece in _pieces(reply):
                yield chunk({"content": piece})
                if failure is not None:
                    yield {"error": {"message": failure, "type": "server_error", "param": None, "code": None}}
                    return
            yield chunk({}, "stop")
            if (body.get("stream_options") or {}).get("include_usage"):
                yield {**chunk({}), "choices": [], "usage": usage}
            yield "[DONE]"

        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for event in events():
            if stub._sleep(stub.chunk_delay):
                self.close_connection = True
                return
            self._send_event(event)
        self._write_chunk(b"")  # the zero-length chunk ends the body

    def _embeddings(self, body: dict) -> None:
        inputs = body.get("input")
        if isinstance(inputs, str):
            inputs = [inputs]
        if not body.get("model") or not isinstance(inputs, list) or not inputs:
            self._send_error(400, "'model' and a non-empty 'input' are required.")
            return
        if not all(isinstance(text, str) and text for text in inputs):
            self._send_error(400, "Every input must be a non-empty string (token arrays are not supported here).")
            return
        dimensions = body.get("dimensions") or self.stub.embedding_dimensions
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(inputs):
            vector = stub_vector(text, dimensions)
            if as_base64:
                encoded = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
                data.append({"object": "embedding", "index": index, "embedding": encoded})
            else:
                data.append({"object": "embedding", "index": index, "embedding": vector})
        tokens = sum(_words(text) for text in inputs)
        self._send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def _models(self, body: dict) -> None:
        created = int(time.time())
        models = [{"id": m, "object": "model", "created": created, "owned_by": "stub"} for m in self.stub.model_ids]
        self._send_json(200, {"object": "list", "data": models})


@pytest.fixture
def openai_stub() -> Iterator[OpenAIStub]:
    """A running OpenAI-compatible stub server, so the OpenAI backends are tested over real HTTP without a network."""
    stub = OpenAIStub()
    try:
        yield stub
    finally:
        stub.close()
