"""Rolling conversation summaries: a node with an edge from every user message it summarises.

A refresh supersedes the previous summary (kept for provenance, never given to the LLM again) and
is stored only if every source still exists at that moment (the sources are locked).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from dellm_site.ai.llm import get_llm
from dellm_site.ai.prompts import SUMMARY_INSTRUCTION

from .facts import embedding_enqueue, sources_lock
from .graph import edges_record
from .models import DerivedStatus, Node, Summary

# The conversation model, reached through the summary's foreign key rather than an import of chat.
Conversation = Summary._meta.get_field("conversation").related_model


class SourcesChanged(Exception):
    """A source was deleted while the record was being derived; derive again from what is left."""


@dataclass
class SummaryResult:
    summary: Summary | None
    sources: list[int]


def summary_refresh(
    *, conversation_id: int, rebuild_of: int | None = None, after_version: int = 0, owner_id: int | None = None
) -> SummaryResult:
    """(Re)build the summary of a conversation from its current user messages. The previous
    summary is superseded (kept for provenance, never given to the LLM again). ``owner_id``: the conversation's
    owner, where known (looked up otherwise); every read and write goes through it."""
    known = owner_id
    for _ in range(3):
        conversations = Conversation.objects.filter(pk=conversation_id)
        if known is not None:
            conversations = conversations.filter(owner_id=known)
        owner_id = conversations.values_list("owner_id", flat=True).first()
        if owner_id is None:
            return SummaryResult(None, [])
        sources = list(
            Node.objects.user_messages().in_conversation(conversation_id).filter(owner_id=owner_id, retrievable=True)
            .order_by("-pk")
            .values_list("pk", "content")[: settings.DELLM_SUMMARY_MAX_SOURCES]
        )[::-1]
        llm = get_llm()
        text = llm.summarize([content for _, content in sources]) if sources else ""
        try:
            with transaction.atomic():
                source_ids = [pk for pk, _ in sources]
                if sources_lock(source_ids, owner_id=owner_id) != set(source_ids):
                    raise SourcesChanged
                if not Conversation.objects.select_for_update().filter(pk=conversation_id, owner_id=owner_id).exists():
                    return SummaryResult(None, [])
                previous = Summary.objects.filter(conversation_id=conversation_id, node_owner_id=owner_id)
                version = max(previous.aggregate(v=Max("version"))["v"] or 0, after_version) + 1
                for old in previous.filter(status=DerivedStatus.ACTIVE):
                    old.status = DerivedStatus.SUPERSEDED
                    old.save(update_fields=["status", "retrievable"])
                if not text:
                    return SummaryResult(None, source_ids)
                summary = Summary.objects.create(
                    owner_id=owner_id,
                    conversation_id=conversation_id,
                    content=text,
                    version=version,
                    source_count=len(source_ids),
                    derivation={**llm.derivation(SUMMARY_INSTRUCTION), "rebuild_of": rebuild_of},
                )
                edges_record(context_ids=source_ids, dst_id=summary.pk, owner_id=owner_id)
                embedding_enqueue(summary.pk, owner_id, text)
                return SummaryResult(summary, source_ids)
        except SourcesChanged:
            continue
    raise SourcesChanged(f"conversation {conversation_id} kept changing while its summary was rebuilt")


def summary_due(*, conversation_id: int) -> bool:
    """A summary is refreshed every DELLM_SUMMARY_EVERY user messages."""
    every = settings.DELLM_SUMMARY_EVERY
    if every <= 0:
        return False
    count = Node.objects.user_messages().in_conversation(conversation_id).count()
    latest = Summary.objects.filter(conversation_id=conversation_id, status=DerivedStatus.ACTIVE).first()
    return count - (latest.source_count if latest else 0) >= every
