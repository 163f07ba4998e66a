"""Celery tasks of provenance: thin wrappers over the forgetting services, retried with backoff."""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready
from django.apps import apps
from django.conf import settings
from django.db import connection

from memory.models import Edge, Node
from memory.rebuild import derived_rebuild

from .forgetting.execution import rebuild_finished
from .forgetting.services import forget_resume

RETRY = {"autoretry_for": (Exception,), "retry_backoff": True, "retry_backoff_max": 60, "max_retries": 5}


@shared_task
def forget_resume_task() -> dict:
    """Finish interrupted deletions and expire stale previews."""
    return forget_resume()


@worker_ready.connect
def _resume_on_worker_start(sender=None, **kwargs):
    # A worker (re)starting after a crash finishes what was interrupted before taking new work.
    forget_resume_task.delay()


@shared_task(bind=True, **RETRY)
def derived_rebuild_task(
    self, request_id: str, kind: str, old_id: int, sources: list[int], conversation_id: int | None, version: int = 0
):
    """Rebuild a derived record dropped by a deletion, then report it on the request's manifest."""
    try:
        entry = derived_rebuild(
            kind=kind, old_id=old_id, sources=sources, conversation_id=conversation_id, version=version
        )
    except Exception as exc:
        if self.request.retries >= self.max_retries:
            rebuild_finished(request_pk=request_id, old_id=old_id, entry={"status": "failed", "error": type(exc).__name__})
        raise
    rebuild_finished(request_pk=request_id, old_id=old_id, entry=entry)
    return entry


def vacuum_tables() -> list[str]:
    """Every table an erasure can leave dead rows in: the nodes of every kind, their vectors and
    edges, the forget requests, and every table of rows owned by a user (titles, for one)."""
    tables = {Edge._meta.db_table, apps.get_model("provenance", "DeletionRequest")._meta.db_table}
    for model in apps.get_models():
        owned = any(
            getattr(f, "related_model", None) is not None and f.related_model._meta.label == settings.AUTH_USER_MODEL
            and f.name == "owner"
            for f in model._meta.concrete_fields
        )
        if issubclass(model, Node) or owned:
            tables.add(model._meta.db_table)
    return sorted(tables)


@shared_task(bind=True, **RETRY)
def vacuum_after_forget(self) -> list[str]:
    """Reclaim the dead tuples an erasure leaves, so deleted content does not linger on disk."""
    tables = vacuum_tables()
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f'VACUUM (ANALYZE) "{table}"')
    return tables
