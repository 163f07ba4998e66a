""""Memory updated": the facts saved from a user's message are named after its reply, on REST and the websocket,
in-process at once and with Celery workers once extracted; never for a message that states nothing, nor with
memory off."""

import json

import pytest
from asgiref.sync import sync_to_async
from websockets.sync.client import connect as ws_connect

from chat import services
from memory.models import Fact
from memory.preferences import memory_preference_set
from tests.test_websocket import connect, receive_until, session_cookie

pytestmark = pytest.mark.django_db(transaction=True)


def test_rest_reply_names_the_facts_saved(api, user):
    conversation = api.post("/api/conversations/", {}, format="json").json()["id"]
    url = f"/api/conversations/{conversation}/messages/"
    told = api.post(url, {"content": "I live in Lisbon."}, format="json").json()
    fact = Fact.objects.get(owner=user, content="Lives in Lisbon.")
    assert told["memory_updated"] == [{"id": fact.pk, "content": "Lives in Lisbon."}]
    assert api.post(url, {"content": "What is the capital of France?"}, format="json").json()["memory_updated"] == []
    memory_preference_set(user=user, enabled=False)
    assert api.post(url, {"content": "I have a dog called Rex."}, format="json").json()["memory_updated"] == []


async def test_websocket_sends_memory_updated_after_the_reply(user):
    conversation = await sync_to_async(services.conversation_create)(user=user)
    communicator, connected = await connect(user, conversation.pk)
    assert connected
    try:
        await communicator.send_json_to({"type": "message", "content": "I have a tortoise called Sheldon."})
        frames = await receive_until(communicator, {"memory_updated", "error"})
        types = [f["type"] for f in frames]
        assert types[0] == "user_message" and types[-2:] == ["reply", "memory_updated"]
        note = frames[-1]
        assert note["message"] == frames[0]["message"]["id"]
        assert [f["content"] for f in note["facts"]] == ["Has a tortoise called Sheldon."]
    finally:
        await communicator.disconnect()


@pytest.mark.redis
def test_with_workers_the_note_follows_once_the_fact_is_extracted(live_stack, user):
    conversation = services.conversation_create(user=user)
    url = live_stack["base"].replace("http://", "ws://") + f"/ws/chat/{conversation.pk}/"
    headers = {"Cookie": session_cookie(user), "Origin": live_stack["base"]}
    with ws_connect(url, additional_headers=headers, open_timeout=10) as socket:
        socket.send(json.dumps({"type": "message", "content": "I work as a nurse."}))
        frames = [json.loads(socket.recv(timeout=60))]
        while frames[-1]["type"] not in ("memory_updated", "error"):
            frames.append(json.loads(socket.recv(timeout=60)))
    types = [f["type"] for f in frames]
    assert "reply" in types and types[-1] == "memory_updated", types
    fact = Fact.objects.get(owner=user)
    assert frames[-1]["facts"] == [{"id": fact.pk, "content": fact.content}]
