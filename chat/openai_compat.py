"""DeLLM as an OpenAI-compatible endpoint: ``POST /v1/chat/completions`` and ``GET /v1/models``.

Any OpenAI client keeps working, with DeLLM's memory in between: the API key is a DeLLM token,
the last user message in ``messages`` is the new turn (earlier ones are the client's copy of the
conversation; DeLLM's own memory decides the context), and provenance and forgetting work as in
the web chat. The conversation is chosen by the ``X-DeLLM-Conversation`` header (an id), else by
the request's ``user`` field, else it is the token's own conversation. Which upstream model
answers is DeLLM's configuration; ``model`` in the request is echoed, not obeyed.
"""

from __future__ import annotations

import json
import time
import uuid

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import JsonResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions
from rest_framework.permissions import IsAuthenticated
from rest_framework.views import APIView

from dellm_site.ai.llm import get_llm
from dellm_site.errors import ApplicationError, json_error, too_large
from dellm_site.validation import text_check
from memory.selectors import node_contents

from . import services, turns

MODEL_ID = "dellm"


def _error(status: int, message: str, type_: str = "invalid_request_error", code: str | None = None, param=None):
    return JsonResponse({"error": {"message": message, "type": type_, "param": param, "code": code}}, status=status)


def _text(content) -> str:
    """Message content as text: a string, or the text parts of a list of content parts (others are skipped)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        if not all(isinstance(p, dict) and isinstance(p.get("type"), str) for p in content):
            raise ApplicationError("content parts must be objects with a string type.", code="invalid")
        texts = [p.get("text") for p in content if p["type"] == "text"]
        if not all(isinstance(t, str) for t in texts):
            raise ApplicationError("the text of a text part must be a string.", code="invalid")
        return "".join(texts)
    raise ApplicationError("message content must be a string or a list of text parts.", code="invalid")


def _optional(body: dict, name: str, kind: type, what: str):
    """``body[name]`` when it is absent, null or of ``kind``; any other type is refused with a 400."""
    value = body.get(name)
    if value is not None and not isinstance(value, kind):
        raise ApplicationError(f"{name} must be {what} when given.", code="invalid")
    if isinstance(value, str):
        text_check(value, field=name)
    return value


def _messages(body: dict) -> list[dict]:
    """The request's messages, each an object with a string role and string, list or null content."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise ApplicationError("messages must be a non-empty list.", code="invalid")
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ApplicationError("each message must be an object with a string role.", code="invalid")
        if not isinstance(message.get("content"), str | list | None):
            raise ApplicationError("message content must be a string or a list of text parts.", code="invalid")
    return messages


def _words(text: str) -> int:
    return len(text.split())


def _usage(question: str, context_ids: list[int], reply: str) -> dict:
    """Approximate token counts (whitespace words): DeLLM may sit in front of any tokenizer."""
    contents = node_contents(node_ids=context_ids)
    prompt = _words(question) + sum(_words(c) for c in contents)
    completion = _words(reply)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _forget_answer(request, preview: dict, conversation_id: int) -> str:
    url = request.build_absolute_uri(f"/c/{conversation_id}/?forget={preview['request_id']}")
    return (
        f"I have not forgotten anything yet. {len(preview['matched'])} stored item(s) match your request and "
        f"{len(preview['tainted'])} more were built from them. Review exactly what would be deleted, and confirm, "
        f"here: {url}"
    )


def _question_answer(question: dict) -> str:
    return (
        f"{question['text']} I have not stored or answered your message. If you did, say so plainly "
        "(for example \u201cforget that \u2026\u201d). If you did not, send it again with "
        "\"dellm\": {\"intent\": \"answer\"} in the request body and I will answer it."
    )


class _Turn:
    """What a client is told about one turn: the answer text and DeLLM's ids (the `dellm` object)."""

    def __init__(self, request, conversation_id: int):
        self.request, self.text, self.extension = request, "", {"conversation": conversation_id}

    def take(self, event) -> None:
        if event.type == "user_message":
            self.extension["user_message"] = event.message.pk
        elif event.type == "reply":
            self.text = event.message.content
            self.extension.update(reply=event.message.pk, context=event.context)
        elif event.type == "forget_preview":
            self.text = _forget_answer(self.request, event.preview, self.extension["conversation"])
            self.extension["forget_preview"] = event.preview["request_id"]
        elif event.type == "forget_question":
            self.text = _question_answer(event.question)
            self.extension["forget_question"] = event.question


class _OpenAIView(APIView):
    authentication_classes = []  # the API-key scheme is given where the URLs are wired; none means no access
    permission_classes = [IsAuthenticated]

    def handle_exception(self, exc):
        if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
            return _error(401, str(getattr(exc, "detail", exc)) or "Invalid API key.", code="invalid_api_key")
        if isinstance(exc, ApplicationError):
            kind = "invalid_request_error" if exc.status < 500 else "api_error"
            return _error(exc.status, exc.detail, type_=kind, code=exc.code)
        if isinstance(exc, RequestDataTooBig):
            return json_error(self.request.path, too_large())
        if isinstance(exc, exceptions.ParseError):
            return _error(400, "The request body is not valid JSON.", code="parse_error")
        if isinstance(exc, exceptions.APIException):
            return _error(exc.status_code, str(exc.detail), code=getattr(exc, "default_code", None))
        return super().handle_exception(exc)


class ModelsApi(_OpenAIView):
    @extend_schema(responses=OpenApiTypes.OBJECT, description="OpenAI-compatible model list: the one DeLLM model, "
                   "and which upstream model answers behind it.")
    def get(self, request):
        llm = get_llm()
        return JsonResponse({
            "object": "list",
            "data": [{
                "id": MODEL_ID, "object": "model", "created": 0, "owned_by": "dellm",
                "upstream": llm.name, "embedder": settings.DELLM_EMBEDDER["BACKEND"].rsplit(".", 1)[-1],
                "description": (
                    f"DeLLM memory in front of {llm.name}; the upstream model is set by DeLLM's configuration."
                ),
            }],
        })


class ChatCompletionsApi(_OpenAIView):
    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses=OpenApiTypes.OBJECT,
        description="OpenAI chat completions (stream or not) with DeLLM memory. The last user message is the new "
        "turn; choose the conversation with the X-DeLLM-Conversation header (id) or the `user` field; default: one "
        "conversation per token. Errors use the OpenAI error shape. Responses carry a `dellm` object "
        "(conversation, user_message, reply, context ids; forget_preview or forget_question for a message that asks "
        "to forget). Send `\"dellm\": {\"intent\": \"answer\"}` to have a message answered that was asked about.",
    )
    def post(self, request):
        body = request.data
        if not isinstance(body, dict):
            raise ApplicationError("The body must be a JSON object.", code="invalid")
        messages = _messages(body)
        last_user = next((m for m in reversed(messages) if m["role"] == "user"), None)
        if last_user is None:
            raise ApplicationError("messages must contain a user message (the new turn).", code="invalid")
        # Every field is checked before anything is stored: a refused request leaves no conversation behind.
        content = turns.message_validate(content=_text(last_user.get("content")))
        client_user = _optional(body, "user", str, "a string")
        model = _optional(body, "model", str, "a string") or MODEL_ID
        stream = _optional(body, "stream", bool, "true or false")
        stream_options = _optional(body, "stream_options", dict, "an object") or {}
        include_usage = _optional(stream_options, "include_usage", bool, "true or false")
        extension = _optional(body, "dellm", dict, "an object") or {}
        if extension.get("intent") not in (None, "answer"):
            raise ApplicationError('dellm.intent must be "answer" when given.', code="invalid")
        answer = extension.get("intent") == "answer"
        conversation = services.conversation_for_client(
            user=request.user,
            token=request.auth,
            conversation_id=request.headers.get("X-DeLLM-Conversation"),
            client_user=client_user,
        )
        completion_id = f"chatcmpl-{uuid.uuid4().hex}"
        created = int(time.time())
        events = turns.message_post_stream(
            user=request.user, conversation_id=conversation.pk, content=content, answer=answer
        )
        if stream:
            sse = self._sse(request, events, completion_id, created, model, content, conversation.pk, include_usage)
            response = StreamingHttpResponse(sse, content_type="text/event-stream")
            response["Cache-Control"] = "no-cache"
            response["X-Accel-Buffering"] = "no"
            return response
        return self._complete(request, events, completion_id, created, model, content, conversation.pk)

    def _complete(self, request, events, completion_id, created, model, content, conversation_id):
        turn = _Turn(request, conversation_id)
        for event in events:
            turn.take(event)
        return JsonResponse({
            "id": completion_id, "object": "chat.completion", "created": created, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": turn.text}, "finish_reason": "stop"}],
            "usage": _usage(content, turn.extension.get("context", []), turn.text),
            "dellm": turn.extension,
        })

    def _sse(self, request, events, completion_id, created, model, content, conversation_id, include_usage):
        def chunk(delta: dict, finish_reason=None, **extra) -> str:
            payload = {
                "id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}], **extra,
            }
            return f"data: {json.dumps(payload)}\n\n"

        def frames():
            yield chunk({"role": "assistant", "content": ""})
            turn = _Turn(request, conversation_id)
            try:
                for event in events:
                    turn.take(event)
                    if event.type == "token":
                        yield chunk({"content": event.delta})
                    elif event.type in ("forget_preview", "forget_question"):
                        yield chunk({"content": turn.text})
            except ApplicationError as exc:
                kind = "api_error" if exc.status >= 500 else "invalid_request_error"
                error = {"message": exc.detail, "type": kind, "code": exc.code}
                yield f"data: {json.dumps({'error': error})}\n\n"
                yield "data: [DONE]\n\n"
                return
            yield chunk({}, "stop", dellm=turn.extension)
            if include_usage:
                usage = _usage(content, turn.extension.get("context", []), turn.text)
                payload = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
                           "choices": [], "usage": usage}
                yield f"data: {json.dumps(payload)}\n\n"
            yield "data: [DONE]\n\n"

        return _stream_async(frames())


async def _stream_async(iterator):
    """Serve a synchronous generator from the ASGI server piece by piece (each step runs in the
    thread that owns this request's database connection), so tokens leave as they are made."""
    sentinel = object()
    while True:
        piece = await sync_to_async(next, thread_sensitive=True)(iterator, sentinel)
        if piece is sentinel:
            return
        yield piece
