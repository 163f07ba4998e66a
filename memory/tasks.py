"""Celery tasks of the memory app: thin wrappers over services, retried with backoff,
idempotent, and timed per kind in TaskRun (the admin shows failures)."""

from __future__ import annotations

import time

from celery import shared_task
from celery.signals import task_failure, task_postrun, task_prerun, task_retry
from django.db import connection
from django.utils import timezone

from . import services

RETRY = {"autoretry_for": (Exception,), "retry_backoff": True, "retry_backoff_max": 60, "max_retries": 5}
_started: dict[str, float] = {}


@shared_task(bind=True, **RETRY)
def embed_node(self, node_id: int) -> bool:
    """Store the embedding of one node; a node deleted meanwhile is skipped."""
    return services.embedding_store(node_id=node_id) is not None


@shared_task(bind=True, **RETRY)
def facts_extract_task(self, message_id: int) -> list[int]:
    from .derived import facts_extract

    return [fact.pk for fact in facts_extract(message_id=message_id)]


@shared_task(bind=True, **RETRY)
def summary_refresh_task(self, conversation_id: int) -> int | None:
    from .derived import summary_refresh

    result = summary_refresh(conversation_id=conversation_id)
    return result.summary.pk if result.summary else None


@shared_task(bind=True, **RETRY)
def derived_rebuild_task(
    self, request_id: str, kind: str, old_id: int, sources: list[int], conversation_id: int | None, version: int = 0
):
    """Rebuild a derived record dropped by a deletion, then report it on the request's manifest."""
    from provenance.forget import rebuild_finished

    from .derived import derived_rebuild

    try:
        entry = derived_rebuild(kind=kind, old_id=old_id, sources=sources, conversation_id=conversation_id, version=version)
    except Exception as exc:
        if self.request.retries >= self.max_retries:
            rebuild_finished(request_pk=request_id, old_id=old_id, entry={"status": "failed", "error": type(exc).__name__})
        raise
    rebuild_finished(request_pk=request_id, old_id=old_id, entry=entry)
    return entry


VACUUM_TABLES = ["memory_node", "memory_embedding", "memory_fact", "memory_summary", "chat_message",
                 "chat_conversation", "provenance_edge", "provenance_deletionrequest"]


@shared_task(bind=True, **RETRY)
def vacuum_after_forget(self) -> list[str]:
    """Reclaim the dead tuples an erasure leaves, so deleted content does not linger on disk."""
    with connection.cursor() as cursor:
        for table in VACUUM_TABLES:
            cursor.execute(f'VACUUM (ANALYZE) "{table}"')
    return VACUUM_TABLES


# --- timings and outcomes per task kind -------------------------------------------------

def _is_ours(task) -> bool:
    return bool(task) and task.name.split(".")[0] in ("memory", "provenance")


@task_prerun.connect
def _task_started(task_id=None, task=None, **kwargs):
    if _is_ours(task):
        from .models import TaskRun

        _started[task_id] = time.monotonic()
        TaskRun.objects.update_or_create(
            task_id=task_id, defaults={"kind": task.name.rsplit(".", 1)[-1], "status": TaskRun.Status.RUNNING,
                                       "attempt": task.request.retries, "finished_at": None, "error": ""},
        )


@task_postrun.connect
def _task_finished(task_id=None, task=None, state=None, **kwargs):
    if _is_ours(task) and state == "SUCCESS":
        from .models import TaskRun

        started = _started.pop(task_id, None)
        TaskRun.objects.filter(task_id=task_id).update(
            status=TaskRun.Status.SUCCEEDED, finished_at=timezone.now(),
            duration_ms=None if started is None else round((time.monotonic() - started) * 1000, 2),
        )


@task_retry.connect
def _task_retrying(request=None, reason=None, **kwargs):
    from .models import TaskRun

    if request is not None:
        TaskRun.objects.filter(task_id=request.id).update(status=TaskRun.Status.RETRYING, error=type(reason).__name__)


@task_failure.connect
def _task_failed(task_id=None, exception=None, sender=None, **kwargs):
    if _is_ours(sender):
        from .models import TaskRun

        started = _started.pop(task_id, None)
        TaskRun.objects.filter(task_id=task_id).update(
            status=TaskRun.Status.FAILED, finished_at=timezone.now(), error=type(exception).__name__,
            duration_ms=None if started is None else round((time.monotonic() - started) * 1000, 2),
        )
