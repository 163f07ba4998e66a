"""Reads over the graph G, in the paper's words.

- ``context(m)``: the sources of the edges into m (``memory.graph.context_ids``).
- ``Dep(M)``: M and every node reachable from M along edges, found by one recursive query over
  the edge table; the shortest explaining path of each member is then found by a breadth-first
  walk over the edges *inside* Dep(M) only (one more query), never the user's whole graph.
"""

from __future__ import annotations

import uuid
from collections import defaultdict, deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import connection
from django.db.models import Count, QuerySet

from dellm_site.errors import ApplicationError, NotFound
from dellm_site.types import RequestId
from memory.models import Node
from memory.selectors import node_summaries

from .models import DeletionRequest, DeletionStatus

if TYPE_CHECKING:
    from dellm_site.types import User

# Dep(M): the seeds the user owns and every node reachable from them (``members``).
_DEP_CTE = """
WITH RECURSIVE dep(id) AS (
    SELECT n.id FROM memory_node n WHERE n.id = ANY(%(seeds)s) AND n.owner_id = %(owner)s
  UNION
    SELECT e.dst_id FROM provenance_edge e JOIN dep ON e.src_id = dep.id WHERE e.owner_id = %(owner)s
),
members AS MATERIALIZED (SELECT dep.id FROM dep JOIN memory_node n ON n.id = dep.id WHERE n.owner_id = %(owner)s)
"""
_DEP_SQL = _DEP_CTE + "SELECT id FROM members"
# Dep(M) and the edges among its members, in one query: each member with each of its children (NULL for none).
_DEP_EDGES_SQL = _DEP_CTE + """
SELECT m.id, e.dst_id FROM members m
LEFT JOIN provenance_edge e ON e.src_id = m.id AND e.owner_id = %(owner)s AND e.dst_id IN (SELECT id FROM members)
ORDER BY m.id, e.dst_id
"""


@dataclass(frozen=True)
class DepEntry:
    id: int
    depth: int
    path: list[int]  # from a seed to this node, seed first


def dep_ids(*, user: User, seeds: Iterable[int]) -> set[int]:
    """Dep(M): the seeds the user owns and every node reachable from them."""
    seeds = list({int(s) for s in seeds})
    if not seeds:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(_DEP_SQL, {"seeds": seeds, "owner": user.pk})
        return {row[0] for row in cursor.fetchall()}


def dep_explained(*, user: User, seeds: Iterable[int], max_depth: int | None = None) -> dict[int, DepEntry]:
    """Dep(M) with, for each member, its distance from M and one shortest path from a seed.
    With ``max_depth`` = k, only members within k edges of a seed are returned."""
    seeds = {int(s) for s in seeds}
    if not seeds:
        return {}
    members: set[int] = set()
    children: dict[int, list[int]] = defaultdict(list)
    with connection.cursor() as cursor:
        cursor.execute(_DEP_EDGES_SQL, {"seeds": sorted(seeds), "owner": user.pk})
        for src_id, dst_id in cursor.fetchall():
            members.add(src_id)
            if dst_id is not None:
                children[src_id].append(dst_id)
    if not members:
        return {}
    found: dict[int, DepEntry] = {}
    queue: deque[int] = deque()
    for seed in sorted(seeds & members):
        found[seed] = DepEntry(id=seed, depth=0, path=[seed])
        queue.append(seed)
    while queue:
        current = found[queue.popleft()]
        if max_depth is not None and current.depth >= max_depth:
            continue
        for child in children[current.id]:
            if child not in found:
                found[child] = DepEntry(id=child, depth=current.depth + 1, path=[*current.path, child])
                queue.append(child)
    return found


def node_influence(*, user: User, node_id: int) -> list[DepEntry]:
    """Every node that ``node_id`` influenced, directly or through others (Dep minus itself),
    nearest first, each with the shortest path from ``node_id``."""
    entries = dep_explained(user=user, seeds=[node_id])
    return sorted((e for e in entries.values() if e.id != node_id), key=lambda e: (e.depth, e.id))


def deletion_request_list(*, user: User) -> QuerySet[DeletionRequest]:
    """The user's forget requests, newest first."""
    return DeletionRequest.objects.filter(owner=user).order_by("-created_at")


def deletion_request_get(*, user: User, request_id: RequestId, lock: bool = False) -> DeletionRequest:
    """One of the user's forget requests (locked for update if asked); anyone else's is a 404."""
    try:
        request_uuid = uuid.UUID(str(request_id))
    except ValueError:
        raise NotFound("Forget request not found.") from None
    queryset = DeletionRequest.objects.filter(owner=user, pk=request_uuid)
    if lock:
        queryset = queryset.select_for_update()
    found = queryset.first()
    if found is None:
        raise NotFound("Forget request not found.")
    return found


PREVIEW_LISTS = ("matched", "tainted", "related")
# An item deleted since the preview was made is listed without a description.
_GONE = {"kind": None, "role": None, "conversation": None, "excerpt": None}


def _described(*, request: DeletionRequest, entries: list[dict], stored_only: bool = False) -> list[dict]:
    items = node_summaries(user=request.owner, node_ids={e["id"] for e in entries}) if request.owner else {}
    return [{**e, **items.get(str(e["id"]), _GONE)} for e in entries if not stored_only or str(e["id"]) in items]


def preview_summary(*, request: DeletionRequest) -> dict:
    """Counts of a preview: items per list, and the matched and tainted items still stored by kind and by
    conversation (the largest first), in one query whatever the preview's size."""
    plan = request.plan
    ids = sorted({e["id"] for key in ("matched", "tainted") for e in plan.get(key, [])})
    by_kind: dict[str, int] = defaultdict(int)
    by_conversation: dict[int | None, int] = defaultdict(int)
    if request.owner is not None and ids:
        rows = (
            Node.objects.for_user(request.owner).filter(pk__in=ids)
            .values_list("kind", "message__conversation_id").annotate(items=Count("pk")).order_by()
        )
        for kind, conversation, items in rows:
            by_kind[kind] += items
            by_conversation[conversation] += items
    conversations = sorted(by_conversation.items(), key=lambda c: (-c[1], c[0] is None, c[0] or 0))
    return {
        **{key: len(plan.get(key, [])) for key in PREVIEW_LISTS},
        "derived": len(plan.get("derived", [])),
        "by_kind": dict(sorted(by_kind.items())),
        "by_conversation": [{"conversation": c, "items": n} for c, n in conversations],
        "page_size": settings.DELLM_FORGET_PREVIEW_PAGE,
    }


def preview_data(*, request: DeletionRequest) -> dict:
    """The preview as the API and the Forget panel show it: ids, reasons, paths, and for items that still
    exist, their kind, role, conversation and an excerpt. A large one lists the first
    DELLM_FORGET_PREVIEW_PAGE items of each list, with ``summary`` counting them all and ``next`` naming where
    each list goes on (``preview_items``); a running deletion job adds its ``progress``."""
    from .forgetting.jobs import job_progress  # the job's progress is written by the forgetting package

    plan = request.plan
    page = settings.DELLM_FORGET_PREVIEW_PAGE
    lists = {key: plan.get(key, []) for key in PREVIEW_LISTS}
    data = {
        "request_id": str(request.pk),
        "status": request.status,
        "mode": request.mode,
        "query": request.working.get("target") if request.status == DeletionStatus.PREVIEWED else None,
        "depth": request.depth,
        "threshold": request.threshold,
        "expires_at": request.expires_at.isoformat(),
        "matched": _described(request=request, entries=lists["matched"][:page]),
        "tainted": _described(request=request, entries=lists["tainted"][:page]),
        "derived": [{"id": e["id"], "kind": e["kind"], "action": e["action"]} for e in plan.get("derived", [])],
        # Offered, unchecked: items that may hold the same information (only those still stored).
        "related": _described(request=request, entries=lists["related"][:page], stored_only=True),
        "summary": preview_summary(request=request),
        "next": {
            key: f"/api/forget/{request.pk}/items/?list={key}&offset={page}&limit={page}"
            for key, entries in lists.items()
            if len(entries) > page
        },
    }
    if request.status in (DeletionStatus.EXECUTING, DeletionStatus.VERIFYING):
        data["progress"] = job_progress(request.pk)
    return data


def preview_items(*, request: DeletionRequest, which: str, offset: int, limit: int) -> dict:
    """One page of a preview's list (``matched``, ``tainted`` or ``related``), described as in the preview:
    ``{count, next, previous, results}``."""
    if which not in PREVIEW_LISTS:
        raise ApplicationError(f"list must be one of {', '.join(PREVIEW_LISTS)}.", code="invalid")
    entries = request.plan.get(which, [])
    offset, limit = max(0, offset), max(1, min(limit, settings.DELLM_FORGET_PREVIEW_PAGE))

    def page_url(at: int) -> str:
        return f"/api/forget/{request.pk}/items/?list={which}&offset={at}&limit={limit}"

    return {
        "count": len(entries),
        "next": page_url(offset + limit) if offset + limit < len(entries) else None,
        "previous": page_url(max(0, offset - limit)) if offset > 0 else None,
        "results": _described(
            request=request, entries=entries[offset : offset + limit], stored_only=which == "related"
        ),
    }


def nodes_owned(*, user: User, node_ids: Iterable[int]) -> list[int]:
    """Which of ``node_ids`` are still stored and the user's."""
    return list(Node.objects.for_user(user).filter(pk__in=list(node_ids)).values_list("pk", flat=True))


def manifest_data(*, user: User, manifest: dict) -> dict:
    """A manifest as the API and the Forget panel show it: each possible residue still stored gets its
    excerpt and the tokens at its spans, read from the item itself (the manifest stores neither)."""
    verification = manifest.get("verification") or {}
    residue = verification.get("possible_residue") or []
    if not residue:
        return manifest
    ids = [e["id"] for e in residue]
    contents = dict(Node.objects.for_user(user).filter(pk__in=ids).values_list("pk", "content"))
    summaries = node_summaries(user=user, node_ids=ids)
    shown = []
    for entry in residue:
        text = contents.get(entry["id"])  # None: forgotten since, listed by id only
        shown.append(
            {
                **entry,
                "excerpt": summaries[str(entry["id"])]["excerpt"] if text is not None else None,
                "tokens": list(dict.fromkeys(text[a:b] for a, b in entry.get("spans", []))) if text is not None else [],
            }
        )
    return {**manifest, "verification": {**verification, "possible_residue": shown}}
