"""The graph G: an edge src -> dst when src was in the context given to the LLM for dst."""

from __future__ import annotations

from django.db import models

from memory.models import Node


class Edge(models.Model):
    src = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="out_edges")
    dst = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="in_edges")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["src", "dst"], name="edge_unique_src_dst"),
            models.CheckConstraint(condition=~models.Q(src=models.F("dst")), name="edge_no_self_loop"),
        ]
        # The unique constraint indexes (src, dst) for forward walks; this one serves backward walks.
        indexes = [models.Index(fields=["dst", "src"], name="edge_dst_src")]

    def __str__(self) -> str:
        return f"{self.src_id} -> {self.dst_id}"
