"""Moving ApiToken from chat to accounts keeps the table and its rows: existing keys keep working."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from rest_framework.test import APIClient

from accounts.authentication import KEY_PREFIX, digest
from accounts.models import ApiToken

# The project's migrations as they stood before ApiToken moved to accounts.
BEFORE_MOVE = [
    ("chat", "0002_apitoken_conversation_external_key_and_more"),
    ("memory", "0003_fact_summary_taskrun"),
    ("provenance", "0002_auditrecord_deletionrequest"),
]


def migrate_to_latest() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.fixture
def apps_before_move():
    """The database migrated back to just before the move; yields the historical models of that state."""
    executor = MigrationExecutor(connection)
    pinned = {app for app, _ in BEFORE_MOVE} | {"accounts"}
    others = [node for node in executor.loader.graph.leaf_nodes() if node[0] not in pinned]
    try:
        executor.migrate([*others, *BEFORE_MOVE, ("accounts", None)])
        yield executor.loader.project_state([*others, *BEFORE_MOVE]).apps
    finally:
        # Later tests expect the normal schema.
        migrate_to_latest()


@pytest.mark.django_db(transaction=True)
def test_api_tokens_survive_the_move_to_accounts(apps_before_move):
    User = apps_before_move.get_model("auth", "User")
    OldApiToken = apps_before_move.get_model("chat", "ApiToken")
    user = User.objects.create(username="ada", password="!")
    key = KEY_PREFIX + "made-before-the-move"
    old = OldApiToken.objects.create(owner=user, name="laptop", prefix=key[: len(KEY_PREFIX) + 6], digest=digest(key))

    migrate_to_latest()

    moved = ApiToken.objects.get(pk=old.pk)
    assert moved.digest == digest(key) and moved.owner_id == user.pk and moved.name == "laptop"
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    response = client.get("/api/tokens/")
    assert response.status_code == 200
    assert [t["name"] for t in response.json()] == ["laptop"]
    moved.refresh_from_db()
    assert moved.last_used_at is not None
