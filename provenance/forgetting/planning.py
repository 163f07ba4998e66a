"""Planning: Dep(M), what is tainted (and the shortest path that explains why), what is derived.

Strict by default: all of Dep(M) goes. The user may relax it in the preview (a taint depth k, or
items to keep); the confirmed set is recomputed at execution so replies written meanwhile are not missed.
A derived record (fact, summary) built only from items that go, goes too, whatever the depth: it
holds nothing but their content.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.models import Edge, Node, NodeKind

from ..models import DeletionRequest
from ..selectors import DepEntry, dep_explained
from .matching import NAMING_REASONS, Match

if TYPE_CHECKING:
    from dellm_site.types import User

DERIVED_KINDS = (NodeKind.SUMMARY, NodeKind.FACT)


def _describe(nodes: dict[int, Node], pk: int) -> str:
    node = nodes.get(pk)
    if node is None:
        return f"item {pk}"
    if node.kind == NodeKind.MESSAGE:
        role = getattr(getattr(node, "message", None), "role", "user")
        return f"{'reply' if role == 'assistant' else 'message'} {pk}"
    return f"{node.kind} {pk}"


def explanation(path: list[int], nodes: dict[int, Node]) -> str:
    """'reply 8 used message 4 in its context, and message 4 used message 1'."""
    steps = [f"{_describe(nodes, dst)} used {_describe(nodes, src)}" for src, dst in zip(path, path[1:], strict=False)]
    steps.reverse()
    if not steps:
        return ""
    return steps[0] + " in its context" + "".join(f", and {s}" for s in steps[1:])


def derived_orphans(*, user: User, ids: set[int]) -> dict[int, int]:
    """Derived records outside ``ids`` (the user's) all of whose sources are in ``ids``, each with one of its
    sources."""
    if not ids:
        return {}
    edges = Edge.objects.filter(owner=user)
    built = dict(
        edges.filter(src_id__in=ids, dst__kind__in=DERIVED_KINDS)
        .exclude(dst_id__in=ids)
        .order_by("dst_id", "src_id")
        .values_list("dst_id", "src_id")
    )
    backed = set(edges.filter(dst_id__in=list(built)).exclude(src_id__in=ids).values_list("dst_id", flat=True))
    return {pk: source for pk, source in built.items() if pk not in backed}


def dep_closed(
    *, user: User, seeds: set[int], depth: int | None, kept: set[int] | frozenset[int] = frozenset()
) -> dict[int, DepEntry]:
    """Dep(M) within ``depth``, less what is kept, plus the derived records left with no other source."""
    dep = {pk: e for pk, e in dep_explained(user=user, seeds=seeds, max_depth=depth).items() if pk not in kept}
    for pk, source in derived_orphans(user=user, ids=set(dep)).items():
        if pk not in kept:
            via = dep[source]
            dep[pk] = DepEntry(id=pk, depth=via.depth + 1, path=[*via.path, pk])
    return dep


def plan(*, user: User, matched: dict[int, Match], depth: int | None) -> dict:
    """The preview's content: matched, tainted (with shortest path and explanation), derived."""
    dep = dep_closed(user=user, seeds=set(matched), depth=depth)
    nodes = Node.objects.filter(owner=user).select_related("message").in_bulk(list(dep))
    out: dict = {"matched": [], "tainted": [], "derived": []}
    for pk, m in sorted(matched.items()):
        entry = {"id": pk, "reason": m.reason}
        if m.score is not None:
            entry["score"] = m.score
        out["matched"].append(entry)
    for entry in sorted(dep.values(), key=lambda e: (e.depth, e.id)):
        node = nodes[entry.id]
        if node.kind in DERIVED_KINDS:
            named = entry.id in matched and matched[entry.id].reason in NAMING_REASONS
            out["derived"].append({"id": entry.id, "kind": node.kind, "action": "erase" if named else "rebuild"})
        if entry.id in matched:
            continue
        out["tainted"].append(
            {"id": entry.id, "depth": entry.depth, "path": entry.path, "explanation": explanation(entry.path, nodes)}
        )
    return out


def plan_ids(the_plan: dict) -> set[int]:
    """Every item a preview would delete (matched and tainted)."""
    return {e["id"] for e in the_plan["matched"]} | {e["id"] for e in the_plan["tainted"]}


def closure(*, user: User, request: DeletionRequest) -> set[int]:
    """The confirmed set, as of now: Dep(M) (within the chosen depth) minus what the user keeps,
    with the derived records that would be left with no source."""
    seeds = {e["id"] for e in request.plan.get("matched", [])}
    return set(dep_closed(user=user, seeds=seeds, depth=request.depth, kept=set(request.kept)))
