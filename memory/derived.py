"""Derived memory: extracted facts and conversation summaries, keyed to their sources.

Each derived record is a Node with an edge from every source it was built from, and a version
stamp (backend, model, prompt hash). Records are written by Celery tasks; the LLM call happens
outside any transaction, and the record is stored only if every source still exists at that
moment (the sources are locked), so nothing derived from a forgotten message is ever written.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from chat.llm.base import FACTS_INSTRUCTION, SUMMARY_INSTRUCTION, get_llm
from provenance.models import Edge
from provenance.services import edges_record

from .models import DerivedStatus, Fact, Node, NodeKind, Summary
from .tasks import embed_node


class SourcesChanged(Exception):
    """A source was deleted while the record was being derived; derive again from what is left."""


def _lock_sources(ids: list[int]) -> set[int]:
    return set(Node.objects.select_for_update().filter(pk__in=ids).order_by("pk").values_list("pk", flat=True))


def _enqueue_embedding(node_id: int) -> None:
    transaction.on_commit(lambda: embed_node.delay(node_id))


def facts_extract(*, message_id: int, rebuild_of: int | None = None, after_version: int = 0) -> list[Fact]:
    """Extract the facts a user message states about the user (idempotent per message). As a
    rebuild, it re-derives only the facts of the message that are no longer there."""
    from chat.models import Message, Role

    message = Message.objects.filter(pk=message_id, role=Role.USER).first()
    if message is None:
        return []
    existing = Fact.objects.filter(in_edges__src_id=message_id, rectified=False)
    if rebuild_of is None and existing.exists():
        return list(existing)
    from chat.llm.local import user_statements

    if not user_statements(message.content):
        return []  # no first-person statement: nothing to extract, no LLM call spent
    llm = get_llm()
    texts = llm.extract_facts(message.content)
    if not texts:
        return []
    with transaction.atomic():
        if not _lock_sources([message_id]):
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
            edges_record(context_ids=[message_id], dst_id=fact.pk)
            _enqueue_embedding(fact.pk)
            facts.append(fact)
        return facts


@dataclass
class SummaryResult:
    summary: Summary | None
    sources: list[int]


def summary_refresh(*, conversation_id: int, rebuild_of: int | None = None, after_version: int = 0) -> SummaryResult:
    """(Re)build the summary of a conversation from its current user messages. The previous
    summary is superseded (kept for provenance, never given to the LLM again)."""
    from chat.models import Conversation, Message, Role

    for _ in range(3):
        conversation = Conversation.objects.filter(pk=conversation_id).first()
        if conversation is None:
            return SummaryResult(None, [])
        sources = list(
            Message.objects.filter(conversation=conversation, role=Role.USER, retrievable=True)
            .order_by("-pk")
            .values_list("pk", "content")[: settings.DELLM_SUMMARY_MAX_SOURCES]
        )[::-1]
        llm = get_llm()
        text = llm.summarize([content for _, content in sources]) if sources else ""
        try:
            with transaction.atomic():
                source_ids = [pk for pk, _ in sources]
                if _lock_sources(source_ids) != set(source_ids):
                    raise SourcesChanged
                if not Conversation.objects.select_for_update().filter(pk=conversation_id).exists():
                    return SummaryResult(None, [])
                previous = Summary.objects.filter(conversation_id=conversation_id)
                version = max(previous.aggregate(v=Max("version"))["v"] or 0, after_version) + 1
                for old in previous.filter(status=DerivedStatus.ACTIVE):
                    old.status = DerivedStatus.SUPERSEDED
                    old.save(update_fields=["status", "retrievable"])
                if not text:
                    return SummaryResult(None, source_ids)
                summary = Summary.objects.create(
                    owner_id=conversation.owner_id,
                    conversation_id=conversation_id,
                    content=text,
                    version=version,
                    source_count=len(source_ids),
                    derivation={**llm.derivation(SUMMARY_INSTRUCTION), "rebuild_of": rebuild_of},
                )
                edges_record(context_ids=source_ids, dst_id=summary.pk)
                _enqueue_embedding(summary.pk)
                return SummaryResult(summary, source_ids)
        except SourcesChanged:
            continue
    raise SourcesChanged(f"conversation {conversation_id} kept changing while its summary was rebuilt")


def summary_due(*, conversation_id: int) -> bool:
    """A summary is refreshed every DELLM_SUMMARY_EVERY user messages."""
    from chat.models import Message, Role

    every = settings.DELLM_SUMMARY_EVERY
    if every <= 0:
        return False
    count = Message.objects.filter(conversation_id=conversation_id, role=Role.USER).count()
    latest = Summary.objects.filter(conversation_id=conversation_id, status=DerivedStatus.ACTIVE).first()
    return count - (latest.source_count if latest else 0) >= every


def fact_rectify(*, user, fact_id: int, content: str) -> Fact:
    """Rectify: the user's correction supersedes the fact. The old one keeps its history but is
    never given to the LLM again; the new one keeps the same sources; nothing is erased."""
    from chat.services import message_validate
    from dellm_site.errors import ApplicationError, NotFound

    content = message_validate(content=content)
    with transaction.atomic():
        old = Fact.objects.select_for_update().filter(pk=fact_id, owner=user).first()
        if old is None:
            raise NotFound("Fact not found.")
        if old.status != DerivedStatus.ACTIVE:
            raise ApplicationError("This fact was already superseded; rectify its latest version.", code="superseded", status=409)
        old.status = DerivedStatus.SUPERSEDED
        old.save(update_fields=["status", "retrievable"])
        new = Fact.objects.create(
            owner=user, content=content, version=old.version + 1, supersedes=old, rectified=True,
            derivation={"backend": "user", "rectifies": old.pk},
        )
        sources = list(Edge.objects.filter(dst=old).order_by("pk").values_list("src_id", flat=True))
        edges_record(context_ids=sources, dst_id=new.pk)
        _enqueue_embedding(new.pk)
        return new


def derived_rebuild(
    *, kind: str, old_id: int, sources: list[int], conversation_id: int | None, version: int = 0
) -> dict:
    """Rebuild one dropped derived record from its surviving sources. Returns its manifest entry."""
    if kind == NodeKind.SUMMARY:
        if conversation_id is None:
            return {"status": "dropped", "reason": "conversation deleted"}
        result = summary_refresh(conversation_id=conversation_id, rebuild_of=old_id, after_version=version)
        if result.summary is None:
            return {"status": "dropped", "reason": "no surviving sources"}
        return {"status": "done", "new_id": result.summary.pk, "version": result.summary.version,
                "derivation": result.summary.derivation, "rebuilt_at": timezone.now().isoformat()}
    surviving = list(Node.objects.filter(pk__in=sources, kind=NodeKind.MESSAGE).values_list("pk", flat=True))
    if not surviving:
        return {"status": "dropped", "reason": "no surviving sources"}
    new = [fact for pk in surviving for fact in facts_extract(message_id=pk, rebuild_of=old_id, after_version=version)]
    if not new:
        return {"status": "dropped", "reason": "nothing left to derive from the surviving sources"}
    return {"status": "done", "new_ids": [f.pk for f in new], "version": new[0].version,
            "rebuilt_at": timezone.now().isoformat()}


def memory_overview(*, user) -> dict:
    """The Memory panel: the user's facts (with history) and summaries, with their sources."""
    from provenance.selectors import context_ids

    facts = list(Fact.objects.filter(owner=user).order_by("-pk"))
    summaries = list(Summary.objects.filter(owner=user).order_by("-pk"))
    sources = context_ids(node_ids=[n.pk for n in facts + summaries])

    def fact_row(f):
        return {"id": f.pk, "content": f.content, "sources": sources[f.pk], "version": f.version,
                "status": f.status, "rectified": f.rectified, "supersedes": f.supersedes_id,
                "derivation": f.derivation, "rebuilt_at": f.rebuilt_at}

    def summary_row(s):
        return {"id": s.pk, "conversation": s.conversation_id, "content": s.content, "sources": sources[s.pk],
                "version": s.version, "status": s.status, "derivation": s.derivation, "rebuilt_at": s.rebuilt_at}

    return {"facts": [fact_row(f) for f in facts], "summaries": [summary_row(s) for s in summaries]}
