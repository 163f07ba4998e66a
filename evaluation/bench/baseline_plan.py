"""The baseline of ``dep_plan_p95_ms``: the forget preview's plan (Dep, shortest explaining paths, derived
records) exactly as ``provenance.selectors`` and ``provenance.forgetting.planning`` computed it when the scale
benchmark was written, frozen here so that any later change to them is measured against it side by side.

Dep: one recursive query over the edge table from the seeds (the owner checked on the seeds and on the
result, not on the way); the edges inside Dep in a second query, walked breadth-first in Python for the
paths; the derived records left without sources in two more; the nodes, with their messages, in a fifth.
"""

from __future__ import annotations

from collections import defaultdict, deque

from django.db import connection

from memory.models import Edge, Node, NodeKind

DERIVED_KINDS = (NodeKind.SUMMARY, NodeKind.FACT)

_DEP_SQL = """
WITH RECURSIVE dep(id) AS (
    SELECT n.id FROM memory_node n WHERE n.id = ANY(%(seeds)s) AND n.owner_id = %(owner)s
  UNION
    SELECT e.dst_id FROM provenance_edge e JOIN dep ON e.src_id = dep.id
)
SELECT dep.id FROM dep JOIN memory_node n ON n.id = dep.id WHERE n.owner_id = %(owner)s
"""
_EDGES_WITHIN_SQL = """
SELECT e.src_id, e.dst_id FROM provenance_edge e
WHERE e.src_id = ANY(%(ids)s) AND e.dst_id = ANY(%(ids)s)
ORDER BY e.src_id, e.dst_id
"""


def _dep_explained(*, owner: int, seeds: set[int]) -> dict[int, tuple[int, list[int]]]:
    with connection.cursor() as cursor:
        cursor.execute(_DEP_SQL, {"seeds": sorted(seeds), "owner": owner})
        members = {row[0] for row in cursor.fetchall()}
        if not members:
            return {}
        cursor.execute(_EDGES_WITHIN_SQL, {"ids": list(members)})
        children: dict[int, list[int]] = defaultdict(list)
        for src, dst in cursor.fetchall():
            children[src].append(dst)
    found = {seed: (0, [seed]) for seed in sorted(seeds & members)}
    queue = deque(found)
    while queue:
        current = queue.popleft()
        depth, path = found[current]
        for child in children[current]:
            if child not in found:
                found[child] = (depth + 1, [*path, child])
                queue.append(child)
    return found


def _derived_orphans(ids: set[int]) -> dict[int, int]:
    built = dict(
        Edge.objects.filter(src_id__in=ids, dst__kind__in=DERIVED_KINDS)
        .exclude(dst_id__in=ids)
        .order_by("dst_id", "src_id")
        .values_list("dst_id", "src_id")
    )
    backed = set(Edge.objects.filter(dst_id__in=list(built)).exclude(src_id__in=ids).values_list("dst_id", flat=True))
    return {pk: source for pk, source in built.items() if pk not in backed}


def _describe(nodes: dict[int, Node], pk: int) -> str:
    node = nodes.get(pk)
    if node is None:
        return f"item {pk}"
    if node.kind == NodeKind.MESSAGE:
        role = getattr(getattr(node, "message", None), "role", "user")
        return f"{'reply' if role == 'assistant' else 'message'} {pk}"
    return f"{node.kind} {pk}"


def plan_baseline(*, owner: int, seeds: set[int]) -> dict:
    """The preview's matched/tainted/derived lists for the seeds (strict: no depth limit, nothing kept)."""
    dep = _dep_explained(owner=owner, seeds=seeds)
    for pk, source in _derived_orphans(set(dep)).items():
        depth, path = dep[source]
        dep[pk] = (depth + 1, [*path, pk])
    nodes = Node.objects.select_related("message").in_bulk(list(dep))
    out: dict = {"matched": [{"id": pk, "reason": "id"} for pk in sorted(seeds)], "tainted": [], "derived": []}
    for pk, (depth, path) in sorted(dep.items(), key=lambda item: (item[1][0], item[0])):
        if nodes[pk].kind in DERIVED_KINDS:
            out["derived"].append({"id": pk, "kind": nodes[pk].kind, "action": "erase" if pk in seeds else "rebuild"})
        if pk in seeds:
            continue
        steps = [f"{_describe(nodes, b)} used {_describe(nodes, a)}" for a, b in zip(path, path[1:], strict=False)]
        steps.reverse()
        text = steps[0] + " in its context" + "".join(f", and {s}" for s in steps[1:]) if steps else ""
        out["tainted"].append({"id": pk, "depth": depth, "path": path, "explanation": text})
    return out
