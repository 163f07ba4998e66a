"""Extracted facts: what the user states about themselves, each a node with edges from its sources.

The LLM call happens outside any transaction; a fact is stored only if its source message still
exists at that moment (the source is locked), so nothing derived from a forgotten message is written.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from django.db import transaction

from dellm_site.ai.llm import get_llm
from dellm_site.ai.prompts import FACTS_INSTRUCTION
from dellm_site.errors import ApplicationError, NotFound
from dellm_site.validation import text_validate

from .embeddings import vector_soon
from .extraction import states_facts
from .graph import context_ids, edges_record
from .models import DerivedStatus, Fact, Node
from .tasks import embed_node

if TYPE_CHECKING:
    from dellm_site.types import User


def sources_lock(ids: list[int], owner_id: int | None = None) -> set[int]:
    """Lock the given nodes (``owner_id``'s, where known; in id order, like every writer) and return those that
    still exist."""
    nodes = Node.objects.select_for_update().filter(pk__in=ids)
    if owner_id is not None:
        nodes = nodes.filter(owner_id=owner_id)
    return set(nodes.order_by("pk").values_list("pk", flat=True))


# Where ``embedding_enqueue`` collects the nodes to embed inside ``embeddings_deferred`` (None: outside).
_deferred: ContextVar[list | None] = ContextVar("embeddings_deferred", default=None)


def embedding_enqueue(node_id: int, owner_id: int | None = None, content: str | None = None) -> None:
    """Embed the node (``owner_id``'s) once the transaction that stores it commits (inside
    ``embeddings_deferred``: collect it, to be embedded with the others after it; its vector computed in the
    background from now on, where ``content``, its text, is given)."""
    collected = _deferred.get()
    if collected is not None:
        collected.append((node_id, owner_id, (content, vector_soon(content)) if content else None))
        return
    transaction.on_commit(lambda: embed_node.delay(node_id, owner_id))


@contextmanager
def embeddings_deferred() -> Iterator[list]:
    """Within it, the records stored are collected as ``(node_id, owner_id, (text, vector future) or None)``
    instead of each queued to be embedded; the caller stores their vectors after it
    (``memory.embeddings.embeddings_flush``), once their transactions ended: one rolled back stored nothing,
    and its node, missing, is skipped."""
    collected: list = []
    token = _deferred.set(collected)
    try:
        yield collected
    finally:
        _deferred.reset(token)


def facts_extract(
    *, message_id: int, rebuild_of: int | None = None, after_version: int = 0, owner_id: int | None = None
) -> list[Fact]:
    """Extract the facts a user message states about the user (idempotent per message). As a
    rebuild, it re-derives only the facts of the message that are no longer there. ``owner_id``: the message's
    owner, where known (looked up otherwise); every read and write goes through it."""
    messages = Node.objects.user_messages().filter(pk=message_id)
    if owner_id is not None:
        messages = messages.filter(owner_id=owner_id)
    message = messages.first()
    if message is None:
        return []
    existing = Fact.objects.filter(in_edges__src_id=message_id, owner_id=message.owner_id, rectified=False)
    if rebuild_of is None and existing.exists():
        return list(existing)
    if not states_facts(message.content):
        return []  # no first-person statement: nothing to extract, no LLM call spent
    llm = get_llm()
    texts = llm.extract_facts(message.content)
    if not texts:
        return []
    with transaction.atomic():
        if not sources_lock([message_id], owner_id=message.owner_id):
            return []  # forgotten meanwhile: derive nothing from it
        if rebuild_of is None and existing.exists():
            return list(existing)
        present = set(existing.filter(status=DerivedStatus.ACTIVE).values_list("content", flat=True))
        derivation = {**llm.derivation(FACTS_INSTRUCTION), **({"rebuild_of": rebuild_of} if rebuild_of else {})}
        facts = []
        for text in texts:
            if text in present:
                continue
            fact = Fact.objects.create(
                owner_id=message.owner_id, content=text, derivation=derivation, version=after_version + 1
            )
            edges_record(context_ids=[message_id], dst_id=fact.pk, owner_id=message.owner_id)
            embedding_enqueue(fact.pk, message.owner_id, text)
            facts.append(fact)
        return facts


def fact_rectify(*, user: User, fact_id: int, content: str) -> Fact:
    """Rectify: the user's correction supersedes the fact. The old one keeps its history but is
    never given to the LLM again; the new one keeps the same sources; nothing is erased."""
    content = text_validate(content=content)
    with transaction.atomic():
        old = Fact.objects.select_for_update().filter(pk=fact_id, owner=user).first()
        if old is None:
            raise NotFound("Fact not found.")
        if old.status != DerivedStatus.ACTIVE:
            raise ApplicationError(
                "This fact was already superseded; rectify its latest version.", code="superseded", status=409
            )
        old.status = DerivedStatus.SUPERSEDED
        old.save(update_fields=["status", "retrievable"])
        new = Fact.objects.create(
            owner=user, content=content, version=old.version + 1, supersedes=old, rectified=True,
            derivation={"backend": "user", "rectifies": old.pk},
        )
        edges_record(context_ids=context_ids(node_ids=[old.pk], owner=user)[old.pk], dst_id=new.pk, owner_id=user.pk)
        embedding_enqueue(new.pk, user.pk)
        return new
