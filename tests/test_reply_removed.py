"""After a deletion: a question whose reply was forgotten is marked (nothing of the reply kept) and can be
answered again from what remains, over REST and the websocket; a conversation left empty goes."""

import pytest
from asgiref.sync import sync_to_async

from chat import services, turns
from chat.models import Conversation, Message
from memory.graph import context_ids
from provenance.forgetting import services as forget
from tests.conftest import rows_containing, say
from tests.test_websocket import connect, receive_until

pytestmark = pytest.mark.django_db(transaction=True)


def _forget(user, ids: list[int]) -> dict:
    preview = forget.forget_preview(user=user, mode="ids", message_ids=ids)
    return forget.forget_confirm(user=user, request_id=preview.pk)


def _lisbon_then_asked(user):
    """"I live in Lisbon." alone in one conversation; "Where do I live?" answered with it in another."""
    home = services.conversation_create(user=user)
    lisbon = say(user, home, "I live in Lisbon.")
    elsewhere = services.conversation_create(user=user)
    asked = say(user, elsewhere, "Where do I live?")
    assert lisbon.user_message.pk in asked.context  # the reply was written with Lisbon in view
    return home, lisbon, elsewhere, asked


def test_forgotten_reply_leaves_a_marker_without_content_and_an_emptied_conversation_goes(api, user):
    home, lisbon, elsewhere, asked = _lisbon_then_asked(user)
    reply_text = asked.reply.content
    manifest = _forget(user, [lisbon.user_message.pk])

    assert not Message.objects.filter(pk=asked.reply.pk).exists()
    question = Message.objects.get(pk=asked.user_message.pk)
    assert question.reply_removed and question.content == "Where do I live?"
    assert not Conversation.objects.filter(pk=home.pk).exists()  # nothing was left in it
    assert Conversation.objects.filter(pk=elsewhere.pk).exists()
    assert manifest["deleted"]["conversations"] == 1
    assert not rows_containing(reply_text[:40])

    listed = api.get(f"/api/conversations/{elsewhere.pk}/messages/").json()
    assert [(m["id"], m["reply_removed"]) for m in listed] == [(question.pk, True)]
    assert [c["id"] for c in api.get("/api/conversations/").json()] == [elsewhere.pk]


def test_answer_again_writes_a_new_reply_from_what_remains(api, user, client):
    _, lisbon, elsewhere, asked = _lisbon_then_asked(user)
    _forget(user, [lisbon.user_message.pk])
    question = asked.user_message.pk

    client.force_login(user)
    page = client.get(f"/c/{elsewhere.pk}/").content.decode()
    assert "A reply was removed here because it used something you asked me to forget" in page
    assert f'class="small answer-again" data-question="{question}"' in page

    response = api.post(f"/api/conversations/{elsewhere.pk}/messages/{question}/answer-again/")
    assert response.status_code == 201, response.content
    reply = response.json()["reply"]
    assert reply["role"] == "assistant" and reply["question"] == question
    assert reply["context"][0] == question and lisbon.user_message.pk not in reply["context"]
    assert context_ids(node_ids=[reply["id"]])[reply["id"]] == reply["context"]  # its own edges
    assert not Message.objects.get(pk=question).reply_removed
    page = client.get(f"/c/{elsewhere.pk}/").content.decode()
    assert "A reply was removed here" not in page
    assert page.index(f'id="m{question}"') < page.index(f'id="m{reply["id"]}"')

    # Answered now: asking again is refused, as it is for a reply or a question of another conversation.
    again = api.post(f"/api/conversations/{elsewhere.pk}/messages/{question}/answer-again/")
    assert again.status_code == 409 and again.json()["code"] == "not_answerable_again"
    assert api.post(f"/api/conversations/{elsewhere.pk}/messages/{reply['id']}/answer-again/").status_code == 409


def test_a_reply_keeps_its_place_after_its_question(user, client):
    """A question answered again, after later turns, shows its new reply right after it."""
    _, lisbon, elsewhere, asked = _lisbon_then_asked(user)
    _forget(user, [lisbon.user_message.pk])
    later = say(user, elsewhere, "I have a tortoise called Sheldon.")

    reply, _ = turns.answer_again(user=user, conversation_id=elsewhere.pk, message_id=asked.user_message.pk)
    client.force_login(user)
    page = client.get(f"/c/{elsewhere.pk}/").content.decode()
    order = [asked.user_message.pk, reply.pk, later.user_message.pk, later.reply.pk]
    positions = [page.index(f'id="m{pk}"') for pk in order]
    assert positions == sorted(positions)


async def test_answer_again_over_the_websocket(user):
    _, lisbon, elsewhere, asked = await sync_to_async(_lisbon_then_asked)(user)
    await sync_to_async(_forget)(user, [lisbon.user_message.pk])
    communicator, connected = await connect(user, elsewhere.pk)
    assert connected
    try:
        await communicator.send_json_to({"type": "answer_again", "message_id": asked.user_message.pk})
        frames = await receive_until(communicator, {"reply", "error"})
        assert frames[-1]["type"] == "reply", frames
        assert "user_message" not in [f["type"] for f in frames]  # the question is not posted again
        assert frames[-1]["message"]["question"] == asked.user_message.pk
        await communicator.send_json_to({"type": "answer_again", "message_id": "x"})
        error = await communicator.receive_json_from(timeout=10)
        assert error["type"] == "error" and error["code"] == "invalid"
    finally:
        await communicator.disconnect()
