"""One chat turn: validate -> recognise a forget request -> store the question -> retrieve its context
-> stream the LLM's answer -> store the reply with one edge per context item -> queue derivations.

A message that asks to forget something is never stored, embedded, answered or sent to fact
extraction. Recognition has three outcomes: sure -> a Forget preview; unsure -> a question back to the
user (``forget_question``: review what would be forgotten, or just answer), nothing stored until they
choose; no -> an ordinary turn. With an LLM that can call functions, an unsure message is first put to
it as ``forget_memory(targets)``. Every transport (REST, websocket, the OpenAI-compatible endpoint)
goes through ``message_post_stream``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from dellm_site.ai.embedding import get_embedder
from dellm_site.ai.llm import get_llm
from dellm_site.ai.prompts import Prompt
from dellm_site.errors import ApplicationError
from dellm_site.types import AnyId
from dellm_site.validation import text_validate
from memory.embeddings import embedding_add
from memory.graph import edges_record
from memory.models import Node
from memory.preferences import memory_enabled
from memory.retrieval import context_retrieve
from memory.selectors import facts_of_message
from memory.summaries import summary_due
from memory.tasks import embed_node, facts_extract_task, summary_refresh_task
from provenance.forgetting.intent import intent_detect
from provenance.forgetting.services import forget_preview
from provenance.selectors import preview_data

from .models import Conversation, Message, Role
from .selectors import conversation_get, message_get
from .services import conversation_title_from

# What a reply says when it was stopped before its first word.
STOPPED_EMPTY = "(Stopped before any reply was written.)"

if TYPE_CHECKING:
    from dellm_site.types import User

# The same rules on every transport: REST, websocket and the OpenAI-compatible endpoint.
message_validate = text_validate


@dataclass
class ChatEvent:
    """One step of a reply: ``user_message``, then ``token`` repeatedly, then ``reply`` (``remembered``: facts may
    be taken from its question), then ``memory_updated`` when facts were saved from the question by then."""

    type: str
    message: Message | None = None
    delta: str = ""
    context: list[int] = field(default_factory=list)
    scores: dict[int, float] = field(default_factory=dict)
    preview: dict | None = None
    question: dict | None = None
    remembered: bool = False
    facts: list[dict] = field(default_factory=list)


def _tasks_in_process() -> bool:
    """Whether the tasks a turn queues run inside it (no workers), so that what they derive exists by its end."""
    return bool(facts_extract_task.app.conf.task_always_eager)


def _enqueue_embedding(node_id: int, owner_id: int) -> None:
    transaction.on_commit(lambda: embed_node.delay(node_id, owner_id))


@transaction.atomic
def _user_message_store(*, user, conversation: Conversation, content: str, vector) -> Message:
    """Store the question with its embedding: ``vector``, computed once by the turn from the same text, is
    written in the same transaction (a task would only embed the text a second time)."""
    # A temporary chat's messages are kept for the chat alone: never retrievable, never embedded.
    message = Message.objects.create(
        conversation=conversation, owner=user, role=Role.USER, content=content, retrievable=not conversation.temporary
    )
    if not conversation.title:
        conversation.title = conversation_title_from(content)
    conversation.updated_at = timezone.now()
    Conversation.objects.for_user(user).filter(pk=conversation.pk).update(
        title=conversation.title, updated_at=conversation.updated_at
    )
    if not conversation.temporary:
        embedding_add(node=message, vector=vector)
    return message


def _enqueue_derivations(*, user_message_id: int, conversation: Conversation, remember: bool) -> None:
    """Facts and summaries are derived once the turn is over, so a reply's context never holds a
    record derived from the very message it answers (in-process or with workers alike). Nothing is
    derived when the turn does not ``remember`` (memory turned off)."""
    if not settings.DELLM_DERIVED_MEMORY or not remember:
        return
    transaction.on_commit(lambda: facts_extract_task.delay(user_message_id))
    if summary_due(conversation_id=conversation.pk):
        transaction.on_commit(lambda: summary_refresh_task.delay(conversation.pk))


@transaction.atomic
def _reply_store(*, user, question: Message, content: str, context_ids: list[int], remember: bool) -> Message:
    # Lock the context so a concurrent deletion either happens before (we refuse to save a
    # reply built from deleted items) or waits until the reply and its edges exist (and taints it).
    alive = set(Node.objects.select_for_update().filter(pk__in=context_ids, owner=user).values_list("pk", flat=True))
    if alive != set(context_ids):
        raise ApplicationError(
            "An item this reply was built from was deleted while it was being written; the reply was discarded.",
            code="context_deleted",
            status=409,
        )
    conversation = question.conversation
    reply = Message.objects.create(
        conversation=conversation, owner=user, role=Role.ASSISTANT, content=content, question=question,
        retrievable=not conversation.temporary,
    )
    edges_record(context_ids=context_ids, dst_id=reply.pk, owner_id=user.pk)
    if question.reply_removed:
        Message.objects.for_user(user).filter(pk=question.pk).update(reply_removed=False)
    Conversation.objects.for_user(user).filter(pk=conversation.pk).update(updated_at=timezone.now())
    if not conversation.temporary:
        _enqueue_embedding(reply.pk, user.pk)
    _enqueue_derivations(user_message_id=question.pk, conversation=conversation, remember=remember)
    return reply


def _remembers(*, user: User, conversation: Conversation) -> bool:
    """Whether a turn reads from memory and adds to it (facts, summaries): not while the user has it off,
    never in a temporary chat."""
    return not conversation.temporary and memory_enabled(user=user)


def forget_question(*, content: str, targets: list[str], confidence: float) -> dict:
    """What the user is asked when a message may be a request to forget (nothing is stored meanwhile)."""
    named = " and ".join(f"\u201c{t}\u201d" for t in targets) if targets else "something you told me"
    return {
        "text": f"Did you want me to forget {named}?",
        "targets": targets,
        "confidence": round(confidence, 3),
        "content": content,
        "choices": {"review": "Review what I'd forget", "answer": "No, just answer it"},
    }


def forget_review(*, user: User, content: object) -> dict:
    """The user chose "Review what I'd forget" for a message they were asked about: its preview."""
    deletion = forget_preview(user=user, mode="natural", query=message_validate(content=content))
    return preview_data(request=deletion)


def _recognise(*, user, content: str) -> ChatEvent | None:
    """The forget preview or the question a message turns into, or None for an ordinary message."""
    found = intent_detect(content)  # the turn has just embedded it: its layers are at hand
    outcome, targets = found.outcome, found.targets
    if outcome == "ask":
        decided = get_llm().forget_targets(content)
        if decided is not None:
            outcome, targets = ("forget", decided) if decided else ("none", [])
    if outcome == "forget":
        query = "; ".join(targets) if targets and targets != found.targets else content
        deletion = forget_preview(user=user, mode="natural", query=query)
        return ChatEvent(type="forget_preview", preview=preview_data(request=deletion))
    if outcome == "ask":
        question = forget_question(content=content, targets=targets, confidence=found.confidence)
        return ChatEvent(type="forget_question", question=question)
    return None


def message_post_stream(
    *, user: User, conversation_id: AnyId, content: object, answer: bool = False, stop: threading.Event | None = None
) -> Iterator[ChatEvent]:
    """Post a user message and stream the reply. Stores the user message first, retrieves the
    context, streams the LLM's answer, then stores the reply and one edge from every context
    item (the user message included) in one transaction. ``answer``: the user said this message is
    not a request to forget (after a ``forget_question``), so it is answered without asking again. ``stop``:
    once set, the LLM's stream is left and the reply is stored as far as it got (with its context edges)."""
    content = message_validate(content=content)
    conversation = conversation_get(user=user, conversation_id=conversation_id)
    vector = get_embedder().embed_one(content)  # once: for retrieval, and its layers for recognition
    if not answer:
        recognised = _recognise(user=user, content=content)
        if recognised is not None:
            yield recognised
            return
    user_message = _user_message_store(user=user, conversation=conversation, content=content, vector=vector)
    yield ChatEvent(type="user_message", message=user_message)
    yield from _reply_stream(user=user, question=user_message, vector=vector, stop=stop)
    # In-process, the facts of the message exist now; with workers they come later (see ``streaming``), so the
    # turn does not look for them.
    saved = facts_of_message(message_id=user_message.pk, owner=user) if _tasks_in_process() else []
    if saved:
        yield ChatEvent(type="memory_updated", message=user_message, facts=saved)


def _reply_stream(*, user: User, question: Message, vector, stop: threading.Event | None) -> Iterator[ChatEvent]:
    """Retrieve the question's context, stream the LLM's answer, store the reply with its edges. With the
    user's memory off, or in a temporary chat, the context is the question alone and nothing is derived."""
    remember = _remembers(user=user, conversation=question.conversation)
    retrieved = (
        context_retrieve(user=user, query_vector=vector, text=question.content, exclude_ids={question.pk})
        if remember
        else []
    )
    prompt = Prompt(
        question=question.content, context=[item.node.content for item in retrieved], remembered=remember,
        question_vector=vector,
    )
    pieces: list[str] = []
    for delta in get_llm().stream(prompt):
        if stop is not None and stop.is_set():
            break
        pieces.append(delta)
        yield ChatEvent(type="token", delta=delta)

    context_ids = [question.pk, *(item.node.pk for item in retrieved)]
    text = "".join(pieces).strip() or STOPPED_EMPTY
    reply = _reply_store(user=user, question=question, content=text, context_ids=context_ids, remember=remember)
    yield ChatEvent(
        type="reply",
        message=reply,
        context=context_ids,
        scores={item.node.pk: round(item.score, 4) for item in retrieved},
        remembered=remember and settings.DELLM_DERIVED_MEMORY,
    )


def answer_again_stream(
    *, user: User, conversation_id: AnyId, message_id: AnyId, stop: threading.Event | None = None
) -> Iterator[ChatEvent]:
    """Answer anew a question whose reply was forgotten: a new reply from what remains, with its own
    context and edges (``token``..., then ``reply``). Only a question whose reply was removed qualifies."""
    conversation = conversation_get(user=user, conversation_id=conversation_id)
    question = message_get(user=user, message_id=message_id)
    if question.conversation_id != conversation.pk or question.role != Role.USER or not question.reply_removed:
        raise ApplicationError(
            "Only a question of this conversation whose reply was forgotten can be answered again.",
            code="not_answerable_again",
            status=409,
        )
    yield from _reply_stream(user=user, question=question, vector=get_embedder().embed_one(question.content), stop=stop)


def answer_again(*, user: User, conversation_id: AnyId, message_id: AnyId) -> tuple[Message, list[int]]:
    """Answer a question again and wait for the whole reply; returns (reply, context ids)."""
    *_, reply = answer_again_stream(user=user, conversation_id=conversation_id, message_id=message_id)
    return reply.message, reply.context


@dataclass
class PostResult:
    user_message: Message | None = None
    reply: Message | None = None
    context: list[int] = field(default_factory=list)
    forget_preview: dict | None = None
    forget_question: dict | None = None
    memory_updated: list[dict] = field(default_factory=list)

    def __iter__(self):  # (user_message, reply, context), for callers that unpack
        return iter((self.user_message, self.reply, self.context))


def message_post(*, user: User, conversation_id: AnyId, content: object, answer: bool = False) -> PostResult:
    """Post a message and wait for the whole reply (or the forget preview or question it turned out to be)."""
    result = PostResult()
    for event in message_post_stream(user=user, conversation_id=conversation_id, content=content, answer=answer):
        if event.type == "user_message":
            result.user_message = event.message
        elif event.type == "reply":
            result.reply, result.context = event.message, event.context
        elif event.type == "forget_preview":
            result.forget_preview = event.preview
        elif event.type == "forget_question":
            result.forget_question = event.question
        elif event.type == "memory_updated":
            result.memory_updated = event.facts
    return result
