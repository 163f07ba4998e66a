"""The HTTP side of the test OpenAI-compatible server: a threading HTTP server and its request handler."""

from __future__ import annotations

import base64
import json
import socket
import struct
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING

from tests.openai_stub_protocol import Call, pieces, stub_reply, stub_vector, text_of, words

if TYPE_CHECKING:
    from tests.openai_stub import OpenAIStub


class StubServer(ThreadingHTTPServer):
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
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    404: ("invalid_request_error", "unknown_url"),
    429: ("requests", "rate_limit_exceeded"),
}


class StubHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "OpenAIStub/1.0"
    server: StubServer

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
        stub.record(Call(method, path, self.headers.get("Authorization"), body))
        try:
            if stub.sleep(stub.delay):
                self.close_connection = True
                return
            failure = stub.take_failure()
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
            "prompt_tokens": sum(words(text_of(m.get("content"))) for m in messages if isinstance(m, dict)),
            "completion_tokens": words(reply),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        ident, created, model = f"chatcmpl-{uuid.uuid4().hex[:16]}", int(time.time()), body["model"]
        if not body.get("stream"):
            message = {"role": "assistant", "content": reply, "refusal": None}
            finish = "stop"
            offered = {t.get("function", {}).get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
            if stub.tool_call is not None and stub.tool_call[0] in offered:
                name, arguments = stub.tool_call
                message = {"role": "assistant", "content": None, "refusal": None, "tool_calls": [
                    {"id": f"call_{uuid.uuid4().hex[:12]}", "type": "function",
                     "function": {"name": name, "arguments": json.dumps(arguments)}},
                ]}
                finish = "tool_calls"
            self._send_json(
                200,
                {
                    "id": ident,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
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
            failure = stub.take_stream_failure()
            for piece in pieces(reply):
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
            if stub.sleep(stub.chunk_delay):
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
        tokens = sum(words(text) for text in inputs)
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
