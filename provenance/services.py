"""Writes to the graph G."""

from __future__ import annotations

from collections.abc import Iterable

from .models import Edge


def edges_record(*, context_ids: Iterable[int], dst_id: int) -> list[Edge]:
    """Record one edge c -> dst for every c in context(dst), in context order. Call inside the
    transaction that stores dst, so a reply never exists without its provenance."""
    seen: set[int] = set()
    edges = []
    for src_id in context_ids:
        if src_id in seen or src_id == dst_id:
            continue
        seen.add(src_id)
        edges.append(Edge(src_id=src_id, dst_id=dst_id))
    return Edge.objects.bulk_create(edges)
