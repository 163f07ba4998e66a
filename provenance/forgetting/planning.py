"""Planning: Dep(M), what is tainted (and the shortest path that explains why), what is derived.

Strict by default: all of Dep(M) goes. The user may relax it in the preview (a taint depth k, or
items to keep); the confirmed set is recomputed at execution so replies written meanwhile are not missed.
A derived record (fact, summary) built only from items that go, goes too, whatever the depth: it
holds nothing but their content.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import connection

from memory.models import Node, NodeKind

from ..models import DeletionRequest
from ..selectors import DepEntry, dep_explained
from .matching import NAMING_REASONS, Match

if TYPE_CHECKING:
    from dellm_site.types import User

DERIVED_KINDS = (NodeKind.SUMMARY, NodeKind.FACT)


def _describe(nodes: dict[int, tuple[str, str | None]], pk: int) -> str:
    kind, role = nodes.get(pk, (None, None))
    if kind is None:
        return f"item {pk}"
    if kind == NodeKind.MESSAGE:
        return f"{'reply' if role == 'assistant' else 'message'} {pk}"
    return f"{kind} {pk}"


def explanation(path: list[int], nodes: dict[int, tuple[str, str | None]]) -> str:
    """'reply 8 used message 4 in its context, and message 4 used message 1' (``nodes``: each item's kind and,
    for a message, its role)."""
    steps = [f"{_describe(nodes, dst)} used {_describe(nodes, src)}" for src, dst in zip(path, path[1:], strict=False)]
    steps.reverse()
    if not steps:
        return ""
    return steps[0] + " in its context" + "".join(f", and {s}" for s in steps[1:])


# The derived records (facts, summaries) outside ``ids`` that something in ``ids`` was used to build and that have
# no source outside ``ids``, each with its greatest source in ``ids``. The ids go as one array parameter: an IN list
# of a few hundred ids cost more to build and send than the query took.
_DERIVED_ORPHANS_SQL = """
SELECT e.dst_id, max(e.src_id) FROM provenance_edge e JOIN memory_node d ON d.id = e.dst_id
WHERE e.owner_id = %(owner)s AND e.src_id = ANY(%(ids)s) AND d.owner_id = %(owner)s AND d.kind = ANY(%(kinds)s)
  AND NOT (e.dst_id = ANY(%(ids)s))
  AND NOT EXISTS (
    SELECT FROM provenance_edge o WHERE o.owner_id = %(owner)s AND o.dst_id = e.dst_id AND NOT (o.src_id = ANY(%(ids)s))
  )
GROUP BY e.dst_id
"""


def derived_orphans(*, user: User, ids: set[int]) -> dict[int, int]:
    """Derived records outside ``ids`` (the user's) all of whose sources are in ``ids``, each with one of its
    sources."""
    if not ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(_DERIVED_ORPHANS_SQL, {"owner": user.pk, "ids": sorted(ids), "kinds": list(DERIVED_KINDS)})
        return dict(cursor.fetchall())


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
    nodes = {pk: (kind, role) for pk, kind, role in
             Node.objects.filter(owner=user, pk__in=list(dep)).values_list("pk", "kind", "message__role")}
    out: dict = {"matched": [], "tainted": [], "derived": []}
    for pk, m in sorted(matched.items()):
        entry = {"id": pk, "reason": m.reason}
        if m.score is not None:
            entry["score"] = m.score
        out["matched"].append(entry)
    for entry in sorted(dep.values(), key=lambda e: (e.depth, e.id)):
        kind = nodes[entry.id][0]
        if kind in DERIVED_KINDS:
            named = entry.id in matched and matched[entry.id].reason in NAMING_REASONS
            out["derived"].append({"id": entry.id, "kind": kind, "action": "erase" if named else "rebuild"})
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
