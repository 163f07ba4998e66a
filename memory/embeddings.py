"""Writes of vectors: one embedding per node, from the configured embedder."""

from __future__ import annotations

import numpy as np
from django.db import transaction

from dellm_site.ai.embedding import get_embedder

from .models import Embedding, Node


@transaction.atomic
def embedding_store(*, node_id: int, vector: np.ndarray | None = None) -> Embedding | None:
    """Embed one node (idempotent). Returns None when the node no longer exists (deleted meanwhile)."""
    node = Node.objects.select_for_update().filter(pk=node_id).first()
    if node is None:
        return None
    embedder = get_embedder()
    if vector is None:
        vector = embedder.embed_one(node.content)
    embedding, _ = Embedding.objects.update_or_create(
        node=node, defaults={"owner_id": node.owner_id, "vector": vector.tolist(), "backend": embedder.name}
    )
    return embedding


def text_embed(*, text: str) -> list[float]:
    """The vector of a text that is not stored (a question, a forget request), as plain floats."""
    return [float(x) for x in get_embedder().embed_one(text)]
