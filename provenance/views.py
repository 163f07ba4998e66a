"""Server-rendered pages of forgetting: the user's deletion history and one manifest.

They show what a deletion did (when, how, how many items per store, the verification result, the
relaxation chosen) and the ids involved, never content: not even the words of the request."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import render

from . import selectors
from .manifest import STORES, Manifest
from .models import DeletionRequest, DeletionStatus

MODE_LABELS = {
    "ids": "chosen items",
    "exact": "exact text",
    "keyword": "keywords",
    "semantic": "meaning",
    "natural": "request in words",
    "conversation": "whole conversation",
    "all": "all memory",
}
CONFIRMED = (DeletionStatus.EXECUTING, DeletionStatus.VERIFYING, DeletionStatus.COMPLETED)
PAGE_SIZE = 50
REBUILD_LABELS = {
    "erased": "erased (you named it)",
    "dropped": "dropped",
    "pending": "being rebuilt from what remains",
    "done": "rebuilt from what remains",
    "failed": "rebuild failed",
}


def _relaxation(request: DeletionRequest) -> dict:
    """Strict, or how the user relaxed it (a taint depth, items kept)."""
    kept = list(request.manifest.get("kept", request.kept) if request.manifest else request.kept)
    depth = request.manifest.get("depth", request.depth) if request.manifest else request.depth
    parts = []
    if depth is not None:
        parts.append(f"depth {depth}")
    if kept:
        parts.append(f"{len(kept)} kept")
    return {"strict": not parts, "label": ", ".join(parts) if parts else "strict", "depth": depth, "kept": kept}


def _row(request: DeletionRequest) -> dict:
    """One request as the history shows it: ids, counts and outcomes only."""
    manifest = request.manifest or {}
    deleted = manifest.get("deleted") or {}
    verification = manifest.get("verification") or {}
    plan = request.plan or {}
    return {
        "id": request.pk,
        "status": request.status,
        "status_label": request.get_status_display(),
        "mode": request.mode,
        "mode_label": MODE_LABELS.get(request.mode, request.mode),
        "created_at": request.created_at,
        "confirmed_at": request.confirmed_at,
        "completed_at": request.completed_at,
        "expires_at": request.expires_at,
        "confirmed": request.status in CONFIRMED,
        "completed": request.status == DeletionStatus.COMPLETED,
        "counts": [(store, deleted.get(store, 0)) for store in STORES] if deleted else [],
        "deleted_total": sum(deleted.get(store, 0) for store in ("messages", "summaries", "facts")),
        "residual_hits": verification.get("residual_hits"),
        "possible_residue": len(verification.get("possible_residue") or [])
        + (verification.get("possible_residue_more") or 0),
        "relaxation": _relaxation(request),
        "planned_matched": len(plan.get("matched", [])),
        "planned_tainted": len(plan.get("tainted", [])),
    }


def _rebuilt(manifest: dict) -> list[dict]:
    """Derived records (summaries, facts) the deletion touched, and what became of each."""
    return [
        {"id": r.id, "kind": r.kind, "label": REBUILD_LABELS.get(r.status, r.status or "dropped"), "new_ids": r.new_ids}
        for r in Manifest.from_dict(manifest).rebuilt
    ]


@login_required
def history(request):
    """The user's deletions, newest first; unconfirmed previews only on request (?all=1)."""
    everything = selectors.deletion_request_list(user=request.user).defer("working")
    show_all = request.GET.get("all") == "1"
    shown = everything if show_all else everything.filter(status__in=CONFIRMED)
    unconfirmed = everything.exclude(status__in=CONFIRMED).count()
    page = Paginator(shown, PAGE_SIZE).get_page(request.GET.get("page"))
    return render(
        request,
        "provenance/history.html",
        {"page": page, "rows": [_row(r) for r in page.object_list], "show_all": show_all, "unconfirmed": unconfirmed},
    )


@login_required
def history_detail(request, request_id):
    """One deletion's manifest: ids of what was deleted, counts, verification; never content."""
    try:
        pk = uuid.UUID(str(request_id))
    except ValueError:
        raise Http404("No such deletion.") from None
    found = selectors.deletion_request_list(user=request.user).defer("working").filter(pk=pk).first()
    if found is None:
        raise Http404("No such deletion.")
    manifest = found.manifest if found.status == DeletionStatus.COMPLETED else {}
    residue = (manifest.get("verification") or {}).get("possible_residue") or []
    # Offered as a follow-up deletion: the residue items that are still stored.
    still_there = set(selectors.nodes_owned(user=request.user, node_ids=[e["id"] for e in residue]))
    return render(
        request,
        "provenance/history_detail.html",
        {
            "row": _row(found),
            "manifest": manifest,
            "verification": manifest.get("verification") or {},
            "timings": manifest.get("timings") or {},
            "rebuilt": _rebuilt(manifest),
            "deleted_ids": manifest.get("deleted_ids") or list(found.target_ids),
            "matched_ids": manifest.get("matched") or [e["id"] for e in (found.plan or {}).get("matched", [])],
            "residue": [{**e, "stored": e["id"] in still_there} for e in residue],
            "residue_ids": sorted(still_there),
            "max_chars": settings.DELLM_MAX_MESSAGE_CHARS,
        },
    )
