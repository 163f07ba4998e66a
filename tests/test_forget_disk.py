"""Maintenance after an erasure: VACUUM, then a CHECKPOINT and a WAL switch where the role may."""

import logging
import secrets

import pytest
from django.db import connection

from chat import services
from provenance.forgetting import maintenance
from provenance.forgetting import services as forget
from tests.conftest import say

pytestmark = pytest.mark.django_db(transaction=True)


def _one(sql: str):
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return cursor.fetchone()[0]


def test_an_erasure_checkpoints_and_moves_to_a_new_wal_segment(user):
    conversation = services.conversation_create(user=user)
    m = say(user, conversation, "My locker code is 7391.")
    segment = _one("SELECT pg_walfile_name(pg_current_wal_lsn())")
    checkpoint = _one("SELECT checkpoint_lsn FROM pg_control_checkpoint()")
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[m.user_message.pk])
    forget.forget_confirm(user=user, request_id=preview.pk)  # the maintenance runs once the wipe commits
    assert _one("SELECT pg_walfile_name(pg_current_wal_lsn())") != segment
    assert _one("SELECT checkpoint_lsn FROM pg_control_checkpoint()") != checkpoint


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
