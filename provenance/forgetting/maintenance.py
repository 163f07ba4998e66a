"""Maintenance after an erasure: make the space of the deleted rows reusable and let the write-ahead log
that recorded them be recycled sooner.

It runs off the confirmation's path and once for many erasures: a wipe marks its request as due
(``DeletionRequest.disk_reclaimed_at`` is null) and asks for a run within DELLM_DISK_RECLAIM_DELAY_S seconds
(``disk_reclaim_schedule``); the run (``disk_reclaim_pending``) takes every request due at that moment, so
many erasures in that time share one VACUUM. With workers the run is a Celery task, queued by the first
erasure of a batch, and the beat schedule runs it every DELLM_DISK_RECLAIM_DELAY_S seconds too (a no-op when
nothing is due). Without workers it runs in a thread of the process after the delay; if the process ends
first, the next start-up (``forget_resume``) runs it, and the next preview schedules it again.

What this does not do: VACUUM marks dead rows' space free, it does not overwrite it, so their bytes
stay in the table files until new rows reuse the space (or VACUUM FULL rewrites the table, which locks
it); a WAL segment is reused, not erased, once a checkpoint no longer needs it, so its bytes stay
until new WAL overwrites it. README, "What deletion removes, and what stays on disk", has the numbers.
"""

from __future__ import annotations

import logging
import threading

from django.apps import apps
from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone

from memory.models import Edge, Node

from ..models import DeletionRequest, DeletionStatus

logger = logging.getLogger(__name__)

# Each needs a superuser or a granted role (pg_checkpoint, EXECUTE on pg_switch_wal); without it, skipped.
WAL_STATEMENTS = ("CHECKPOINT", "SELECT pg_switch_wal()")
# One run at a time across every process (a session-level advisory lock; the number is this job's own).
_LOCK_KEY = 0x44654C4C4D5643  # "DeLLMVC"
WIPED = (DeletionStatus.VERIFYING, DeletionStatus.COMPLETED)

_timer_lock = threading.Lock()
_timer: threading.Timer | None = None


def vacuum_tables() -> list[str]:
    """Every table an erasure can leave dead rows in: the nodes of every kind, their vectors and
    edges, the forget requests, and every table of rows owned by a user (titles, for one)."""
    tables = {Edge._meta.db_table, DeletionRequest._meta.db_table}
    for model in apps.get_models():
        owned = any(f.name == "owner" and f.is_relation for f in model._meta.concrete_fields)
        if issubclass(model, Node) or owned:
            tables.add(model._meta.db_table)
    return sorted(tables)


def disk_reclaim() -> list[str]:
    """VACUUM (ANALYZE) every table an erasure touches, then CHECKPOINT and switch to a new WAL segment,
    so the segments holding the deleted rows are no longer needed and get recycled (where the database
    role may; otherwise logged and skipped). Returns the tables vacuumed."""
    tables = vacuum_tables()
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f'VACUUM (ANALYZE) "{table}"')
        for statement in WAL_STATEMENTS:
            try:
                cursor.execute(statement)
            except DatabaseError as exc:
                logger.warning("after an erasure, %r was not run: %s", statement, str(exc).strip())
    return tables


def disk_reclaim_due() -> list:
    """The wiped requests whose maintenance has not run yet."""
    return list(
        DeletionRequest.objects.filter(status__in=WIPED, disk_reclaimed_at__isnull=True).values_list("pk", flat=True)
    )


def disk_reclaim_pending() -> list[str]:
    """Run the maintenance once for every erasure still waiting for it; returns the tables vacuumed ([] when
    none is due, or another process is running it now: that run, or the next, takes these too)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [_LOCK_KEY])
        if not cursor.fetchone()[0]:
            return []
        try:
            due = disk_reclaim_due()
            if not due:
                return []
            tables = disk_reclaim()  # outside any transaction: VACUUM cannot run in one
            DeletionRequest.objects.filter(pk__in=due).update(disk_reclaimed_at=timezone.now())
            logger.info("disk reclaimed after %d erasure(s)", len(due))
            return tables
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [_LOCK_KEY])


def _run_in_thread() -> None:
    global _timer
    with _timer_lock:
        _timer = None
    try:
        disk_reclaim_pending()
    except Exception:  # the next erasure, preview or start-up schedules it again
        logger.exception("the maintenance after erasures failed")
    finally:
        connection.close()


def disk_reclaim_schedule(*, after_wipe: bool = True) -> None:
    """Have the maintenance run within DELLM_DISK_RECLAIM_DELAY_S seconds, once for every erasure due by then.
    ``after_wipe``: called for an erasure just committed; with workers only the first one due queues a run (the
    others ride on it; the beat schedule catches a lost one). Without workers: a timer thread of this process,
    unless one is waiting already (DELLM_DISK_RECLAIM_IN_PROCESS off: none; start-up runs what is due)."""
    global _timer
    delay = settings.DELLM_DISK_RECLAIM_DELAY_S
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        if after_wipe and len(disk_reclaim_due()) <= 1:
            from ..tasks import vacuum_after_forget  # tasks call back into this module

            vacuum_after_forget.apply_async(countdown=delay)
        return
    if not settings.DELLM_DISK_RECLAIM_IN_PROCESS or _timer is not None:
        return
    if not after_wipe and not disk_reclaim_due():
        return
    with _timer_lock:
        if _timer is None:
            _timer = threading.Timer(delay, _run_in_thread)
            _timer.name = "disk-reclaim"
            _timer.daemon = True
            _timer.start()


def disk_reclaim_waiting() -> threading.Timer | None:
    """The in-process timer that will run the maintenance, if one is waiting (for tests and shutdown)."""
    return _timer
