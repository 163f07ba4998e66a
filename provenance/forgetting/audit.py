"""The audit log: that and when a deletion happened, by whom (a pseudonym), how much from which store, with keyed
hashes instead of ids. Written before the wipe, completed after it; never holds content.

Each entry is chained to the one before it by keyed hashes (``chain``) in the transaction that writes it; appends
are serialised by a transaction-level advisory lock, so two deletions confirmed at once never share a place."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import connection, transaction

from ..models import AuditRecord, DeletionRequest, DeletionStatus
from . import chain

if TYPE_CHECKING:
    from dellm_site.types import User


def _audit_key() -> bytes:
    key = settings.DELLM_AUDIT_KEY or hashlib.sha256(("dellm-audit:" + settings.SECRET_KEY).encode()).hexdigest()
    return key.encode()


def pseudonym(kind: str, value: object) -> str:
    """A keyed hash that lets an auditor link entries without learning ids or content."""
    return hmac.new(_audit_key(), f"{kind}:{value}".encode(), hashlib.sha256).hexdigest()[:20]


def chain_key() -> bytes:
    """The key of the audit chain, derived from the audit key: given to an auditor to verify an export, it
    reveals no pseudonym (it cannot recompute the references of an id)."""
    return hmac.new(_audit_key(), b"audit-chain", hashlib.sha256).digest()


# Any fixed number: the advisory lock that serialises appends to the chain.
CHAIN_LOCK = 0x44654C4C4D
AUDIT_FIELDS = tuple(f for f in chain.COLUMNS if f != "request_id")


def audit_entry(record: AuditRecord) -> dict:
    """An entry as the chain hashes and the export writes it: plain JSON values, one spelling of times."""
    return {
        "request_id": str(record.request_id),
        **{f: getattr(record, f) for f in AUDIT_FIELDS},
        **{f: chain.timestamp(getattr(record, f)) for f in ("requested_at", "started_at", "completed_at")},
    }


def _seal(record: AuditRecord) -> None:
    record.seal = chain.seal_hash(chain_key(), audit_entry(record))


def node_refs(ids: Iterable[int]) -> list[str]:
    return [pseudonym("node", pk) for pk in sorted(ids)]


@transaction.atomic
def audit_open(*, request: DeletionRequest, user: User) -> AuditRecord:
    """The evidence written, and committed, before anything is deleted: appended to the chain."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [CHAIN_LOCK])  # held until this entry commits
    last = AuditRecord.objects.order_by("-seq").values("seq", "chain_hash").first()
    record = AuditRecord.objects.create(
        request_id=request.pk,
        requester_ref=pseudonym("user", user.pk),
        mode=request.mode,
        relaxation={"depth": request.depth, "kept": len(request.kept), "threshold": request.threshold},
        status=DeletionStatus.EXECUTING,
        requested_at=request.created_at,
        planned_count=len(request.target_ids),
        item_refs=node_refs(request.target_ids),
        seq=last["seq"] + 1 if last else 1,
        chain_prev=last["chain_hash"] if last else chain.GENESIS,
    )
    record.chain_hash = chain.link_hash(chain_key(), audit_entry(record))
    _seal(record)
    record.save(update_fields=["chain_hash", "seal"])
    return record


def _audit_complete(*, request: DeletionRequest, **fields) -> None:
    with transaction.atomic():
        record = AuditRecord.objects.select_for_update().get(request_id=request.pk)
        for name, value in fields.items():
            setattr(record, name, value)
        _seal(record)
        record.save(update_fields=[*fields, "seal"])


def audit_wiped(*, request: DeletionRequest, counts: dict, ids: set[int]) -> None:
    """The wipe committed: what each store lost, and the references of what went."""
    _audit_complete(request=request, deleted=counts, item_refs=node_refs(ids), status=DeletionStatus.VERIFYING)


def audit_completed(*, request: DeletionRequest, completed_at: datetime, residual_hits: int) -> None:
    """Verification finished: the request is complete, with what the scan found."""
    _audit_complete(
        request=request, status=DeletionStatus.COMPLETED, completed_at=completed_at, residual_hits=residual_hits
    )


def audit_rechecked(*, request: DeletionRequest, residual_hits: int) -> None:
    """Verification was run again on a completed request: what it finds now."""
    _audit_complete(request=request, residual_hits=residual_hits)


def audit_chain_check() -> tuple[int, chain.Problem | None]:
    """Re-check the whole audit log: each entry's hashes and links, then that every deletion that started has
    its entry (the newest entries removed leave no gap in the chain, but leave their requests without one)."""
    entries = [audit_entry(r) for r in AuditRecord.objects.order_by("seq")]
    count, problem = chain.chain_check(entries, chain_key())
    if problem is not None:
        return count, problem
    logged = {e["request_id"] for e in entries}
    started = DeletionRequest.objects.exclude(status__in=[DeletionStatus.PREVIEWED, DeletionStatus.EXPIRED])
    for pk in started.order_by("confirmed_at").values_list("pk", flat=True):
        if str(pk) not in logged:
            last = entries[-1]["seq"] if entries else 0
            return count, chain.Problem("removed", last + 1, str(pk), "a started deletion has no audit entry")
    return count, None
