"""The deletion review desk's reads: outcomes, counts over time, time to completion against the deadline, what
needs attention, the monthly summary and the audit log's export. Ids and counts only, never content; the only
reference to a person is the audit log's keyed pseudonym."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.conf import settings
from django.db.models import Max, Min, Q
from django.utils import timezone

from memory.models import TaskRun

from .forgetting import chain
from .forgetting.audit import audit_chain_check, audit_entry, chain_key
from .manifest import Manifest
from .models import AuditRecord, DeletionRequest, DeletionStatus

OUTCOMES = ["completed", "residual hits", "rebuild failed", "rebuild pending", "in progress", "stuck", "expired"]
OPEN = [DeletionStatus.EXECUTING, DeletionStatus.VERIFYING]


def _stuck_after() -> timedelta:
    return timedelta(minutes=settings.DELLM_REVIEW_STUCK_MINUTES)


def deletion_outcome(request: DeletionRequest, *, now: datetime | None = None) -> str:
    """One word for where a request ended (or is stuck): one of ``OUTCOMES``, or ``preview``."""
    now = now or timezone.now()
    if request.status == DeletionStatus.PREVIEWED:
        return "preview"
    if request.status == DeletionStatus.EXPIRED:
        return "expired"
    if request.status in OPEN:
        return "stuck" if now - (request.confirmed_at or request.created_at) > _stuck_after() else "in progress"
    manifest = Manifest.from_dict(request.manifest)
    if manifest.verification is not None and manifest.verification.residual_hits:
        return "residual hits"
    if any(r.status == "failed" for r in manifest.rebuilt):
        return "rebuild failed"
    if manifest.rebuilds_pending:
        return "rebuild pending"
    return "completed"


@dataclass
class AttentionItem:
    """Something a reviewer should look at, with the action that resolves it (``None``: read the record)."""

    kind: str
    request_id: str | None
    since: datetime
    detail: str
    action: str | None = None
    old_id: int | None = None
    task_run_id: int | None = None


def _requests():
    return DeletionRequest.objects.defer("working", "plan")


def attention_list(*, now: datetime | None = None) -> list[AttentionItem]:
    """Requests stuck in a non-final state, manifests with residual hits, failed or overdue rebuilds, previews
    past their time still holding their words, and failed background tasks: oldest first within each kind."""
    now = now or timezone.now()
    items: list[AttentionItem] = []
    for request in _requests().filter(status__in=OPEN).order_by("created_at"):
        since = request.confirmed_at or request.created_at
        if now - since > _stuck_after():
            items.append(AttentionItem("stuck", str(request.pk), since, f"{request.status} since", "resume"))
    words_left = Q(status=DeletionStatus.PREVIEWED, expires_at__lte=now) | (
        Q(status=DeletionStatus.EXPIRED) & ~Q(working={})
    )
    for request in DeletionRequest.objects.filter(words_left).only("pk", "expires_at").order_by("expires_at"):
        items.append(
            AttentionItem("preview expired", str(request.pk), request.expires_at, "still holds its words", "resume")
        )
    for request in _requests().filter(status=DeletionStatus.COMPLETED).order_by("completed_at"):
        manifest = Manifest.from_dict(request.manifest)
        found = manifest.verification
        if found is not None and found.residual_hits:
            items.append(
                AttentionItem("residual hits", str(request.pk), request.completed_at,
                              f"{found.residual_hits} residual hit(s)", "verify")
            )
        for record in manifest.rebuilt:
            overdue = record.status == "pending" and now - request.completed_at > _stuck_after()
            if record.status == "failed" or overdue:
                action = "rebuild" if record.retry is not None else None
                detail = f"{record.kind} rebuild {record.status}" + (f" ({record.error})" if record.error else "")
                items.append(
                    AttentionItem(f"rebuild {record.status}", str(request.pk), request.completed_at, detail, action,
                                  old_id=record.id)
                )
    for run in TaskRun.objects.filter(status=TaskRun.Status.FAILED).order_by("started_at")[:50]:
        items.append(
            AttentionItem("task failed", None, run.started_at, f"{run.kind}: {run.error[:80]}", task_run_id=run.pk)
        )
    return items


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered) + 0.5) - 1))]


def duration(seconds: float | None) -> str:
    """A span in the unit a reader expects: seconds, minutes, hours or days."""
    if seconds is None:
        return "–"
    for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.1f} s"


def completion_times(requests: list[DeletionRequest]) -> dict:
    """Time from request to completion: median, p95 and the slowest, against the deadline."""
    deadline = timedelta(days=settings.DELLM_ERASURE_DEADLINE_DAYS)
    done = [(r.completed_at - r.created_at, r) for r in requests if r.completed_at]
    seconds = [d.total_seconds() for d, _ in done]
    slowest = max(done, key=lambda pair: pair[0], default=None)
    return {
        "count": len(done),
        "median": duration(statistics.median(seconds) if seconds else None),
        "p95": duration(_percentile(seconds, 0.95) if seconds else None),
        "slowest": duration(slowest[0].total_seconds() if slowest else None),
        "slowest_id": str(slowest[1].pk) if slowest else None,
        "deadline_days": settings.DELLM_ERASURE_DEADLINE_DAYS,
        "over_deadline": sum(1 for d, _ in done if d > deadline),
    }


def _bucket(moment: datetime, by_day: bool) -> str:
    return moment.strftime("%Y-%m-%d" if by_day else "%Y-%m")


def desk_overview(*, now: datetime | None = None) -> dict:
    """Everything the desk's front page shows."""
    now = now or timezone.now()
    requests = list(_requests().exclude(status=DeletionStatus.PREVIEWED).order_by("created_at"))
    outcomes = {r.pk: deletion_outcome(r, now=now) for r in requests}
    by_day = not requests or (now - requests[0].created_at) <= timedelta(days=31)
    buckets = sorted({_bucket(r.created_at, by_day) for r in requests})
    over_time = {o: [0] * len(buckets) for o in OUTCOMES}
    for request in requests:
        over_time[outcomes[request.pk]][buckets.index(_bucket(request.created_at, by_day))] += 1
    modes = sorted({r.mode for r in requests})
    by_mode = {m: Counter(outcomes[r.pk] for r in requests if r.mode == m) for m in modes}
    checked, problem = audit_chain_check()
    return {
        "total": len(requests),
        "outcomes": Counter(outcomes.values()),
        "buckets": buckets,
        "by_day": by_day,
        "over_time": {o: counts for o, counts in over_time.items() if any(counts)},
        "by_mode": [(m, [by_mode[m].get(o, 0) for o in OUTCOMES], sum(by_mode[m].values())) for m in modes],
        "times": completion_times(requests),
        "chain": {"checked": checked, "problem": str(problem) if problem else None},
        "attention": attention_list(now=now),
    }


def month_bounds(month: date) -> tuple[datetime, datetime]:
    start = timezone.make_aware(datetime(month.year, month.month, 1))
    end = timezone.make_aware(datetime(month.year + month.month // 12, month.month % 12 + 1, 1))
    return start, end


def monthly_summary(*, month: date) -> dict:
    """One month of deletions, for print: counts by mode and outcome, time to completion, the audit entries
    written that month with their chain hashes, and the chain's state."""
    start, end = month_bounds(month)
    requests = list(_requests().filter(created_at__gte=start, created_at__lt=end).exclude(
        status=DeletionStatus.PREVIEWED))
    now = timezone.now()
    outcomes = Counter(deletion_outcome(r, now=now) for r in requests)
    modes = Counter(r.mode for r in requests)
    entries = AuditRecord.objects.filter(started_at__gte=start, started_at__lt=end).order_by("seq")
    checked, problem = audit_chain_check()
    return {
        "month": start,
        "total": len(requests),
        "outcomes": [(o, outcomes.get(o, 0)) for o in OUTCOMES],
        "modes": sorted(modes.items()),
        "times": completion_times(requests),
        "entries": list(entries),
        "deleted": sorted(sum((Counter(e.deleted) for e in entries), Counter()).items()),
        "chain": {"checked": checked, "problem": str(problem) if problem else None},
    }


def audit_export(*, start: date, end: date) -> dict:
    """The audit entries written from ``start`` to ``end`` (inclusive), as the chain hashes them, with their
    extent sealed: verifiable offline by ``forgetting/chain.py`` with the chain key."""
    low = timezone.make_aware(datetime.combine(start, datetime.min.time()))
    high = timezone.make_aware(datetime.combine(end + timedelta(days=1), datetime.min.time()))
    # The span of the chain those dates cover, taken whole so that it has no gap of its own.
    span = AuditRecord.objects.filter(started_at__gte=low, started_at__lt=high).aggregate(
        first=Min("seq"), last=Max("seq")
    )
    rows = AuditRecord.objects.none()
    if span["first"] is not None:
        rows = AuditRecord.objects.filter(seq__gte=span["first"], seq__lte=span["last"])
    entries = [audit_entry(r) for r in rows.order_by("seq")]
    first = entries[0]["seq"] if entries else None
    last = entries[-1]["seq"] if entries else None
    head = entries[-1]["chain_hash"] if entries else chain.GENESIS
    extent = {
        "from": start.isoformat(), "to": end.isoformat(), "first": first, "last": last, "count": len(entries),
        "seal": chain.export_seal(chain_key(), first=first, last=last, count=len(entries), head=head),
    }
    return {"extent": extent, "entries": entries}
