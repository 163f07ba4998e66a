"""Rebuilding a derived record (fact or summary) that a deletion dropped, from its surviving sources."""

from __future__ import annotations

from django.utils import timezone

from .facts import facts_extract
from .models import Node, NodeKind
from .summaries import summary_refresh


def derived_rebuild(
    *,
    kind: str,
    old_id: int,
    sources: list[int],
    conversation_id: int | None,
    version: int = 0,
    owner_id: int | None = None,
) -> dict:
    """Rebuild one dropped derived record from its surviving sources. Returns its manifest entry:
    ``{"status": "done", "new_ids": [...], ...}`` or ``{"status": "dropped", "reason": ...}``. ``owner_id``: the
    record's owner, where known (its rows are then read by it)."""
    if kind == NodeKind.SUMMARY:
        if conversation_id is None:
            return {"status": "dropped", "reason": "conversation deleted"}
        result = summary_refresh(
            conversation_id=conversation_id, rebuild_of=old_id, after_version=version, owner_id=owner_id
        )
        if result.summary is None:
            return {"status": "dropped", "reason": "no surviving sources"}
        return {"status": "done", "new_ids": [result.summary.pk], "version": result.summary.version,
                "derivation": result.summary.derivation, "rebuilt_at": timezone.now().isoformat()}
    nodes = Node.objects.filter(pk__in=sources, kind=NodeKind.MESSAGE)
    if owner_id is not None:
        nodes = nodes.filter(owner_id=owner_id)
    surviving = list(nodes.values_list("pk", flat=True))
    if not surviving:
        return {"status": "dropped", "reason": "no surviving sources"}
    new = [
        fact
        for pk in surviving
        for fact in facts_extract(message_id=pk, rebuild_of=old_id, after_version=version, owner_id=owner_id)
    ]
    if not new:
        return {"status": "dropped", "reason": "nothing left to derive from the surviving sources"}
    return {"status": "done", "new_ids": [f.pk for f in new], "version": new[0].version,
            "rebuilt_at": timezone.now().isoformat()}
