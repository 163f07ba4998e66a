"""The confirmed set: recomputed under lock from what the request matches at confirmation, and exactly
the rows a deletion removes (cascades included)."""

import pytest

from chat import services
from chat.models import Conversation, Message, Role
from dellm_site.errors import ApplicationError
from memory.graph import edges_record
from memory.models import Fact, Node, Summary
from provenance.forgetting import execution
from provenance.forgetting import services as forget
from provenance.models import AuditRecord, DeletionRequest
from tests.conftest import rows_containing, say

pytestmark = pytest.mark.django_db(transaction=True)

PASSPORT = "ZK-559104"


def test_conversation_delete_takes_messages_posted_after_the_preview(api, user):
    c = services.conversation_create(user=user)
    early = say(user, c, "I like hiking in the Alps.")
    preview = api.post("/api/forget/preview/", {"mode": "conversation", "conversation_id": c.pk}, format="json").json()
    assert {e["id"] for e in preview["matched"]} == {early.user_message.pk, early.reply.pk}

    late = say(user, c, f"My passport number is {PASSPORT} from Vellmaro.")
    fact = Fact.objects.get(in_edges__src_id=late.user_message.pk)
    assert PASSPORT in fact.content
    d = services.conversation_create(user=user)
    asked = say(user, d, "What is my passport number?")
    assert PASSPORT in asked.reply.content

    facts = set(Fact.objects.filter(in_edges__src_id=early.user_message.pk).values_list("pk", flat=True)) | {fact.pk}
    response = api.post(f"/api/forget/{preview['request_id']}/confirm/", {}, format="json")
    assert response.status_code == 200, response.content
    manifest = response.json()
    late_ids = {late.user_message.pk, late.reply.pk, fact.pk, asked.reply.pk}
    assert not Node.objects.filter(pk__in=late_ids).exists()
    assert not Conversation.objects.filter(pk=c.pk).exists()
    deleted_ids = set(DeletionRequest.objects.get(pk=preview["request_id"]).manifest["deleted_ids"])
    assert late_ids | {early.user_message.pk, early.reply.pk} <= deleted_ids
    assert manifest["deleted"]["messages"] == 5  # early 2, late 2, the other conversation's reply
    assert manifest["deleted"]["facts"] == len(facts) and facts <= deleted_ids
    assert manifest["deleted"]["conversations"] == 1
    assert manifest["verification"]["residual_hits"] == 0
    assert {r["id"]: r["status"] for r in manifest["rebuilt"]}[fact.pk] == "dropped"  # no source survives
    assert PASSPORT not in str(api.get("/api/memory/").json())
    assert rows_containing(PASSPORT) == {}

    again = say(user, d, "What is my passport number?")
    assert PASSPORT not in again.reply.content
    assert Message.objects.filter(pk=asked.user_message.pk).exists()  # the question itself held nothing


def test_a_derived_record_cut_off_from_all_its_sources_goes_with_them(user):
    c = services.conversation_create(user=user)
    kept_source = Message.objects.create(conversation=c, owner=user, role=Role.USER, content="I own a canoe.")
    source = Message.objects.create(conversation=c, owner=user, role=Role.USER, content="I was born in Tarnow.")
    only_child = Fact.objects.create(owner=user, content="The user was born in Tarnow.")
    edges_record(context_ids=[source.pk], dst_id=only_child.pk)
    shared = Summary.objects.create(owner=user, conversation=c, content="Born in Tarnow; owns a canoe.")
    edges_record(context_ids=[source.pk, kept_source.pk], dst_id=shared.pk)
    # Depth 0 names the message alone; the fact built from it alone cannot outlive it, the summary can.
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[source.pk], depth=0)
    assert [e["id"] for e in preview.plan["tainted"]] == [only_child.pk]
    manifest = forget.forget_confirm(user=user, request_id=preview.pk)
    assert not Node.objects.filter(pk__in=[source.pk, only_child.pk]).exists()
    assert Node.objects.filter(pk__in=[kept_source.pk, shared.pk]).count() == 2
    assert manifest["deleted"]["facts"] == 1 and manifest["deleted"]["messages"] == 1


def test_a_deletion_that_would_remove_rows_outside_its_manifest_is_rolled_back(user, monkeypatch):
    c = services.conversation_create(user=user)
    m = say(user, c, "I collect stamps from Bhutan.")
    other = services.conversation_create(user=user)
    bystander = say(user, other, "I have a cat named Ferdinand.")
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[m.user_message.pk])
    before = set(Node.objects.values_list("pk", flat=True))

    real_delete = execution.nodes_delete

    def delete_too_much(*, user, ids):
        real_delete(user=user, ids=ids)
        Conversation.objects.filter(pk=other.pk).delete()  # a cascade nobody planned

    monkeypatch.setattr(execution, "nodes_delete", delete_too_much)
    with pytest.raises(ApplicationError) as error:
        forget.forget_confirm(user=user, request_id=preview.pk)
    assert error.value.code == "deleted_rows_mismatch"
    assert set(Node.objects.values_list("pk", flat=True)) == before  # rolled back, nothing lost
    assert Message.objects.filter(pk=bystander.user_message.pk).exists()
    assert DeletionRequest.objects.get(pk=preview.pk).status == "executing"  # resumable
    assert AuditRecord.objects.get(request_id=preview.pk).status == "executing"

    monkeypatch.undo()
    assert forget.forget_resume()["resumed"] == [str(preview.pk)]
    assert not Node.objects.filter(pk=m.user_message.pk).exists()
    assert Message.objects.filter(pk=bystander.user_message.pk).exists()
