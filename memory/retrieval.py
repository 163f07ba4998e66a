"""Context construction: which stored items the LLM is given for a new message."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from django.conf import settings
from pgvector.django import CosineDistance

from dellm_site.ai.embedding import get_embedder

from .models import Embedding, Node

if TYPE_CHECKING:
    from dellm_site.types import User


@dataclass(frozen=True)
class ScoredNode:
    node: Node
    score: float


def context_retrieve(
    *,
    user: User,
    query_vector: np.ndarray,
    exclude_ids: set[int] | frozenset[int] = frozenset(),
    top_k: int | None = None,
    min_similarity: float | None = None,
) -> list[ScoredNode]:
    """The paper's context construction: the user's top-k stored items by cosine similarity
    to the query, keeping only those at or above ``min_similarity``. No recent-turns window."""
    top_k = settings.DELLM_CONTEXT_TOP_K if top_k is None else top_k
    min_similarity = settings.DELLM_CONTEXT_MIN_SIMILARITY if min_similarity is None else min_similarity
    if top_k <= 0:
        return []
    distance = CosineDistance("vector", query_vector.tolist())
    rows = (
        Embedding.objects.filter(owner=user, node__retrievable=True, node__kind__in=settings.DELLM_CONTEXT_KINDS)
        .exclude(node_id__in=exclude_ids)
        .annotate(distance=distance)
        .filter(distance__lte=1.0 - min_similarity)
        .order_by("distance", "node_id")
        .select_related("node")[:top_k]
    )
    return [ScoredNode(node=row.node, score=1.0 - float(row.distance)) for row in rows]


def context_for(*, user: User, text: str, exclude_ids: set[int] | frozenset[int] = frozenset()) -> list[ScoredNode]:
    """context(m) minus the user message itself: the user's stored items most similar to ``text``."""
    return context_retrieve(user=user, query_vector=get_embedder().embed_one(text), exclude_ids=exclude_ids)
