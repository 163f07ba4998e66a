"""Writes of vectors: one embedding per node, from the configured embedder."""

from __future__ import annotations

import numpy as np
from django.db import transaction

from dellm_site.ai.embedding import get_embedder

from .models import Embedding, Node


@transaction.atomic
def embedding_store(*, node_id: int, vector: np.ndarray | None = None, owner_id: int | None = None) -> Embedding | None:
    """Embed one node (idempotent). Returns None when the node no longer exists (deleted meanwhile). ``owner_id``:
    the node's owner, when the caller knows it (the reads are then the owner's only)."""
    nodes = Node.objects.select_for_update().filter(pk=node_id)
    node = (nodes if owner_id is None else nodes.filter(owner_id=owner_id)).first()
    if node is None:
        return None
    embedder = get_embedder()
    if vector is None:
        vector = embedder.embed_one(node.content)
    embedding, _ = Embedding.objects.update_or_create(
        node=node, owner_id=node.owner_id, defaults={"vector": vector.tolist(), "backend": embedder.name}
    )
    return embedding


def embedding_add(*, node: Node, vector: np.ndarray) -> Embedding:
    """Store the vector of a node created in the current transaction, computed by the caller from the node's own
    text with the configured embedder (a chat turn embeds its question anyway): one insert, no second embedding."""
    return Embedding.objects.create(
        node=node, owner_id=node.owner_id, vector=vector.tolist(), backend=get_embedder().name
    )


def text_embed(*, text: str) -> list[float]:
    """The vector of a text that is not stored (a question, a forget request), as plain floats."""
    return [float(x) for x in get_embedder().embed_one(text)]
