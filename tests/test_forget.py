"""Forgetting: matching, Dep-based planning, preview, confirm, crash safety, races, audit."""

from datetime import timedelta

import pytest
from django.utils import timezone

from chat import services, turns
from chat.models import Conversation, Message, Role
from dellm_site.errors import ApplicationError
from memory.graph import edges_record
from memory.models import Edge, Embedding, Node
from provenance.forgetting import execution, intent
from provenance.forgetting import services as forget
from provenance.models import AuditRecord, DeletionRequest
from tests.conftest import rows_containing, say

pytestmark = pytest.mark.django_db(transaction=True)


# --- recognising requests ----------------------------------------------------------------

@pytest.mark.parametrize(
    "text, target",
    [
        ("Forget that I live in Lisbon.", "I live in Lisbon"),
        ("forget about my ex, Sam", "my ex, Sam"),
        ("Please delete everything about my diagnosis", "my diagnosis"),
        ("Can you remove what I said about the tortoise from your memory?", "the tortoise"),
        ("Erase my address please", "my address"),
        ("Don't remember that I am allergic to nuts", "I am allergic to nuts"),
        ("Stop remembering my phone number!", "my phone number"),
        ("OK, forget it", "it"),
    ],
)
def test_requests_are_recognised(text, target):
    assert intent.forget_request_target(text) == target


@pytest.mark.parametrize(
    "text", ["I live in Lisbon.", "Where do I live?", "Don't forget to buy milk", "I forgot my keys"]
)
def test_ordinary_messages_are_not_requests(text):
    assert intent.forget_request_target(text) is None


# --- the paper's example through the service ---------------------------------------------

def test_paper_fig7_forget_m1_removes_exactly_dep(user):
    conversation = Conversation.objects.create(owner=user)
    m = {
        i: Message.objects.create(conversation=conversation, owner=user, role=Role.USER, content=f"item {i}")
        for i in range(1, 9)
    }
    for dst, ctx in {2: [1], 4: [1, 3], 6: [5], 8: [1, 7]}.items():
        edges_record(context_ids=[m[c].pk for c in ctx], dst_id=m[dst].pk)
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[m[1].pk])
    assert {e["id"] for e in preview.plan["tainted"]} == {m[2].pk, m[4].pk, m[8].pk}
    manifest = forget.forget_confirm(user=user, request_id=preview.pk)
    survivors = set(Node.objects.values_list("pk", flat=True))
    assert survivors == {m[i].pk for i in (3, 5, 6, 7)}
    assert manifest["deleted"]["messages"] == 4 and manifest["deleted"]["edges"] == 5  # 1-2, 1-4, 3-4, 1-8, 7-8
    assert set(Edge.objects.values_list("src_id", "dst_id")) == {(m[5].pk, m[6].pk)}
    assert manifest["verification"]["residual_hits"] == 0


def _lisbon_world(user, other_user):
    c1 = services.conversation_create(user=user)
    lisbon = say(user, c1, "I live in Lisbon.")
    say(user, c1, "I have a tortoise called Sheldon.")
    c2 = services.conversation_create(user=user)
    asked = say(user, c2, "Where do I live?")
    assert "Lisbon" in asked.reply.content
    theirs = services.conversation_create(user=other_user)
    say(other_user, theirs, "I live in Lisbon.")
    return c1, c2, lisbon, asked


def test_natural_request_end_to_end_over_the_api(api, other_api, user, other_user, client):
    c1, c2, lisbon, asked = _lisbon_world(user, other_user)
    nodes_before = Node.objects.count()
    # A forget request typed into the chat is not answered, not stored: a preview comes back.
    response = api.post(
        f"/api/conversations/{c2.pk}/messages/", {"content": "Forget that I live in Lisbon."}, format="json"
    )
    assert response.status_code == 200, response.content
    preview = response.json()["forget_preview"]
    assert Node.objects.count() == nodes_before
    matched = {e["id"]: e for e in preview["matched"]}
    tainted = {e["id"]: e for e in preview["tainted"]}
    assert lisbon.user_message.pk in matched and matched[lisbon.user_message.pk]["reason"] in ("keyword", "semantic")
    assert asked.reply.pk in matched or asked.reply.pk in tainted
    assert lisbon.reply.pk in tainted or lisbon.reply.pk in matched
    for entry in tainted.values():
        assert entry["path"][0] in matched and entry["path"][-1] == entry["id"] and " used " in entry["explanation"]
    assert not set(matched) & set(Node.objects.filter(owner=other_user).values_list("pk", flat=True))

    # Nothing was deleted by the preview.
    assert Node.objects.count() == nodes_before
    manifest = api.post(f"/api/forget/{preview['request_id']}/confirm/", {}, format="json").json()
    assert manifest["status"] == "completed" and manifest["verification"]["residual_hits"] == 0
    assert manifest["deleted"]["messages"] >= 3 and manifest["deleted"]["embeddings"] >= 3

    # No text column holds "Lisbon" except the other user's rows; none of the first user's vectors of it remain.
    theirs = set(Node.objects.filter(owner=other_user).values_list("pk", flat=True))
    for table, column in (key.split(".") for key in rows_containing("Lisbon")):
        if table == "memory_node":
            assert set(Node.objects.filter(content__icontains="Lisbon").values_list("pk", flat=True)) <= theirs
        elif table == "chat_conversation":
            owners = Conversation.objects.filter(title__icontains="Lisbon").values_list("owner_id", flat=True)
            assert set(owners) == {other_user.pk}
        else:
            raise AssertionError(f"{table}.{column} still holds the deleted text")
    assert not Embedding.objects.filter(node_id__in=[lisbon.user_message.pk, lisbon.reply.pk, asked.reply.pk]).exists()
    assert Node.objects.filter(owner=other_user, content="I live in Lisbon.").exists()

    # The API, the pages and a new question do not reveal it.
    for conversation in (c1, c2):
        listed = api.get(f"/api/conversations/{conversation.pk}/messages/").json()
        assert "Lisbon" not in str(listed)
    assert "Lisbon" not in str(api.get("/api/conversations/").json())
    client.force_login(user)
    assert b"Lisbon" not in client.get(f"/c/{c1.pk}/").content
    c3 = services.conversation_create(user=user)
    again = say(user, c3, "Where do I live?")
    assert "Lisbon" not in again.reply.content
    assert set(again.context) & set(manifest["deleted_ids"]) == set()
    # Confirming again returns the same manifest; history lists it.
    assert api.post(f"/api/forget/{preview['request_id']}/confirm/", {}, format="json").json() == manifest
    history = api.get("/api/forget/").json()
    assert history[0]["request_id"] == preview["request_id"] and history[0]["status"] == "completed"
    audit = AuditRecord.objects.get(request_id=preview["request_id"])
    assert audit.status == "completed" and audit.deleted["messages"] == manifest["deleted"]["messages"]


def test_only_the_owner_sees_or_confirms(api, other_api, user, other_user):
    c1 = services.conversation_create(user=user)
    m = say(user, c1, "My PIN is 4321.")
    preview = api.post(
        "/api/forget/preview/", {"mode": "ids", "message_ids": [m.user_message.pk]}, format="json"
    ).json()
    assert other_api.get(f"/api/forget/{preview['request_id']}/").status_code == 404
    assert other_api.post(f"/api/forget/{preview['request_id']}/confirm/", {}, format="json").status_code == 404
    response = other_api.post(
        "/api/forget/preview/", {"mode": "ids", "message_ids": [m.user_message.pk]}, format="json"
    )
    assert response.status_code == 404
    other_preview = other_api.post("/api/forget/preview/", {"mode": "exact", "query": "PIN"}, format="json").json()
    assert other_preview["matched"] == [] and other_preview["tainted"] == []
    assert Node.objects.filter(pk=m.user_message.pk).exists()


def test_bad_preview_requests(api):
    for body, code in [
        ({"mode": "telepathy"}, "invalid"),
        ({"mode": "keyword"}, "invalid"),
        ({"mode": "ids"}, "invalid"),
        ({"mode": "semantic", "query": "x", "threshold": 7}, "invalid"),
        ({"mode": "natural", "query": "forget it"}, "vague_request"),
    ]:
        response = api.post("/api/forget/preview/", body, format="json")
        assert response.status_code == 400 and response.json()["code"] == code, (body, response.content)
    assert api.post("/api/forget/not-a-uuid/confirm/", {}, format="json").status_code == 404
    assert DeletionRequest.objects.count() == 0


def test_preview_expires(api, user):
    c1 = services.conversation_create(user=user)
    m = say(user, c1, "Secret plan.")
    preview = api.post(
        "/api/forget/preview/", {"mode": "ids", "message_ids": [m.user_message.pk]}, format="json"
    ).json()
    DeletionRequest.objects.filter(pk=preview["request_id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = api.post(f"/api/forget/{preview['request_id']}/confirm/", {}, format="json")
    assert response.status_code == 410 and response.json()["code"] == "expired"
    assert Node.objects.filter(pk=m.user_message.pk).exists()
    assert DeletionRequest.objects.get(pk=preview["request_id"]).working == {}


def test_keep_and_depth_relaxations_are_honoured_and_recorded(user):
    conversation = Conversation.objects.create(owner=user)
    a, b, c, d = (
        Message.objects.create(conversation=conversation, owner=user, role=Role.USER, content=f"n{i}") for i in range(4)
    )
    edges_record(context_ids=[a.pk], dst_id=b.pk)
    edges_record(context_ids=[b.pk], dst_id=c.pk)
    edges_record(context_ids=[a.pk], dst_id=d.pk)
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[a.pk], depth=1)
    assert {e["id"] for e in preview.plan["tainted"]} == {b.pk, d.pk}
    with pytest.raises(ApplicationError):
        forget.forget_confirm(user=user, request_id=preview.pk, keep=[c.pk])  # not in the preview
    manifest = forget.forget_confirm(user=user, request_id=preview.pk, keep=[d.pk])
    assert set(Node.objects.values_list("pk", flat=True)) == {c.pk, d.pk}
    assert manifest["kept"] == [d.pk] and manifest["depth"] == 1 and manifest["strict"] is False


def test_crash_mid_deletion_rolls_back_and_resumes(user, other_user, monkeypatch):
    c1, c2, lisbon, asked = _lisbon_world(user, other_user)
    sheldon = Message.objects.get(owner=user, content="I have a tortoise called Sheldon.")
    before = set(Node.objects.values_list("pk", flat=True))
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[lisbon.user_message.pk])

    def crash(**kwargs):
        raise RuntimeError("power cut")

    monkeypatch.setattr(execution, "nodes_delete", crash)
    with pytest.raises(RuntimeError):
        forget.forget_confirm(user=user, request_id=preview.pk)
    # Edges and embeddings were deleted before the crash inside the transaction: all rolled back.
    assert set(Node.objects.values_list("pk", flat=True)) == before
    assert Embedding.objects.filter(node_id=lisbon.user_message.pk).exists()
    assert Edge.objects.filter(src_id=lisbon.user_message.pk).exists()
    request = DeletionRequest.objects.get(pk=preview.pk)
    assert request.status == "executing"
    assert AuditRecord.objects.get(request_id=preview.pk).status == "executing"  # evidence survives the crash

    monkeypatch.undo()
    assert forget.forget_resume()["resumed"] == [str(preview.pk)]
    request.refresh_from_db()
    assert request.status == "completed" and request.working == {}
    gone = {lisbon.user_message.pk, lisbon.reply.pk, asked.reply.pk}
    assert set(Node.objects.values_list("pk", flat=True)) == before - set(request.target_ids)
    assert gone <= set(request.target_ids)
    assert Node.objects.filter(pk=sheldon.pk).exists() and Message.objects.filter(owner=other_user).count() == 2
    assert Node.objects.filter(owner=other_user, kind="fact").count() == 1


def test_reply_in_flight_when_its_context_is_deleted_is_discarded(user):
    c1 = services.conversation_create(user=user)
    lisbon = say(user, c1, "I live in Lisbon.")
    c2 = services.conversation_create(user=user)
    stream = turns.message_post_stream(user=user, conversation_id=c2.pk, content="Where do I live?")
    assert next(stream).type == "user_message"
    first_token = next(stream)
    assert first_token.type == "token"
    # While the reply is being streamed, the message it was built from is forgotten.
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[lisbon.user_message.pk])
    forget.forget_confirm(user=user, request_id=preview.pk)
    with pytest.raises(ApplicationError) as error:
        list(stream)
    assert error.value.code == "context_deleted"
    assert not Message.objects.filter(conversation=c2, role=Role.ASSISTANT).exists()
    assert not Node.objects.filter(content__icontains="Lisbon").exists()


def test_forgetting_a_conversation_taints_replies_elsewhere(api, user):
    c1 = services.conversation_create(user=user)
    lisbon = say(user, c1, "I live in Lisbon.")
    c2 = services.conversation_create(user=user)
    asked = say(user, c2, "Where do I live?")
    unrelated = say(user, c2, "I have a tortoise called Sheldon.")
    preview = api.post("/api/forget/preview/", {"mode": "conversation", "conversation_id": c1.pk}, format="json").json()
    assert {e["id"] for e in preview["matched"]} == {lisbon.user_message.pk, lisbon.reply.pk}
    assert asked.reply.pk in {e["id"] for e in preview["tainted"]}
    manifest = api.post(f"/api/forget/{preview['request_id']}/confirm/", {}, format="json").json()
    assert manifest["deleted"]["conversations"] == 1
    assert not Conversation.objects.filter(pk=c1.pk).exists()
    assert not Message.objects.filter(pk=asked.reply.pk).exists()
    assert Message.objects.filter(pk__in=[asked.user_message.pk, unrelated.user_message.pk]).count() == 2


def test_audit_record_holds_no_content(user):
    c1 = services.conversation_create(user=user)
    m = say(user, c1, "My diagnosis is hypothyroidism.")
    preview = forget.forget_preview(user=user, mode="keyword", query="hypothyroidism")
    forget.forget_confirm(user=user, request_id=preview.pk)
    audit = AuditRecord.objects.get(request_id=preview.pk)
    assert "hypothyroidism" not in str(audit.__dict__).lower()
    assert str(m.user_message.pk) not in [str(x) for x in audit.item_refs]
    assert audit.item_refs and audit.requester_ref != str(user.pk)
    assert rows_containing("hypothyroidism") == {}


def test_cancelled_preview_drops_its_words_and_cannot_be_confirmed(api, user):
    c1 = services.conversation_create(user=user)
    say(user, c1, "My locker code is 5521.")
    preview = api.post("/api/forget/preview/", {"mode": "keyword", "query": "locker code"}, format="json").json()
    assert api.post(f"/api/forget/{preview['request_id']}/cancel/", {}, format="json").status_code == 204
    request = DeletionRequest.objects.get(pk=preview["request_id"])
    assert request.status == "expired" and request.working == {}
    assert api.post(f"/api/forget/{preview['request_id']}/confirm/", {}, format="json").status_code == 410
    assert Message.objects.filter(content="My locker code is 5521.").exists()
