"""Large deletions as background jobs, with progress the Forget panel shows.

A confirmed set of DELLM_FORGET_JOB_MIN_ITEMS items or more is not wiped inside the confirmation's request.
The request is committed as executing, with its audit record, as every confirmation is before its wipe; a
``DeletionJob`` row (committed with it) holds the job's progress; then the same execution and verification
run in the background: a Celery task with workers, a thread of the process without them (as the resume at
start-up does). The wipe is still one transaction, all or nothing; its progress is written on a connection of
its own, so the panel can read it meanwhile. A job that fails, or whose process dies, leaves the request
executing: it is resumed like any interrupted deletion (start-up, a worker's start, the review desk), or by
confirming again, which starts the job anew.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection, connections, transaction
from django.utils import timezone

from dellm_site.types import RequestId

from ..models import DeletionJob

logger = logging.getLogger(__name__)

Progress = Callable[..., None]
Stage = DeletionJob.Stage
# Share of the bar each stage ends at (the wipe fills most of it, item by item).
_STAGE_END = {Stage.QUEUED: 0.0, Stage.LOCKING: 0.05, Stage.WIPING: 0.85, Stage.VERIFYING: 0.99, Stage.COMPLETED: 1.0}
_STAGE_START = {Stage.LOCKING: 0.0, Stage.WIPING: 0.05, Stage.VERIFYING: 0.85, Stage.COMPLETED: 1.0}
# A job not heard from for this long is taken for dead: confirming again starts it anew.
STALE = timedelta(minutes=2)


def is_large(ids: list[int]) -> bool:
    """Whether a confirmed set is wiped as a background job rather than inside the request."""
    return len(ids) >= settings.DELLM_FORGET_JOB_MIN_ITEMS


class ProgressWriter:
    """Writes a job's progress on a database connection of its own (autocommit), so other connections see it
    while the job's own transaction is open. Progress is advisory: a failed write is logged, never raised."""

    def __init__(self, request_pk: RequestId):
        self.request_pk = request_pk
        self._db = None

    def __call__(self, stage: str, done: int | None = None, total: int | None = None, error: str = "") -> None:
        try:
            if self._db is None:
                self._db = connections.create_connection("default")
            with self._db.cursor() as cursor:
                cursor.execute(
                    "UPDATE provenance_deletionjob SET stage = %s, done = coalesce(%s, done), "
                    "total = coalesce(%s, total), error = %s, updated_at = now() WHERE request_id = %s",
                    [stage, done, total, error[:200], str(self.request_pk)],
                )
        except DatabaseError as exc:
            logger.warning("progress of deletion job %s not written: %s", self.request_pk, type(exc).__name__)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()


def job_create(*, request_pk: RequestId, total: int) -> None:
    """Record a job for a request being confirmed (in the confirmation's transaction: committed with it)."""
    DeletionJob.objects.update_or_create(
        request_id=request_pk, defaults={"stage": Stage.QUEUED, "done": 0, "total": total, "error": ""}
    )


def job_running(request_pk: RequestId) -> bool:
    """A job of this request is under way (queued or running, heard from lately)."""
    return DeletionJob.objects.filter(
        request_id=request_pk,
        stage__in=[Stage.QUEUED, Stage.LOCKING, Stage.WIPING, Stage.VERIFYING],
        updated_at__gte=timezone.now() - STALE,
    ).exists()


def job_progress(request_pk: RequestId) -> dict | None:
    """``{stage, done, total, fraction, error?}`` of the request's job, or None if it has none."""
    job = DeletionJob.objects.filter(request_id=request_pk).first()
    if job is None:
        return None
    start, end = _STAGE_START.get(job.stage, 0.0), _STAGE_END.get(job.stage, 0.0)
    within = 1.0
    if job.stage == Stage.WIPING:
        within = job.done / job.total if job.total else 0.0
    fraction = None if job.stage == Stage.FAILED else round(start + (end - start) * within, 3)
    data = {"stage": job.stage, "done": job.done, "total": job.total, "fraction": fraction}
    if job.error:
        data["error"] = job.error
    return data


def job_run(request_pk: RequestId, *, full_scan: bool | None = None, owner_id: int | None = None) -> None:
    """Execute and verify a confirmed request (``owner_id``'s, where known), writing its progress; a failure
    leaves it executing."""
    from .services import confirmed_run  # services start jobs; the job runs the services' steps

    progress = ProgressWriter(request_pk)
    try:
        confirmed_run(request_pk, owner_id=owner_id, full_scan=full_scan, progress=progress)
        progress(Stage.COMPLETED)
    except Exception as exc:
        progress(Stage.FAILED, error=type(exc).__name__)
        raise
    finally:
        progress.close()


def _in_thread(request_pk: RequestId, full_scan: bool | None, owner_id: int | None) -> None:
    try:
        job_run(request_pk, full_scan=full_scan, owner_id=owner_id)
    except Exception:  # recorded on the job; the request is resumed later
        logger.exception("deletion job %s failed; the request stays executing, to be resumed", request_pk)
    finally:
        connection.close()


def job_start(*, request_pk: RequestId, full_scan: bool | None = None, owner_id: int | None = None) -> None:
    """Run the job once the confirmation commits: a Celery task with workers, else a thread of this process."""

    def start():
        if settings.CELERY_TASK_ALWAYS_EAGER:
            threading.Thread(
                target=_in_thread, args=(request_pk, full_scan, owner_id), name=f"forget-job-{request_pk}", daemon=True
            ).start()
        else:
            from ..tasks import forget_job_task  # tasks call back into this package

            forget_job_task.delay(str(request_pk), full_scan, owner_id)

    transaction.on_commit(start)
