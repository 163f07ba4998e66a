"""Matching: M, the user's stored items a request names, each with the reason it matched."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from pgvector.django import CosineDistance

from dellm_site.errors import ApplicationError, NotFound
from memory.embeddings import text_embed
from memory.models import Embedding, Node

from .hooks import scope_resolve

if TYPE_CHECKING:
    from dellm_site.types import User

# "conversation" is a scope: the chat app registers which items a conversation holds (hooks.py).
# "account" names everything the user owns (account deletion); the public API does not offer it.
MODES = ("ids", "exact", "keyword", "semantic", "natural", "conversation", "account")
# Items named outright: derived records among them are erased, not rebuilt.
NAMING_REASONS = ("id", "account")
TEXT_MODES = ("exact", "keyword", "semantic", "natural")
VECTOR_MODES = ("semantic", "natural")


@dataclass(frozen=True)
class Match:
    reason: str  # id | exact | keyword | semantic | conversation | account
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
    if mode == "account":
        return {pk: Match("account") for pk in nodes.values_list("pk", flat=True)}
    if mode == "exact":
        return {pk: Match("exact") for pk in nodes.filter(content__icontains=query).values_list("pk", flat=True)}
    if mode == "keyword":
        return _keyword_matches(user=user, text=query)
    if mode == "semantic":
        return _semantic_matches(user=user, vector=query_vector, threshold=threshold)
    if mode == "natural":
        # Keyword second, so an item found both ways is explained by its words.
        return {
            **_semantic_matches(user=user, vector=query_vector, threshold=threshold),
            **_keyword_matches(user=user, text=query),
        }
    raise ApplicationError(f"Unknown mode {mode!r}; use one of {', '.join(MODES)}.", code="invalid")
