"""Maintenance after an erasure: VACUUM, then a CHECKPOINT and a WAL switch where the role may; off the
confirmation's path, once for every erasure of a while."""

import logging
import secrets

import pytest
from django.db import connection
from django.utils import timezone

from chat import services
from provenance import tasks
from provenance.forgetting import maintenance
from provenance.forgetting import services as forget
from provenance.models import DeletionRequest
from tests.conftest import say

pytestmark = pytest.mark.django_db(transaction=True)


def _one(sql: str):
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchone()[0]


def _erase(user, text: str):
    m = say(user, services.conversation_create(user=user), text)  # an emptied conversation goes with it
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[m.user_message.pk])
    forget.forget_confirm(user=user, request_id=preview.pk)
    return DeletionRequest.objects.get(pk=preview.pk)


def test_the_maintenance_runs_after_the_confirmation_once_for_many_erasures(user):
    segment = _one("SELECT pg_walfile_name(pg_current_wal_lsn())")
    first = _erase(user, "My locker code is 7391.")
    second = _erase(user, "My bike lock code is 2208.")
    # The confirmations returned without it: both erasures wait for one run.
    assert set(maintenance.disk_reclaim_due()) == {first.pk, second.pk}
    checkpoint = _one("SELECT checkpoint_lsn FROM pg_control_checkpoint()")
    assert "memory_node" in maintenance.disk_reclaim_pending()
    assert _one("SELECT pg_walfile_name(pg_current_wal_lsn())") != segment
    assert _one("SELECT checkpoint_lsn FROM pg_control_checkpoint()") != checkpoint
    assert maintenance.disk_reclaim_due() == []
    assert all(r.disk_reclaimed_at for r in DeletionRequest.objects.filter(pk__in=[first.pk, second.pk]))
    assert maintenance.disk_reclaim_pending() == []  # nothing left: no second VACUUM


def test_without_workers_a_thread_of_the_process_runs_it_after_the_delay(user, settings):
    settings.DELLM_DISK_RECLAIM_IN_PROCESS = True
    settings.DELLM_DISK_RECLAIM_DELAY_S = 0.2
    request = _erase(user, "My locker code is 7391.")
    timer = maintenance.disk_reclaim_waiting()
    assert timer is not None and timer.daemon
    timer.join(timeout=60)
    assert not timer.is_alive() and maintenance.disk_reclaim_waiting() is None
    request.refresh_from_db()
    assert request.disk_reclaimed_at is not None and maintenance.disk_reclaim_due() == []


def test_without_workers_the_erasures_made_while_it_waits_share_its_run(user, settings):
    settings.DELLM_DISK_RECLAIM_IN_PROCESS = True
    settings.DELLM_DISK_RECLAIM_DELAY_S = 600
    first = _erase(user, "My locker code is 7391.")
    timer = maintenance.disk_reclaim_waiting()
    second = _erase(user, "My bike lock code is 2208.")
    assert maintenance.disk_reclaim_waiting() is timer and timer.is_alive()  # no second timer
    timer.cancel()
    timer.function()  # what the timer runs when its time comes, without waiting for it
    assert DeletionRequest.objects.filter(pk__in=[first.pk, second.pk], disk_reclaimed_at__isnull=False).count() == 2
    assert maintenance.disk_reclaim_waiting() is None


def test_with_workers_the_first_erasure_of_a_batch_queues_one_delayed_run(user, settings, monkeypatch):
    first = _erase(user, "My locker code is 7391.")
    second = _erase(user, "My bike lock code is 2208.")
    queued = []
    monkeypatch.setattr(tasks.vacuum_after_forget, "apply_async", lambda **kwargs: queued.append(kwargs))
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.DELLM_DISK_RECLAIM_DELAY_S = 45
    DeletionRequest.objects.filter(pk=second.pk).update(disk_reclaimed_at=timezone.now())
    maintenance.disk_reclaim_schedule()  # the first erasure due: it queues the run
    assert queued == [{"countdown": 45}]
    DeletionRequest.objects.filter(pk=second.pk).update(disk_reclaimed_at=None)
    maintenance.disk_reclaim_schedule()  # another one is due already: that run takes this one too
    maintenance.disk_reclaim_schedule(after_wipe=False)  # a preview leaves it to the queued run and the beat
    assert queued == [{"countdown": 45}]
    assert set(maintenance.disk_reclaim_due()) == {first.pk, second.pk}
    assert settings.CELERY_BEAT_SCHEDULE["disk-reclaim"]["task"] == tasks.vacuum_after_forget.name


def test_a_process_that_ended_before_the_run_leaves_it_to_the_next_start_up(user):
    request = _erase(user, "My locker code is 7391.")
    assert maintenance.disk_reclaim_due() == [request.pk]
    assert forget.forget_resume()["disk_reclaimed"] is True  # what start-up and `manage.py forget_resume` run
    assert maintenance.disk_reclaim_due() == []


def test_without_the_rights_the_wal_steps_are_skipped_and_logged(caplog):
    role = f"dellm_plain_{secrets.token_hex(4)}"
    with connection.cursor() as cursor:
        cursor.execute(f"CREATE ROLE {role} NOLOGIN")
        try:
            cursor.execute(f"SET ROLE {role}")
            with caplog.at_level(logging.WARNING, logger=maintenance.__name__):
                assert "memory_node" in maintenance.disk_reclaim()
        finally:
            cursor.execute("RESET ROLE")
            cursor.execute(f"DROP ROLE {role}")
    skipped = [r.getMessage() for r in caplog.records if r.name == maintenance.__name__]
    assert len(skipped) == 2 and "CHECKPOINT" in skipped[0] and "pg_switch_wal" in skipped[1]
    assert all("permission denied" in s for s in skipped)
