"""Template tags other apps' pages use to show a deletion's outcome (``{% load forgetting %}``)."""

from __future__ import annotations

import uuid

from django import template

from ..manifest import Manifest
from ..models import DeletionStatus
from ..selectors import deletion_request_list

register = template.Library()

REBUILD_LABELS = {
    "pending": "rebuilding…",
    "done": "rebuilt",
    "dropped": "dropped",
    "erased": "erased",
    "failed": "rebuild failed",
}


def _rebuild_label(entry: dict, versions: dict[int, int]) -> str:
    status = entry.get("status")
    if status == "done":
        new_ids = entry["new_ids"]
        found = sorted({versions[i] for i in new_ids if i in versions})
        if not found and entry.get("kind") == "summary" and entry.get("version"):
            found = [entry["version"]]  # a rebuilt summary's entry carries its new version
        label = "rebuilt" + (f" (version {', '.join(map(str, found))})" if found else "")
        return label + (" as " + ", ".join(f"#{i}" for i in new_ids) if new_ids else "")
    if status == "dropped":
        return "dropped" + (f": {entry['reason']}" if entry.get("reason") else "")
    if status == "failed":
        return "rebuild failed" + (f" ({entry['error']})" if entry.get("error") else "")
    return REBUILD_LABELS.get(status, status or "unknown")


@register.simple_tag
def rebuild_status(*, user, request_id: str | None, versions: dict[int, int]) -> dict | None:
    """The derived records a deletion of the user's dropped, and what became of each (for the
    Memory page's ``?after=<id>``); ``versions`` maps record ids to their version for the labels."""
    if not request_id:
        return None
    try:
        pk = uuid.UUID(str(request_id))
    except ValueError:
        return None
    request = deletion_request_list(user=user).defer("working").filter(pk=pk).first()
    if request is None:
        return None
    completed = request.status == DeletionStatus.COMPLETED
    records = []
    for record in Manifest.from_dict(request.manifest).rebuilt if completed else []:
        entry = record.to_dict()
        records.append({**entry, "label": _rebuild_label(entry, versions)})
    return {
        "id": str(request.pk),
        "completed": completed,
        "records": records,
        "pending": any(r.get("status") == "pending" for r in records),
    }


