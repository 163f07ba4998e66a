"""Writes to the store D: embeddings of nodes."""

from __future__ import annotations

import numpy as np
from django.db import transaction

from .embeddings import get_embedder
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
