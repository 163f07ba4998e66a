"""Scale-out readiness: every table of user data carries its owner, and every statement of the hot paths that
touches one is routed by it (a filter on the owner, or the owner among the columns it inserts), so the database
can be sharded by owner and each such statement reaches one shard. The SQL is captured from the real code (not
Django's ``CaptureQueriesContext``: each statement is kept with the line of the project's code that ran it)."""

from __future__ import annotations

import re
import traceback
from pathlib import Path

import pytest
from django.apps import apps
from django.db import connection

from chat import turns
from chat.models import Conversation
from memory.models import Node
from provenance.forgetting import services as forget
from provenance.selectors import node_influence
from tests.conftest import ROOT, client_for, say

pytestmark = pytest.mark.django_db(transaction=True)

# The tables of user data, each with the column that names its owner.
USER_TABLES = {
    "memory_node": "owner_id",
    "memory_embedding": "owner_id",
    "provenance_edge": "owner_id",
    "chat_conversation": "owner_id",
    "provenance_deletionrequest": "owner_id",
    "memory_memorypreference": "owner_id",
    # Rows that extend a memory_node row (multi-table inheritance) keep a copy of its owner.
    "chat_message": "owner_id",
    "memory_fact": "owner_id",
    "memory_summary": "owner_id",
}
# The audit log holds no user data by design: no owner, no content, a keyed pseudonym; its hash chain spans every
# user (one sequence), so it stays whole on one node (see README, Deploying).
# API tokens are found by their digest before anyone is known to be signed in, so they are looked up whole (they
# carry their owner, and hold no chat data).
GLOBAL_TABLES = {"provenance_auditrecord", "accounts_apitoken"}

TRANSACTION_CONTROL = re.compile(r"^\s*(SAVEPOINT|RELEASE SAVEPOINT|ROLLBACK TO SAVEPOINT|BEGIN|COMMIT|SET)\b", re.I)
# Postgres's own counters of the transaction (the wipe checks how many node rows it deleted) name a table of user
# data, but read none of its rows.
STATISTICS = re.compile(r"^\s*SELECT\b[^;]*\bFROM\s+pg_stat_xact_user_tables\b", re.I)


def tables_in(sql: str) -> set[str]:
    names = set(USER_TABLES) | GLOBAL_TABLES
    return {name for name in names if re.search(rf'(?<![\w.]){re.escape(name)}(?!\w)|"{name}"', sql)}


def routed_by_owner(sql: str, owner_id: int) -> bool:
    """The statement filters by ``owner_id`` (=, IN, ANY), or is an INSERT that writes the owner column."""
    owner = r'"?owner_id"?'
    if re.match(r"\s*INSERT\b", sql, re.I):
        columns = re.search(r"INSERT INTO\s+\S+\s*\(([^)]*)\)", sql, re.I)
        return bool(columns) and re.search(owner, columns.group(1)) is not None
    return re.search(rf"{owner}\s*(=|IN\s*\(|=\s*ANY\s*\()\s*'?{owner_id}\b", sql, re.I) is not None


class Captured:
    """Every statement run on the connection, as sent (parameters in place), with the lines of the project's code
    that ran it (every call of the project's code on the stack, outermost first)."""

    def __init__(self, conn):
        self.connection = conn
        self.statements: list[tuple[str, str]] = []

    def __enter__(self):
        self._wrapper = self.connection.execute_wrapper(self._record)
        self._wrapper.__enter__()
        return self

    def __exit__(self, *exc):
        self._wrapper.__exit__(*exc)

    def _record(self, execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        frames = [f for f in traceback.extract_stack() if f.filename.startswith(str(ROOT))
                  and "/tests/" not in f.filename and "/.venv/" not in f.filename]
        origin = " > ".join(f"{Path(f.filename).relative_to(ROOT)}:{f.lineno}" for f in frames) or "?"
        text = sql if many else self.connection.ops.last_executed_query(context["cursor"].cursor, sql, params)
        self.statements.append((origin, text))
        return result


def unrouted(captured: Captured, owner_id: int) -> list[str]:
    """The captured statements that touch a table of user data without the owner's filter, each with where
    it was run from."""
    out = []
    for origin, sql in captured.statements:
        if TRANSACTION_CONTROL.match(sql) or STATISTICS.match(sql):
            continue
        touched = tables_in(sql) - GLOBAL_TABLES
        if touched and not routed_by_owner(sql, owner_id):
            out.append(f"{origin}: {sql[:400]}")
    return out


def test_every_table_of_user_data_has_an_owner_column():
    tables = {model._meta.db_table: model for model in apps.get_models()}
    for table, column in USER_TABLES.items():
        assert column in {f.column for f in tables[table]._meta.local_concrete_fields}, table


def test_a_node_subclass_row_keeps_its_nodes_owner(user, history):
    from chat.models import Message
    from memory.models import Fact, Summary

    for model in (Message, Fact, Summary):
        rows = list(model.objects.values_list("owner_id", "node_owner_id"))
        assert rows and all(owner == copy for owner, copy in rows), model


def test_the_checker_sees_a_missing_owner_filter(user):
    with Captured(connection) as captured:
        list(Conversation.objects.filter(pk=1))
        list(Conversation.objects.filter(owner=user, pk=1))
        list(Node.objects.raw("SELECT * FROM memory_node WHERE id = %s", [1]))
        with connection.cursor() as cursor:
            cursor.execute("SELECT n_tup_del FROM pg_stat_xact_user_tables WHERE relid = 'memory_node'::regclass")
    assert len(unrouted(captured, user.pk)) == 2


@pytest.fixture
def history(user, other_user):
    """Two users with a few turns each, a fact and a summary, so every hot path finds something to read."""
    mine = Conversation.objects.create(owner=user)
    theirs = Conversation.objects.create(owner=other_user)
    for text in ["I live in Lisbon.", "I keep bees.", "My sister is called Ana.", "Where do I live?"]:
        say(user, mine, text)
        say(other_user, theirs, text)
    return mine


def test_a_chat_turn_reads_and_writes_by_owner(user, history, settings):
    settings.DELLM_DERIVED_MEMORY = False  # derivations are jobs of their own, checked below
    with Captured(connection) as captured:
        result = turns.message_post(user=user, conversation_id=history.pk, content="What do I keep in my garden?")
    assert len(result.context) > 1  # retrieval found stored items, and their edges were recorded
    assert not (bad := unrouted(captured, user.pk)), "\n".join(bad)


def forget_statements(user) -> tuple[list[str], list[str]]:
    """The unrouted statements of a Forget preview, and of its confirm (with the rebuilds they queue)."""
    with Captured(connection) as previewed:
        request = forget.forget_preview(user=user, mode="natural", query="forget that I live in Lisbon")
    assert request.plan["matched"]
    with Captured(connection) as confirmed:
        manifest = forget.forget_confirm(user=user, request_id=request.pk)
    assert manifest["deleted"]["messages"] >= 1
    return unrouted(previewed, user.pk), unrouted(confirmed, user.pk)


def test_the_forget_preview_and_confirm_read_and_write_by_owner(user, history, settings):
    # Sharded, the app runs with workers: the beat expires everyone's stale previews, and a forget action only its
    # user's (without workers every forget action sweeps everyone's: tests/test_forget_previews.py).
    settings.DELLM_FORGET_SWEEP_ON_REQUEST = False
    previewed, confirmed = forget_statements(user)
    bad = ["PREVIEW " + s for s in previewed] + ["CONFIRM " + s for s in confirmed]
    assert not bad, "\n".join(bad)


def test_the_influence_panel_reads_by_owner(user, history):
    first = history.messages.order_by("pk").first()
    with Captured(connection) as captured:
        assert node_influence(user=user, node_id=first.pk)
        response = client_for(user).get(f"/api/messages/{first.pk}/influence/")
    assert response.status_code == 200 and response.json()["influenced"]
    assert not (bad := unrouted(captured, user.pk)), "\n".join(bad)
