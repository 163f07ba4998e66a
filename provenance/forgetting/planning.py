"""Planning: Dep(M), what is tainted (and the shortest path that explains why), what is derived.

Strict by default: all of Dep(M) goes. The user may relax it in the preview (a taint depth k, or
items to keep); the confirmed set is recomputed at execution so replies written meanwhile are not missed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memory.models import Node, NodeKind

from ..models import DeletionRequest
from ..selectors import dep_explained
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


def plan(*, user: User, matched: dict[int, Match], depth: int | None) -> dict:
    """The preview's content: matched, tainted (with shortest path and explanation), derived."""
    dep = dep_explained(user=user, seeds=matched.keys(), max_depth=depth)
    nodes = Node.objects.select_related("message").in_bulk(list(dep))
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
    """The confirmed set, as of now: Dep(M) (within the chosen depth) minus what the user keeps."""
    seeds = {e["id"] for e in request.plan.get("matched", [])}
    members = set(dep_explained(user=user, seeds=seeds, max_depth=request.depth))
    return members - set(request.kept)
