"""The edges of G, written and read as plain pairs of node ids.

``context(m)`` is the sources of the edges into m: what the LLM was given for m, or what a derived
record was built from. Traversals over many edges (Dep) live in ``provenance.selectors``.
"""

from __future__ import annotations

from collections.abc import Iterable

from .models import Edge


def edges_record(*, context_ids: Iterable[int], dst_id: int, owner_id: int | None = None) -> list[Edge]:
    """Record one edge c -> dst for every c in context(dst), in context order. Call inside the
    transaction that stores dst, so nothing exists without its provenance. ``owner_id``: dst's owner (looked
    up when not given)."""
    seen: set[int] = set()
    edges = []
    for src_id in context_ids:
        if src_id in seen or src_id == dst_id:
            continue
        seen.add(src_id)
        edges.append(Edge(src_id=src_id, dst_id=dst_id, owner_id=owner_id))
    return Edge.objects.bulk_create(edges)


def context_ids(*, node_ids: Iterable[int], owner=None) -> dict[int, list[int]]:
    """context(m) for each m, as ordered lists of node ids (empty for nodes with no context). ``owner``: the
    user whose nodes these are; the read then touches only that user's edges (give it wherever it is known)."""
    ids = list(node_ids)
    out: dict[int, list[int]] = {i: [] for i in ids}
    edges = Edge.objects.filter(dst_id__in=ids)
    if owner is not None:
        edges = edges.filter(owner=owner)
    for src_id, dst_id in edges.order_by("pk").values_list("src_id", "dst_id"):
        out[dst_id].append(src_id)
    return out
