"""Celery tasks of provenance: thin wrappers over the forgetting services, retried with backoff."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready

from memory.embeddings import embeddings_flush
from memory.facts import embeddings_deferred
from memory.rebuild import derived_rebuild

from .forgetting.deferred import later
from .forgetting.execution import rebuild_finished, rebuilds_finished
from .forgetting.jobs import job_run
from .forgetting.maintenance import disk_reclaim_pending
from .forgetting.services import forget_resume, previews_expire

logger = logging.getLogger(__name__)

RETRY = {"autoretry_for": (Exception,), "retry_backoff": True, "retry_backoff_max": 60, "max_retries": 5}


@shared_task
def forget_resume_task() -> dict:
    """Finish interrupted deletions and expire stale previews."""
    return forget_resume()


@shared_task
def previews_expire_task() -> int:
    """Expire previews past their time, dropping their words (Celery beat runs it every minute)."""
    return previews_expire()


@worker_ready.connect
def _resume_on_worker_start(sender=None, **kwargs):
    # A worker (re)starting after a crash finishes what was interrupted before taking new work.
    forget_resume_task.delay()


@shared_task
def forget_job_task(request_id: str, full_scan: bool | None = None, owner_id: int | None = None) -> None:
    """Execute and verify a large confirmed deletion, writing its progress (``forgetting.jobs``). Not retried
    here: a failed job leaves the request executing, resumed like any interrupted one."""
    job_run(request_id, full_scan=full_scan, owner_id=owner_id)


@shared_task(bind=True, **RETRY)
def derived_rebuild_task(
    self,
    request_id: str,
    kind: str,
    old_id: int,
    sources: list[int],
    conversation_id: int | None,
    version: int = 0,
    owner_id: int | None = None,
):
    """Rebuild a derived record dropped by a deletion, then report it on the request's manifest. ``owner_id``:
    the request's owner (every row is then read and written through it; absent from jobs queued before it was
    passed)."""
    try:
        entry = derived_rebuild(
            kind=kind, old_id=old_id, sources=sources, conversation_id=conversation_id, version=version,
            owner_id=owner_id,
        )
    except Exception as exc:
        if self.request.retries >= self.max_retries:
            failed = {"status": "failed", "error": type(exc).__name__}
            rebuild_finished(request_pk=request_id, old_id=old_id, entry=failed, owner_id=owner_id)
        raise
    rebuild_finished(request_pk=request_id, old_id=old_id, entry=entry, owner_id=owner_id)
    return entry


@shared_task
def derived_rebuilds_task(request_id: str, items: list[dict], owner_id: int | None = None) -> dict:
    """Rebuild every derived record one deletion dropped (``items``: each ``{kind, old_id, sources,
    conversation, version}``), their new records' vectors computed in the background meanwhile; then store the
    vectors and report the rebuilds on the request's manifest in one write (in-process, after the verification:
    ``forgetting.deferred``). A rebuild that fails is queued again alone (``derived_rebuild_task``, retried with
    backoff, its failure recorded there)."""
    entries: dict[int, dict] = {}
    failed: list[dict] = []
    with embeddings_deferred() as stored:
        for item in items:
            try:
                entries[item["old_id"]] = derived_rebuild(
                    kind=item["kind"], old_id=item["old_id"], sources=item["sources"],
                    conversation_id=item["conversation"], version=item["version"], owner_id=owner_id,
                )
            except Exception:
                logger.exception("the rebuild of %s %s failed; queued alone", item["kind"], item["old_id"])
                failed.append(item)

    def record() -> None:
        embeddings_flush(stored)
        if entries:
            rebuilds_finished(request_pk=request_id, entries=entries, owner_id=owner_id)
        for item in failed:
            derived_rebuild_task.delay(
                request_id, item["kind"], item["old_id"], item["sources"], item["conversation"], item["version"],
                owner_id,
            )

    later(record)
    return {str(old_id): entry for old_id, entry in entries.items()}


@shared_task(bind=True, **RETRY)
def vacuum_after_forget(self) -> list[str]:
    """Once for every erasure waiting for it: make the space of the rows they deleted reusable (VACUUM) and
    let the WAL that recorded them be recycled (CHECKPOINT, WAL switch). Queued by the first erasure of a
    batch and run by the beat schedule; a no-op when none is due. Their bytes stay on disk until
    overwritten; see maintenance."""
    return disk_reclaim_pending()
