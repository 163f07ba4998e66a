"""Reads over the store D: short descriptions of nodes, and the user's derived memory."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from dellm_site.errors import NotFound

from .graph import context_ids
from .models import DerivedStatus, Fact, Node, Summary

if TYPE_CHECKING:
    from dellm_site.types import User

EXCERPT_LENGTH = 140


def node_summaries(*, user: User, node_ids: Iterable[int]) -> dict[str, dict]:
    """Short descriptions of the user's nodes (kind, role, conversation, excerpt), keyed by id."""
    nodes = Node.objects.for_user(user).filter(pk__in=set(node_ids)).select_related("message")
    out = {}
    for node in nodes:
        message = getattr(node, "message", None)
        text = node.content if len(node.content) <= EXCERPT_LENGTH else node.content[: EXCERPT_LENGTH - 1] + "…"
        out[str(node.pk)] = {
            "kind": node.kind,
            "role": message.role if message else None,
            "conversation": message.conversation_id if message else None,
            "excerpt": text,
        }
    return out


def node_contents(*, node_ids: Iterable[int]) -> list[str]:
    """The texts of the given nodes (e.g. a reply's context, to count what the LLM read)."""
    return list(Node.objects.filter(pk__in=list(node_ids)).values_list("content", flat=True))


def _fact_row(fact: Fact, sources: list[int]) -> dict:
    return {"id": fact.pk, "content": fact.content, "sources": sources, "version": fact.version,
            "status": fact.status, "rectified": fact.rectified, "supersedes": fact.supersedes_id,
            "derivation": fact.derivation, "rebuilt_at": fact.rebuilt_at}


def _summary_row(summary: Summary, sources: list[int]) -> dict:
    return {"id": summary.pk, "conversation": summary.conversation_id, "content": summary.content,
            "sources": sources, "version": summary.version, "status": summary.status,
            "derivation": summary.derivation, "rebuilt_at": summary.rebuilt_at}


def facts_of_message(*, message_id: int, owner=None) -> list[dict]:
    """The current facts taken from one message (``{id, content}``), oldest first: what a "Memory updated"
    note names. ``owner``: the message's owner, when known (the read is then the owner's only)."""
    facts = Fact.objects.filter(in_edges__src_id=message_id, status=DerivedStatus.ACTIVE).order_by("pk")
    if owner is not None:
        facts = facts.filter(owner=owner)
    return [{"id": pk, "content": content} for pk, content in facts.values_list("pk", "content")]


def memory_overview(*, user: User) -> dict:
    """The Memory panel: the user's facts (with history) and summaries, with their sources."""
    facts = list(Fact.objects.filter(owner=user).order_by("-pk"))
    summaries = list(Summary.objects.filter(owner=user).order_by("-pk"))
    sources = context_ids(node_ids=[n.pk for n in facts + summaries], owner=user)
    return {
        "facts": [_fact_row(f, sources[f.pk]) for f in facts],
        "summaries": [_summary_row(s, sources[s.pk]) for s in summaries],
    }


def fact_detail(*, user: User, fact_id: int) -> dict:
    """One of the user's facts as the Memory panel shows it; anyone else's is a 404."""
    fact = Fact.objects.filter(owner=user, pk=fact_id).first()
    if fact is None:
        raise NotFound("Fact not found.")
    return _fact_row(fact, context_ids(node_ids=[fact.pk], owner=user)[fact.pk])


def message_conversations(*, user: User, node_ids: Iterable[int]) -> dict[int, int]:
    """For those of ``node_ids`` that are the user's messages: their conversation id."""
    return dict(
        Node.objects.for_user(user).filter(pk__in=set(node_ids)).exclude(message=None)
        .values_list("pk", "message__conversation_id")
    )


def conversation_titles(*, user: User) -> dict[int, str]:
    """The titles of the user's summarised conversations (a placeholder for an untitled one)."""
    rows = Summary.objects.filter(owner=user).values_list("conversation_id", "conversation__title").distinct()
    return {pk: title or f"Conversation {pk}" for pk, title in rows}
