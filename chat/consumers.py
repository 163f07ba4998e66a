"""WebSocket chat: ``ws/chat/<conversation_id>/``. The client sends ``{"type": "message", "content"}``,
``{"type": "forget_confirm", "request_id", "keep"?}``, ``{"type": "history", "after"?}``, ``{"type": "stop"}`` (end
the reply being streamed; it is stored as far as it got) or ``{"type": "answer_again", "message_id"}`` (a question
whose reply was forgotten gets a new one: ``token``..., ``reply``); the server answers
with ``user_message``, ``token``..., ``reply`` (or ``forget_preview``, ``forget_done``, ``history``) frames, and
``{"type": "error", "code", "detail"}``. When facts are saved from a message, ``{"type": "memory_updated",
"message": id, "facts": [{id, content}]}`` follows its reply (at once in-process; with workers once extracted).
A turn goes on when its client leaves: a client that comes back asks for the ``history`` after the last message
it saw."""

from __future__ import annotations

import asyncio
import json
import logging
import threading

from asgiref.sync import ThreadSensitiveContext
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from dellm_site.errors import ApplicationError
from dellm_site.validation import MAX_ID, id_value
from provenance.forgetting.services import forget_confirm, forget_job_status
from provenance.selectors import manifest_data

from . import selectors, turns
from .serializers import messages_serialize
from .streaming import error_frame, turn_start

logger = logging.getLogger(__name__)

# Strong references to the tasks relaying a turn's frames to its socket.
_relays: set[asyncio.Future] = set()

# How often a socket looks at a running deletion job's progress.
FORGET_PROGRESS_POLL_S = 0.5
CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_FOUND = 4404


class ChatConsumer(AsyncWebsocketConsumer):
    """Each token frame is sent as soon as the LLM yields it; the turn itself runs in a thread of its own
    (see ``streaming``), and this socket's other database work in a thread of the socket's own."""

    gone = False  # the client has left
    turn_stop: threading.Event | None = None  # set to end the reply being streamed

    async def __call__(self, scope, receive, send):
        async with ThreadSensitiveContext():  # one socket's ORM calls never queue behind another's
            await super().__call__(scope, receive, send)

    async def connect(self):
        self.user = self.scope.get("user")
        if self.user is None or not self.user.is_authenticated:
            await self.accept()
            await self.send_error("unauthenticated", "Sign in first.")
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        try:
            self.conversation = await database_sync_to_async(selectors.conversation_get)(
                user=self.user, conversation_id=self.scope["url_route"]["kwargs"]["conversation_id"]
            )
        except ApplicationError as exc:
            await self.accept()
            await self.send_error(exc.code, exc.detail)
            await self.close(code=CLOSE_NOT_FOUND)
            return
        await self.accept()

    async def send_json(self, payload: dict) -> bool:
        """Send one frame; False once the client has gone (what is being done for it goes on regardless)."""
        if self.gone:
            return False
        try:
            await self.send(text_data=json.dumps(payload, default=str))
        except OSError:  # the server's "client disconnected"
            self.gone = True
        return not self.gone

    async def send_error(self, code: str, detail: str) -> None:
        await self.send_json(error_frame(code, detail))

    async def receive(self, text_data=None, bytes_data=None):
        try:
            frame = json.loads(text_data) if text_data is not None else None
        except (TypeError, ValueError):
            await self.send_error("malformed_frame", "Frames must be JSON objects.")
            return
        if not isinstance(frame, dict):
            await self.send_error("malformed_frame", "Frames must be JSON objects.")
            return
        handler = {
            "message": self.post_message,
            "forget_review": self.review_forget,
            "forget_confirm": self.confirm_forget,
            "history": self.send_history,
            "stop": self.stop_reply,
            "answer_again": self.answer_again,
        }.get(frame.get("type"))
        if handler is None:
            kinds = "'message', 'forget_review', 'forget_confirm', 'history', 'stop' or 'answer_again'"
            await self.send_error("unknown_type", f"Unknown frame type {frame.get('type')!r}; send {kinds}.")
            return
        try:
            await handler(frame)
        except ApplicationError as exc:
            await self.send_error(exc.code, exc.detail)
        except Exception:  # never leave the client waiting without a frame
            logger.exception("%s frame failed", frame["type"])
            await self.send_error("server_error", "Something went wrong; please try again.")

    async def post_message(self, frame: dict) -> None:
        """``{"type": "message", "content", "intent"?}`` -> ``user_message``, ``token``..., ``reply``."""
        intent = frame.get("intent")
        if intent not in (None, "answer"):
            await self.send_error("invalid", "intent must be 'answer' when given.")
            return
        self.turn_stop = threading.Event()
        self._relay_start(
            turn_start(
                user=self.user,
                conversation_id=self.conversation.pk,
                content=frame.get("content"),
                answer=intent == "answer",
                stop=self.turn_stop,
            )
        )

    async def answer_again(self, frame: dict) -> None:
        """``{"type": "answer_again", "message_id"}`` -> ``token``..., ``reply``: a forgotten reply's question
        answered anew from what remains."""
        message_id = id_value(frame.get("message_id"))
        if message_id is None:
            await self.send_error("invalid", f"message_id must be a message id (an integer from 1 to {MAX_ID}).")
            return
        self.turn_stop = threading.Event()
        self._relay_start(
            turn_start(user=self.user, conversation_id=self.conversation.pk, again=message_id, stop=self.turn_stop)
        )

    def _relay_start(self, frames: asyncio.Queue[dict | None]) -> None:
        # Relayed from a task of its own, so a "stop" frame is read while the reply streams.
        relay = asyncio.ensure_future(self._relay(frames))
        _relays.add(relay)
        relay.add_done_callback(_relays.discard)

    async def _relay(self, frames: asyncio.Queue[dict | None]) -> None:
        while (out := await frames.get()) is not None:
            if not await self.send_json(out):
                return  # the client has left; the turn finishes without it

    async def stop_reply(self, frame: dict) -> None:
        """``{"type": "stop"}``: end the reply being streamed; it is stored as far as it got."""
        if self.turn_stop is not None:
            self.turn_stop.set()

    async def send_history(self, frame: dict) -> None:
        """``{"type": "history", "after"?: id}`` -> ``{"type": "history", "messages"}``: the conversation's
        messages after that one (all of them without it), e.g. a reply finished while the client was away."""
        after = frame.get("after", 0)
        if after != 0 and id_value(after) is None:
            await self.send_error("invalid", f"after must be a message id (an integer from 1 to {MAX_ID}).")
            return
        messages = await database_sync_to_async(
            lambda: messages_serialize(
                selectors.message_list(user=self.user, conversation_id=self.conversation.pk, after=id_value(after))
            )
        )()
        await self.send_json({"type": "history", "messages": messages})

    async def review_forget(self, frame: dict) -> None:
        """``{"type": "forget_review", "content"}`` (after a forget_question) -> ``{"type": "forget_preview"}``."""
        preview = await database_sync_to_async(turns.forget_review)(user=self.user, content=frame.get("content"))
        await self.send_json({"type": "forget_preview", "preview": preview})

    async def confirm_forget(self, frame: dict) -> None:
        """``{"type": "forget_confirm", "request_id", "keep"?, "add"?}`` -> ``{"type": "forget_done", "manifest"}``."""
        keep, add = frame.get("keep") or [], frame.get("add") or []
        for name, ids in (("keep", keep), ("add", add)):
            if not isinstance(ids, list) or not all(isinstance(k, int) and id_value(k) is not None for k in ids):
                await self.send_error("invalid", f"{name} must be a list of item ids (integers from 1 to {MAX_ID}).")
                return
        try:
            manifest = await database_sync_to_async(forget_confirm)(
                user=self.user, request_id=frame.get("request_id"), keep=keep, add=add
            )
        except ApplicationError as exc:
            await self.send_error(exc.code, exc.detail)
            return
        if "progress" in manifest:  # a large deletion runs as a job: its progress, then forget_done
            relay = asyncio.ensure_future(self.relay_forget_job(manifest["request_id"]))
            _relays.add(relay)
            relay.add_done_callback(_relays.discard)
            return
        data = await database_sync_to_async(manifest_data)(user=self.user, manifest=manifest)
        await self.send_json({"type": "forget_done", "manifest": data})

    async def relay_forget_job(self, request_id: str) -> None:
        """``{"type": "forget_progress", "request_id", "progress"}`` while a deletion job runs (each change),
        then ``forget_done`` (or an error frame if the job failed: the deletion stays resumable)."""
        sent = None
        while not self.gone:
            status = await database_sync_to_async(forget_job_status)(request_pk=request_id, owner_id=self.user.pk)
            if status.get("status") == "completed":
                data = await database_sync_to_async(manifest_data)(user=self.user, manifest=status)
                await self.send_json({"type": "forget_done", "manifest": data})
                return
            progress = status.get("progress")
            if progress != sent:
                await self.send_json({"type": "forget_progress", "request_id": request_id, "progress": progress})
                sent = progress
            if progress and progress["stage"] == "failed":
                await self.send_error("job_failed", "The deletion stopped; confirm it again to finish it.")
                return
            await asyncio.sleep(FORGET_PROGRESS_POLL_S)
