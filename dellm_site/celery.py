"""The Celery app, wired once from Django settings (CELERY_* names, the periodic jobs of a worker run with
``--beat`` in CELERY_BEAT_SCHEDULE), and the record of every run of the project's own tasks in
``memory.TaskRun`` (kind, attempt, timing, outcome; the admin lists them). A worker loads the models its
tasks need as it starts (``dellm_site.warmup``)."""

from __future__ import annotations

import os
import time

from celery import Celery
from celery.signals import task_failure, task_postrun, task_prerun, task_retry, worker_process_init, worker_ready
from django.utils import timezone

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dellm_site.settings")

app = Celery("dellm")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Tasks whose runs are recorded: those defined in the project's apps (not Celery's own).
PROJECT_APPS = ("accounts", "chat", "memory", "provenance")
_started: dict[str, float] = {}


def _warm_up_if_asked() -> None:
    from django.conf import settings

    from dellm_site.warmup import warm_up_in_background

    if settings.DELLM_WARM_AT_START:
        warm_up_in_background()


def inherited_pools_drop() -> None:
    """A forked process makes its own database connection pool: one inherited from its parent (psycopg_pool is not
    fork-safe: its connections' sockets would be shared with the parent) is left alone, unused."""
    from django.db.backends.postgresql.base import DatabaseWrapper

    DatabaseWrapper._connection_pools.clear()


@worker_process_init.connect
def _warm_pool_process(**kwargs):
    """Each process that runs tasks (a prefork child, or a solo worker) drops any database pool it inherited and
    loads the models as it starts, in the background: a prefork child must report itself alive within seconds."""
    inherited_pools_drop()
    _warm_up_if_asked()


@worker_ready.connect
def _warm_worker(sender=None, **kwargs):
    """A worker whose pool runs tasks in threads of the main process warms that process; a prefork parent runs
    none, so it loads nothing (its children do)."""
    from celery.concurrency.prefork import TaskPool as PreforkPool

    if not isinstance(getattr(sender, "pool", None), PreforkPool):
        _warm_up_if_asked()


def _is_ours(task) -> bool:
    return bool(task) and task.name.split(".")[0] in PROJECT_APPS


def _elapsed_ms(task_id: str) -> float | None:
    started = _started.pop(task_id, None)
    return None if started is None else round((time.monotonic() - started) * 1000, 2)


@task_prerun.connect
def _task_started(task_id=None, task=None, **kwargs):
    if _is_ours(task):
        from memory.models import TaskRun  # the app registry is ready only once a task runs

        _started[task_id] = time.monotonic()
        TaskRun.objects.update_or_create(
            task_id=task_id,
            defaults={
                "kind": task.name.rsplit(".", 1)[-1],
                "status": TaskRun.Status.RUNNING,
                "attempt": task.request.retries,
                "finished_at": None,
                "error": "",
            },
        )


@task_postrun.connect
def _task_finished(task_id=None, task=None, state=None, **kwargs):
    if _is_ours(task) and state == "SUCCESS":
        from memory.models import TaskRun

        TaskRun.objects.filter(task_id=task_id).update(
            status=TaskRun.Status.SUCCEEDED, finished_at=timezone.now(), duration_ms=_elapsed_ms(task_id)
        )


@task_retry.connect
def _task_retrying(request=None, reason=None, **kwargs):
    if request is not None:
        from memory.models import TaskRun

        TaskRun.objects.filter(task_id=request.id).update(status=TaskRun.Status.RETRYING, error=type(reason).__name__)


@task_failure.connect
def _task_failed(task_id=None, exception=None, sender=None, **kwargs):
    if _is_ours(sender):
        from memory.models import TaskRun

        TaskRun.objects.filter(task_id=task_id).update(
            status=TaskRun.Status.FAILED,
            finished_at=timezone.now(),
            error=type(exception).__name__,
            duration_ms=_elapsed_ms(task_id),
        )
