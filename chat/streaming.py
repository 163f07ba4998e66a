"""Websocket turns that outlive their socket: each runs to its end in a worker thread of its own, so the
reply is stored (with its edges) and its derivations are queued even when the client leaves mid-reply;
the socket only reads the turn's frames while it is there to send them."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import TYPE_CHECKING

from channels.db import database_sync_to_async
from django.conf import settings

from dellm_site.errors import ApplicationError
from dellm_site.types import AnyId
from memory.extraction import states_facts
from memory.selectors import facts_of_message

from . import turns
from .serializers import messages_serialize

if TYPE_CHECKING:
    from dellm_site.types import User

logger = logging.getLogger(__name__)

# Strong references to the running turns: one whose socket has closed is still kept until it ends.
_running: set[asyncio.Future] = set()
# With workers, how long a turn waits for the facts taken from its message, and how often it looks: soon at
# first (an idle worker extracts them in a fraction of a second), then less and less often, so that many turns
# waiting on a busy worker do not keep the server's threads and the database busy looking.
FACTS_WAIT_S = 20.0
FACTS_POLL_S = 0.25
FACTS_POLL_MAX_S = 2.0


def error_frame(code: str, detail: str) -> dict:
    return {"type": "error", "code": code, "detail": detail}


def event_frame(event: turns.ChatEvent) -> dict:
    """The websocket frame of one step of a turn (messages are serialized here, in the turn's thread)."""
    if event.type == "token":
        return {"type": "token", "delta": event.delta}
    if event.type == "forget_preview":
        return {"type": "forget_preview", "preview": event.preview}
    if event.type == "forget_question":
        return {"type": "forget_question", "question": event.question}
    if event.type == "memory_updated":
        return memory_frame(message_id=event.message.pk, facts=event.facts)
    message = messages_serialize([event.message])[0]
    if event.type == "reply":
        message["context"] = event.context
    return {"type": event.type, "message": message}


def memory_frame(*, message_id: int, facts: list[dict]) -> dict:
    """The "Memory updated" frame: the facts just saved from one of the user's messages."""
    return {"type": "memory_updated", "message": message_id, "facts": facts}


def facts_awaited(*, question: dict) -> bool:
    """With Celery workers a message's facts are extracted after its turn: they are looked for a while (only for
    a message that states something about the user). In-process they are already in the turn's frames."""
    return not settings.CELERY_TASK_ALWAYS_EAGER and states_facts(question["content"])


async def facts_wait(*, question: dict, owner) -> list[dict]:
    """Look for the facts taken from ``question`` for a while, from the event loop: the wait holds no thread, so
    turns that wait for their facts never hold up other turns (a thread is taken for each look only)."""
    deadline = time.monotonic() + FACTS_WAIT_S
    pause = FACTS_POLL_S
    while time.monotonic() < deadline:
        await asyncio.sleep(pause)
        pause = min(pause * 2, FACTS_POLL_MAX_S)
        saved = await database_sync_to_async(facts_of_message, thread_sensitive=False)(
            message_id=question["id"], owner=owner
        )
        if saved:
            return saved
    return []


def turn_start(
    *,
    user: User,
    conversation_id: AnyId,
    content: object = None,
    answer: bool = False,
    stop: threading.Event | None = None,
    again: AnyId | None = None,
) -> asyncio.Queue[dict | None]:
    """Start one chat turn in a worker thread; its frames arrive on the returned queue (an error frame if
    it fails), then None. Nothing that happens to the reader (a closed socket, a cancelled consumer) stops it;
    only ``stop``, set when the user asks, ends the reply early (it is stored as far as it got). ``again``:
    the turn answers that question anew (its reply was forgotten) instead of posting ``content``."""
    loop = asyncio.get_running_loop()
    frames: asyncio.Queue[dict | None] = asyncio.Queue()

    def put(frame: dict | None) -> None:
        try:
            loop.call_soon_threadsafe(frames.put_nowait, frame)
        except RuntimeError:  # the event loop has closed (the server is stopping): the turn still finishes
            pass

    def run() -> dict | None:
        """The turn, in a worker thread; returns its question when its facts are still to come."""
        try:
            events = (
                turns.answer_again_stream(user=user, conversation_id=conversation_id, message_id=again, stop=stop)
                if again is not None
                else turns.message_post_stream(
                    user=user, conversation_id=conversation_id, content=content, answer=answer, stop=stop
                )
            )
            question, noted = None, False
            for event in events:
                frame = event_frame(event)
                put(frame)
                if event.type == "user_message":
                    question = frame["message"]
                noted = noted or event.type == "memory_updated"
                if event.type == "reply" and not event.remembered:
                    question = None
            return question if question is not None and not noted and facts_awaited(question=question) else None
        except ApplicationError as exc:
            put(error_frame(exc.code, exc.detail))
        except Exception:  # never leave the client waiting without a frame
            logger.exception("chat turn failed")
            put(error_frame("server_error", "Something went wrong while answering; please try again."))
        return None

    async def drive() -> None:
        try:
            # Not thread-sensitive: a turn never waits for (nor holds up) another socket's work.
            question = await database_sync_to_async(run, thread_sensitive=False)()
            if question is not None and (saved := await facts_wait(question=question, owner=user)):
                put(memory_frame(message_id=question["id"], facts=saved))
        except Exception:  # the reply is stored and sent; only the note is missed
            logger.exception("waiting for a message's facts failed")
        finally:
            put(None)

    turn = asyncio.ensure_future(drive())
    _running.add(turn)
    turn.add_done_callback(_running.discard)
    return frames
