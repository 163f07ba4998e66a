"""Matching: M, the user's stored items a request names, each with the reason it matched."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from pgvector.django import CosineDistance

from dellm_site.errors import ApplicationError, NotFound
from memory.embeddings import text_embed
from memory.models import Embedding, Node

from .hooks import scope_resolve
from .resolution import Candidate, resolve

if TYPE_CHECKING:
    from dellm_site.types import User

# "conversation" is a scope: the chat app registers which items a conversation holds (hooks.py).
# "all" names everything the user has stored ("Clear all memory"; the account stays). "account" names the same
# for account deletion; the public API does not offer it.
EVERYTHING_MODES = ("all", "account")
MODES = ("ids", "exact", "keyword", "semantic", "natural", "conversation", *EVERYTHING_MODES)
# Items named outright: derived records among them are erased, not rebuilt.
NAMING_REASONS = ("id", *EVERYTHING_MODES)
TEXT_MODES = ("exact", "keyword", "semantic", "natural")
VECTOR_MODES = ("semantic", "natural")


@dataclass(frozen=True)
class Match:
    reason: str  # id | exact | keyword | semantic | conversation | all | account
    score: float | None = None


def _semantic_matches(*, user, vector: list[float], threshold: float) -> dict[int, Match]:
    rows = (
        Embedding.objects.filter(owner=user)
        .annotate(distance=CosineDistance("vector", vector))
        .filter(distance__lte=1.0 - threshold)
        .values_list("node_id", "distance")
    )
    return {node_id: Match("semantic", round(1.0 - float(distance), 4)) for node_id, distance in rows}


def _keyword_matches(*, user, text: str) -> dict[int, Match]:
    query = SearchQuery(text, config="english", search_type="plain")
    rows = (
        Node.objects.for_user(user)
        .annotate(search=SearchVector("content", config="english"))
        .filter(search=query)
        .annotate(rank=SearchRank(SearchVector("content", config="english"), query))
        .values_list("pk", "rank")
    )
    return {pk: Match("keyword", round(float(rank), 4)) for pk, rank in rows}


def resolved_matches(
    *,
    user,
    targets: list[str],
    vectors: list[list[float]] | None = None,
    threshold: float | None = None,
    fallback: str | None = None,
    fallback_vector: list[float] | None = None,
    context: str | None = None,
    context_vector: list[float] | None = None,
) -> tuple[dict[int, Match], list[dict]]:
    """M for a request in words (each target resolved against the user's statements and facts, alongside
    ``context``, the whole request, when given), and the possibly related items to offer unchecked. With an
    explicit ``threshold``, every stored item at least that similar in meaning to a target is matched too.
    ``fallback`` (the request's gist) is resolved when the targets match nothing."""
    resolution = resolve(user=user, targets=targets, vectors=vectors, fallback=fallback,
                         fallback_vector=fallback_vector, context=context, context_vector=context_vector)
    matched = {c.id: Match(c.reason, c.score) for c in resolution.matched}
    if threshold is not None and vectors:
        for vector in vectors:
            for pk, found in _semantic_matches(user=user, vector=vector, threshold=threshold).items():
                matched.setdefault(pk, found)
    related = [
        {"id": c.id, "score": c.score, "target": c.target, "why": related_why(c)}
        for c in resolution.related
        if c.id not in matched
    ]
    return matched, related


def related_why(candidate: Candidate) -> str:
    """Why an item is offered as possibly related, in plain words."""
    if candidate.words >= 0.3:
        return f"shares words with “{candidate.target}”"
    if candidate.kind:
        return f"is about the same kind of thing as “{candidate.target}” ({candidate.kind.replace('_', ' ')})"
    if candidate.meaning >= 0.5:
        return f"says something close to “{candidate.target}” in other words"
    return f"is about something near “{candidate.target}”"


def match(
    *,
    user: User,
    mode: str,
    query: str = "",
    message_ids: list[int] | None = None,
    threshold: float | None = None,
    conversation_id: int | None = None,
    query_vector: list[float] | None = None,
) -> dict[int, Match]:
    """M: the user's stored items named by the request, each with the reason it matched."""
    if mode in VECTOR_MODES and query_vector is None:
        query_vector = text_embed(text=query)
    nodes = Node.objects.for_user(user)
    if mode == "ids":
        ids = {int(i) for i in message_ids or []}
        found = set(nodes.filter(pk__in=ids).values_list("pk", flat=True))
        if ids - found:
            raise NotFound(f"No such items: {sorted(ids - found)}.")
        return {pk: Match("id") for pk in found}
    if mode == "conversation":
        return {pk: Match("conversation") for pk in scope_resolve(name=mode, user=user, scope_id=conversation_id)}
    if mode in EVERYTHING_MODES:
        return {pk: Match(mode) for pk in nodes.values_list("pk", flat=True)}
    if mode == "exact":
        return {pk: Match("exact") for pk in nodes.filter(content__icontains=query).values_list("pk", flat=True)}
    if mode == "keyword":
        return _keyword_matches(user=user, text=query)
    if mode in VECTOR_MODES:
        return resolved_matches(user=user, targets=[query], vectors=[query_vector], threshold=threshold)[0]
    raise ApplicationError(f"Unknown mode {mode!r}; use one of {', '.join(MODES)}.", code="invalid")


def match_now(
    *,
    user: User,
    mode: str,
    query: str,
    conversation_id: int | None,
    threshold: float | None,
    since: datetime,
    vectors: list[list[float]] | None = None,
) -> dict[int, Match]:
    """What a request being confirmed matches *now*: a scope's current items (the scope locked, so
    none is added until the wipe commits), or the items stored ``since`` its preview that its query
    matches. Items older than the preview stay as the user saw them decided."""
    if mode == "ids":
        return {}
    if mode == "conversation":
        try:
            ids = scope_resolve(name=mode, user=user, scope_id=conversation_id, lock=True)
        except NotFound:  # removed meanwhile, with everything in it
            return {}
        return {pk: Match("conversation") for pk in ids}
    if mode in EVERYTHING_MODES:
        return match(user=user, mode=mode)
    if mode in VECTOR_MODES:
        targets = [t for t in query.split("; ") if t.strip()]
        if not targets or not vectors:
            return {}
        found = resolved_matches(user=user, targets=targets, vectors=vectors, threshold=threshold)[0]
    else:
        found = match(user=user, mode=mode, query=query)
    recent = set(
        Node.objects.filter(pk__in=list(found), owner=user, created_at__gte=since).values_list("pk", flat=True)
    )
    return {pk: m for pk, m in found.items() if pk in recent}
