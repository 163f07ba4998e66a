"""The audit log's keyed hash chain: written with each entry, serialised between concurrent writers, and
re-checked by ``manage.py audit_verify``, which names the first entry altered, removed or inserted by SQL."""

import io
import subprocess
import sys
import threading
import uuid
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, connections, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from chat import services
from provenance.forgetting import audit, chain
from provenance.forgetting import services as forget
from provenance.models import AuditRecord, DeletionRequest
from tests.conftest import ROOT, app_env, say

pytestmark = pytest.mark.django_db(transaction=True)

FACTS = ["My cat is called Juniper.", "I was born in Tromso.", "My locker code is 4471.", "I play the oboe."]


@pytest.fixture
def logged(user):
    """Four completed deletions, so the chain has a start, a middle and an end."""
    conversation = services.conversation_create(user=user)
    said = [say(user, conversation, text).user_message.pk for text in FACTS]
    for pk in said:
        preview = forget.forget_preview(user=user, mode="ids", message_ids=[pk])
        assert forget.forget_confirm(user=user, request_id=preview.pk)["status"] == "completed"
    records = list(AuditRecord.objects.order_by("seq"))
    assert [r.seq for r in records] == [1, 2, 3, 4]
    return records


def sql(statement: str, params=()) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def verify() -> str:
    out = io.StringIO()
    try:
        call_command("audit_verify", stdout=out)
    except CommandError as failure:
        return f"FAILED {failure}"
    return out.getvalue()


def test_each_entry_is_chained_to_the_one_before_and_sealed(logged):
    key = audit.chain_key()
    assert logged[0].chain_prev == chain.GENESIS
    for before, entry in zip(logged, logged[1:], strict=False):
        assert entry.chain_prev == before.chain_hash
    for record in logged:
        entry = audit.audit_entry(record)
        assert chain.link_hash(key, entry) == record.chain_hash and chain.seal_hash(key, entry) == record.seal
        assert record.status == "completed"
    assert "intact: 4 entries" in verify()


def test_a_row_altered_by_sql_is_named(logged):
    sql("UPDATE provenance_auditrecord SET deleted = '{\"messages\": 0}' WHERE seq = 2")
    assert f"altered: entry #2 (request {logged[1].request_id})" in verify()


def test_a_fixed_field_altered_by_sql_is_named(logged):
    sql("UPDATE provenance_auditrecord SET requested_at = requested_at - interval '1 day' WHERE seq = 3")
    assert f"altered: entry #3 (request {logged[2].request_id})" in verify()


def test_a_row_deleted_by_sql_is_named(logged):
    sql("DELETE FROM provenance_auditrecord WHERE seq = 2")
    assert "removed: entry #2" in verify() and "missing before entry #3" in verify()


def test_the_newest_row_deleted_by_sql_is_found_through_its_request(logged):
    sql("DELETE FROM provenance_auditrecord WHERE seq = 4")
    assert f"removed: entry #4 (request {logged[3].request_id})" in verify()


def test_a_row_inserted_by_sql_is_named(logged):
    forged = uuid.uuid4()
    sql(
        "INSERT INTO provenance_auditrecord (request_id, requester_ref, mode, relaxation, status, requested_at, "
        "started_at, planned_count, deleted, item_refs, residual_hits, seq, chain_prev, chain_hash, seal) "
        "VALUES (%s, 'abc', 'ids', '{}', 'completed', now(), now(), 1, '{}', '[]', 0, 5, %s, %s, %s)",
        [forged, logged[-1].chain_hash, "f" * 64, "e" * 64],
    )
    assert f"inserted: entry #5 (request {forged})" in verify()


def test_audit_verify_exits_non_zero_from_the_shell(logged):
    command = [sys.executable, "manage.py", "audit_verify"]
    ok = subprocess.run(command, cwd=ROOT, env=app_env(), capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0 and "intact" in ok.stdout, ok.stderr
    sql("UPDATE provenance_auditrecord SET residual_hits = 0, status = 'executing' WHERE seq = 1")
    failed = subprocess.run(command, cwd=ROOT, env=app_env(), capture_output=True, text=True, timeout=120)
    assert failed.returncode != 0 and "altered: entry #1" in failed.stderr


def test_concurrent_writers_append_one_after_the_other(user):
    """Each writer holds its transaction open after appending; without the lock two would take the same place."""
    requests = [
        DeletionRequest.objects.create(
            id=uuid.uuid4(), owner=user, mode="ids", status="executing", expires_at=timezone.now() + timedelta(hours=1)
        )
        for _ in range(4)
    ]
    barrier, errors = threading.Barrier(len(requests)), []

    def write(request):
        try:
            barrier.wait()
            with transaction.atomic():
                audit.audit_open(request=request, user=user)
                sql("SELECT pg_sleep(0.2)")
        except Exception as exc:  # reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=write, args=(r,)) for r in requests]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(AuditRecord.objects.values_list("seq", flat=True)) == [1, 2, 3, 4]
    assert audit.audit_chain_check() == (4, None)


def test_the_migration_chains_existing_entries():
    executor = MigrationExecutor(connection)
    before = ("provenance", "0004_remove_auditrecord_requester_username")
    try:
        executor.migrate([before])
        OldAudit = executor.loader.project_state([before]).apps.get_model("provenance", "AuditRecord")
        for i in range(3):
            OldAudit.objects.create(request_id=uuid.uuid4(), requester_ref=f"r{i}", mode="keyword", status="completed",
                                    requested_at=timezone.now(), deleted={"messages": i}, residual_hits=0)
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
    assert list(AuditRecord.objects.order_by("seq").values_list("requester_ref", flat=True)) == ["r0", "r1", "r2"]
    assert audit.audit_chain_check() == (3, None)
