"""WebSocket chat: ``ws/chat/<conversation_id>/``. The client sends ``{"type": "message", "content"}`` or
``{"type": "forget_confirm", "request_id", "keep"?}``; the server answers with ``user_message``, ``token``...,
``reply`` (or ``forget_preview``, ``forget_done``) frames, and ``{"type": "error", "code", "detail"}``."""

from __future__ import annotations

import json
import logging

from channels.generic.websocket import WebsocketConsumer

from dellm_site.errors import ApplicationError
from dellm_site.validation import MAX_ID, id_value
from provenance.forgetting.services import forget_confirm
from provenance.selectors import manifest_data

from . import selectors, turns
from .serializers import messages_serialize

logger = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404


class ChatConsumer(WebsocketConsumer):
    """Synchronous on purpose: each token frame is sent as soon as the LLM yields it."""

    def connect(self):
        self.user = self.scope.get("user")
        if self.user is None or not self.user.is_authenticated:
            self.accept()
            self.send_error("unauthenticated", "Sign in first.")
            self.close(code=CLOSE_UNAUTHENTICATED)
            return
        try:
            self.conversation = selectors.conversation_get(
                user=self.user, conversation_id=self.scope["url_route"]["kwargs"]["conversation_id"]
            )
        except ApplicationError as exc:
            self.accept()
            self.send_error(exc.code, exc.detail)
            self.close(code=CLOSE_NOT_FOUND)
            return
        self.accept()

    def send_json(self, payload: dict) -> None:
        self.send(text_data=json.dumps(payload, default=str))

    def send_error(self, code: str, detail: str) -> None:
        self.send_json({"type": "error", "code": code, "detail": detail})

    def receive(self, text_data=None, bytes_data=None):
        try:
            frame = json.loads(text_data) if text_data is not None else None
        except (TypeError, ValueError):
            self.send_error("malformed_frame", "Frames must be JSON objects.")
            return
        if not isinstance(frame, dict):
            self.send_error("malformed_frame", "Frames must be JSON objects.")
            return
        if frame.get("type") in ("forget_confirm", "forget_review"):
            try:
                (self.confirm_forget if frame["type"] == "forget_confirm" else self.review_forget)(frame)
            except Exception:  # never leave the client waiting without a frame
                logger.exception("forget frame failed")
                self.send_error("server_error", "Something went wrong; please try again.")
            return
        if frame.get("type") != "message":
            kinds = "'message', 'forget_review' or 'forget_confirm'"
            self.send_error("unknown_type", f"Unknown frame type {frame.get('type')!r}; send {kinds}.")
            return
        try:
            intent = frame.get("intent")
            if intent not in (None, "answer"):
                self.send_error("invalid", "intent must be 'answer' when given.")
                return
            for event in turns.message_post_stream(
                user=self.user, conversation_id=self.conversation.pk, content=frame.get("content"),
                answer=intent == "answer",
            ):
                if event.type == "token":
                    self.send_json({"type": "token", "delta": event.delta})
                elif event.type == "forget_preview":
                    self.send_json({"type": "forget_preview", "preview": event.preview})
                elif event.type == "forget_question":
                    self.send_json({"type": "forget_question", "question": event.question})
                else:
                    message = messages_serialize([event.message])[0]
                    if event.type == "reply":
                        message["context"] = event.context
                    self.send_json({"type": event.type, "message": message})
        except ApplicationError as exc:
            self.send_error(exc.code, exc.detail)
        except Exception:  # never leave the client waiting without a frame
            logger.exception("chat frame failed")
            self.send_error("server_error", "Something went wrong while answering; please try again.")

    def review_forget(self, frame: dict) -> None:
        """``{"type": "forget_review", "content"}`` (after a forget_question) -> ``{"type": "forget_preview"}``."""
        try:
            preview = turns.forget_review(user=self.user, content=frame.get("content"))
        except ApplicationError as exc:
            self.send_error(exc.code, exc.detail)
            return
        self.send_json({"type": "forget_preview", "preview": preview})

    def confirm_forget(self, frame: dict) -> None:
        """``{"type": "forget_confirm", "request_id", "keep"?, "add"?}`` -> ``{"type": "forget_done", "manifest"}``."""
        keep, add = frame.get("keep") or [], frame.get("add") or []
        for name, ids in (("keep", keep), ("add", add)):
            if not isinstance(ids, list) or not all(isinstance(k, int) and id_value(k) is not None for k in ids):
                self.send_error("invalid", f"{name} must be a list of item ids (integers from 1 to {MAX_ID}).")
                return
        try:
            manifest = forget_confirm(user=self.user, request_id=frame.get("request_id"), keep=keep, add=add)
        except ApplicationError as exc:
            self.send_error(exc.code, exc.detail)
            return
        self.send_json({"type": "forget_done", "manifest": manifest_data(user=self.user, manifest=manifest)})
