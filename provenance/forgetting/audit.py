"""The audit log: that and when a deletion happened, by whom (a pseudonym), how much from which store, with keyed
hashes instead of ids. Written before the wipe, completed after it; never holds content."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from django.conf import settings

from ..models import AuditRecord, DeletionRequest, DeletionStatus

if TYPE_CHECKING:
    from dellm_site.types import User


def _audit_key() -> bytes:
    key = settings.DELLM_AUDIT_KEY or hashlib.sha256(("dellm-audit:" + settings.SECRET_KEY).encode()).hexdigest()
    return key.encode()


def pseudonym(kind: str, value: object) -> str:
    """A keyed hash that lets an auditor link entries without learning ids or content."""
    return hmac.new(_audit_key(), f"{kind}:{value}".encode(), hashlib.sha256).hexdigest()[:20]


def node_refs(ids: Iterable[int]) -> list[str]:
    return [pseudonym("node", pk) for pk in sorted(ids)]


def audit_open(*, request: DeletionRequest, user: User) -> AuditRecord:
    """The evidence written, and committed, before anything is deleted."""
    return AuditRecord.objects.create(
        request_id=request.pk,
        requester_ref=pseudonym("user", user.pk),
        mode=request.mode,
        relaxation={"depth": request.depth, "kept": len(request.kept), "threshold": request.threshold},
        status=DeletionStatus.EXECUTING,
        requested_at=request.created_at,
        planned_count=len(request.target_ids),
        item_refs=node_refs(request.target_ids),
    )


def audit_wiped(*, request: DeletionRequest, counts: dict, ids: set[int]) -> None:
    """The wipe committed: what each store lost, and the references of what went."""
    AuditRecord.objects.filter(request_id=request.pk).update(
        deleted=counts, item_refs=node_refs(ids), status=DeletionStatus.VERIFYING
    )


def audit_completed(*, request: DeletionRequest, completed_at: datetime, residual_hits: int) -> None:
    """Verification finished: the request is complete, with what the scan found."""
    AuditRecord.objects.filter(request_id=request.pk).update(
        status=DeletionStatus.COMPLETED, completed_at=completed_at, residual_hits=residual_hits
    )
