"""The chat websocket through the real ASGI app (router, origin check, session auth)."""

import json
import time

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client
from websockets.sync.client import connect as ws_connect

from chat import services, turns
from chat.models import Message, Role
from dellm_site.ai.local import ACKNOWLEDGEMENT
from dellm_site.asgi import application
from memory.models import Edge, Fact
from tests.conftest import app_env, client_for, start_web

pytestmark = pytest.mark.django_db(transaction=True)

# What a browser on the app's own page sends: its Host, and that page's origin.
SAME_ORIGIN = [(b"host", b"127.0.0.1:8000"), (b"origin", b"http://127.0.0.1:8000")]


def session_headers(user):
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    return [(b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode()), *SAME_ORIGIN]


def session_cookie(user) -> str:
    return dict(session_headers(user))[b"cookie"].decode()


async def connect(user, conversation_id):
    headers = await sync_to_async(session_headers)(user) if user else SAME_ORIGIN
    communicator = WebsocketCommunicator(application, f"/ws/chat/{conversation_id}/", headers=headers)
    connected, _ = await communicator.connect(timeout=10)
    return communicator, connected


async def receive_until(communicator, wanted, timeout=60):
    frames = []
    while True:
        frame = await communicator.receive_json_from(timeout=timeout)
        frames.append(frame)
        if frame["type"] in wanted:
            return frames


async def test_streamed_conversation(user):
    conversation = await sync_to_async(services.conversation_create)(user=user)
    await sync_to_async(turns.message_post)(user=user, conversation_id=conversation.pk, content="I live in Lisbon.")
    communicator, connected = await connect(user, conversation.pk)
    assert connected
    try:
        await communicator.send_json_to({"type": "message", "content": "Where do I live?"})
        frames = await receive_until(communicator, {"reply", "error"})
    finally:
        await communicator.disconnect()
    types = [f["type"] for f in frames]
    assert types[0] == "user_message" and types[-1] == "reply"
    tokens = [f["delta"] for f in frames if f["type"] == "token"]
    assert len(tokens) > 1
    reply = frames[-1]["message"]
    assert "".join(tokens).strip() == reply["content"] and "Lisbon" in reply["content"]
    assert reply["context"][0] == frames[0]["message"]["id"]
    stored = await sync_to_async(
        lambda: list(Edge.objects.filter(dst_id=reply["id"]).order_by("pk").values_list("src_id", flat=True))
    )()
    assert stored == reply["context"]


@pytest.mark.parametrize(
    "raw, code",
    [
        ("not json", "malformed_frame"),
        ('["a", "list"]', "malformed_frame"),
        ('{"type": "dance"}', "unknown_type"),
        ('{"type": "message", "content": ""}', "empty_message"),
        ('{"type": "message", "content": 42}', "invalid"),
        (json.dumps({"type": "message", "content": "x" * (settings.DELLM_MAX_MESSAGE_CHARS + 1)}), "message_too_long"),
    ],
)
async def test_bad_frames_get_error_frames_and_change_nothing(user, raw, code):
    conversation = await sync_to_async(services.conversation_create)(user=user)
    communicator, connected = await connect(user, conversation.pk)
    assert connected
    try:
        await communicator.send_to(text_data=raw)
        frame = await communicator.receive_json_from(timeout=10)
        assert frame["type"] == "error" and frame["code"] == code and frame["detail"]
        # The socket stays usable after an error frame.
        await communicator.send_json_to({"type": "message", "content": "Hello there."})
        frames = await receive_until(communicator, {"reply", "error"})
        assert frames[-1]["type"] == "reply"
    finally:
        await communicator.disconnect()
    assert await sync_to_async(Message.objects.filter(conversation=conversation).count)() == 2


async def test_other_users_conversation_and_anonymous_are_refused(user, other_user):
    conversation = await sync_to_async(services.conversation_create)(user=user)
    communicator, _ = await connect(other_user, conversation.pk)
    frame = await communicator.receive_json_from(timeout=10)
    assert frame == {"type": "error", "code": "not_found", "detail": "Conversation not found."}
    assert (await communicator.receive_output(timeout=5))["type"] == "websocket.close"
    await communicator.disconnect()

    communicator, _ = await connect(None, conversation.pk)
    frame = await communicator.receive_json_from(timeout=10)
    assert frame["type"] == "error" and frame["code"] == "unauthenticated"
    await communicator.disconnect()
    assert await sync_to_async(Message.objects.count)() == 0


async def test_foreign_origin_is_rejected(user):
    conversation = await sync_to_async(services.conversation_create)(user=user)
    headers = [h for h in await sync_to_async(session_headers)(user) if h[0] != b"origin"]
    communicator = WebsocketCommunicator(
        application, f"/ws/chat/{conversation.pk}/", headers=[*headers, (b"origin", b"http://evil.example")]
    )
    connected, _ = await communicator.connect(timeout=10)
    assert not connected
    await communicator.disconnect()


@pytest.fixture
def slow_app(transactional_db):
    """The app in uvicorn with an LLM that takes a while per word, so a client can leave in the middle of a reply."""
    app, base = start_web(app_env(DELLM_TOKEN_DELAY="0.25"), "web-slow.log")
    yield base
    app.stop()


def wait_for(query, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while not (found := query()) and time.monotonic() < deadline:
        time.sleep(0.2)
    return found


def test_a_client_that_leaves_mid_reply_finds_the_reply_stored_when_it_comes_back(user, slow_app):
    conversation = services.conversation_create(user=user)
    url = slow_app.replace("http://", "ws://") + f"/ws/chat/{conversation.pk}/"
    headers = {"Cookie": session_cookie(user), "Origin": slow_app}
    with ws_connect(url, additional_headers=headers, open_timeout=10) as socket:
        socket.send(json.dumps({"type": "message", "content": "I live in Lisbon and I work as a baker."}))
        frames = [json.loads(socket.recv(timeout=30))]
        while frames[-1]["type"] != "token":
            frames.append(json.loads(socket.recv(timeout=30)))
    asked = frames[0]["message"]
    assert frames[0]["type"] == "user_message" and frames[-1]["delta"] != ACKNOWLEDGEMENT  # left mid-reply

    # The server finishes the reply, stores it with its provenance, and extracts the facts of the question.
    reply = wait_for(lambda: Message.objects.filter(conversation=conversation, role=Role.ASSISTANT).first())
    assert reply is not None and reply.content == ACKNOWLEDGEMENT
    assert list(Edge.objects.filter(dst_id=reply.pk).values_list("src_id", flat=True)) == [asked["id"]]
    facts = wait_for(lambda: list(Fact.objects.filter(owner=user).values_list("content", flat=True)))
    assert facts and all("Lisbon" in fact or "baker" in fact for fact in facts)

    # Coming back, the client sees it: over the API, and over a new socket that asks what it missed.
    listed = client_for(user).get(f"/api/conversations/{conversation.pk}/messages/").json()
    assert [(m["id"], m["content"]) for m in listed] == [(asked["id"], asked["content"]), (reply.pk, reply.content)]
    with ws_connect(url, additional_headers=headers, open_timeout=10) as socket:
        socket.send(json.dumps({"type": "history", "after": asked["id"]}))
        history = json.loads(socket.recv(timeout=30))
    assert history["type"] == "history"
    assert [(m["id"], m["content"], m["context"]) for m in history["messages"]] == [
        (reply.pk, ACKNOWLEDGEMENT, [asked["id"]])
    ]
