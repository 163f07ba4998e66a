"""Models that moved between apps keep their tables and rows: ApiToken (chat -> accounts) and Edge
(provenance -> memory). A database made before the moves migrates cleanly and keeps working."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from rest_framework.test import APIClient

from accounts.authentication import KEY_PREFIX, digest
from accounts.models import ApiToken
from chat.models import Message
from memory.models import Edge, Fact
from provenance.selectors import dep_ids

# The project's migrations as they stood before ApiToken moved to accounts and Edge to memory.
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


@pytest.mark.django_db(transaction=True)
def test_provenance_edges_survive_the_move_to_memory(apps_before_move):
    User = apps_before_move.get_model("auth", "User")
    Node = apps_before_move.get_model("memory", "Node")
    OldEdge = apps_before_move.get_model("provenance", "Edge")
    user = User.objects.create(username="ada", password="!")
    m1, m2, m3 = (Node.objects.create(owner=user, kind="message", content=f"m{i}") for i in range(1, 4))
    OldEdge.objects.create(src=m1, dst=m2)
    OldEdge.objects.create(src=m2, dst=m3)

    migrate_to_latest()

    assert set(Edge.objects.values_list("src_id", "dst_id")) == {(m1.pk, m2.pk), (m2.pk, m3.pk)}
    assert dep_ids(user=user, seeds=[m1.pk]) == {m1.pk, m2.pk, m3.pk}
    with pytest.raises(IntegrityError):  # the constraints came along with the table
        with transaction.atomic():
            Edge.objects.create(src_id=m1.pk, dst_id=m2.pk)


@pytest.mark.django_db(transaction=True)
def test_existing_rows_get_their_owner_on_every_table():
    executor = MigrationExecutor(connection)
    before = [("memory", "0006_node_informative"), ("chat", "0006_message_informative_backfill")]
    try:
        executor.migrate(before)
        old = executor.loader.project_state(before).apps
        User, Node, OldEdge = (old.get_model(*n) for n in (("auth", "User"), ("memory", "Node"), ("memory", "Edge")))
        OldConversation, OldMessage, OldFact = (
            old.get_model(*n) for n in (("chat", "Conversation"), ("chat", "Message"), ("memory", "Fact"))
        )
        ada, bob = User.objects.create(username="ada", password="!"), User.objects.create(username="bob", password="!")
        a1, a2 = (Node.objects.create(owner=ada, kind="message", content=f"a{i}") for i in range(2))
        b1, b2 = (Node.objects.create(owner=bob, kind="message", content=f"b{i}") for i in range(2))
        OldEdge.objects.create(src=a1, dst=a2)
        OldEdge.objects.create(src=b1, dst=b2)
        chat = OldConversation.objects.create(owner=bob)
        message = OldMessage.objects.create(owner=bob, kind="message", content="hi", conversation=chat, role="user")
        fact = OldFact.objects.create(owner=ada, kind="fact", content="Lives in Lisbon.")

        migrate_to_latest()

        assert dict(Edge.objects.values_list("dst_id", "owner_id")) == {a2.pk: ada.pk, b2.pk: bob.pk}
        assert Message.objects.get(pk=message.pk).node_owner_id == bob.pk
        assert Fact.objects.get(pk=fact.pk).node_owner_id == ada.pk
    finally:
        migrate_to_latest()
