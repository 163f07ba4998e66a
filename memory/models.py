"""The store D: every item that can enter a context is a Node, in one id space.

Messages (chat.Message), and later summaries and extracted facts, are Node subclasses, so a
provenance edge is a plain pair of node ids and one traversal covers every kind.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector
from django.db import models
from pgvector.django import HnswIndex, VectorField


class NodeKind(models.TextChoices):
    MESSAGE = "message", "Message"
    SUMMARY = "summary", "Summary"
    FACT = "fact", "Fact"


class NodeQuerySet(models.QuerySet):
    def for_user(self, user) -> "NodeQuerySet":
        return self.filter(owner=user)

    def retrievable(self) -> "NodeQuerySet":
        """Items that may be put into a future context."""
        return self.filter(retrievable=True)


class Node(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="nodes")
    kind = models.CharField(max_length=16, choices=NodeKind.choices)
    content = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # False for items kept for display or history but never given to the LLM again.
    retrievable = models.BooleanField(default=True)

    objects = NodeQuerySet.as_manager()

    class Meta:
        indexes = [
            models.Index(fields=["owner", "kind", "created_at"]),
            # Keyword matching for forget requests (Postgres full-text search).
            GinIndex(SearchVector("content", config="english"), name="node_content_fts"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk}"


class Embedding(models.Model):
    """The vector of one node, for semantic retrieval (cosine distance, HNSW index)."""

    node = models.OneToOneField(Node, on_delete=models.CASCADE, primary_key=True, related_name="embedding")
    # Denormalised so the similarity search filters by owner without a join.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    vector = VectorField(dimensions=settings.DELLM_EMBEDDING_DIMENSIONS)
    backend = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            HnswIndex(
                name="embedding_vector_hnsw",
                fields=["vector"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            )
        ]
