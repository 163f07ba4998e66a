"""Many clients at once against a real server: 20 clients x 30 messages, half over REST and half over the
websocket, all concurrently. Nothing may be lost or doubled: every question and every reply is stored exactly
once, each reply with its provenance edges, and no client sees an error."""

import asyncio
import json
import time

import httpx
from websockets.asyncio.client import connect as ws_connect

from chat import services
from chat.models import Message, Role
from memory.models import Edge
from tests.conftest import ARTIFACTS
from tests.test_websocket import session_cookie

CLIENTS = 20
MESSAGES = 30


def text(client: int, turn: int) -> str:
    # Short, distinct, and alternating statements with questions, so replies quote the client's own memory.
    return f"My code {client}-{turn} is blue." if turn % 2 == 0 else f"What is my code {client}-{turn - 1}?"


async def rest_client(base: str, client: int, token: str, conversation_id: int) -> list[tuple[int, int, list]]:
    pairs = []
    headers = {"Authorization": f"Token {token}"}
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=120) as http:
        for turn in range(MESSAGES):
            response = await http.post(
                f"/api/conversations/{conversation_id}/messages/", json={"content": text(client, turn)}
            )
            assert response.status_code == 201, response.text
            body = response.json()
            assert body["reply"]["context"][0] == body["user_message"]["id"]
            pairs.append((body["user_message"]["id"], body["reply"]["id"], body["reply"]["context"]))
    return pairs


async def websocket_client(base: str, client: int, cookie: str, conversation_id: int) -> list[tuple[int, int, list]]:
    pairs = []
    url = base.replace("http://", "ws://") + f"/ws/chat/{conversation_id}/"
    async with ws_connect(url, additional_headers={"Cookie": cookie, "Origin": base}, open_timeout=60) as socket:
        for turn in range(MESSAGES):
            await socket.send(json.dumps({"type": "message", "content": text(client, turn)}))
            frames = []
            while not frames or frames[-1]["type"] not in ("reply", "error"):
                frame = json.loads(await asyncio.wait_for(socket.recv(), 120))
                # The previous turn's "memory updated" note may arrive after its reply: a notice, not this turn.
                if frame["type"] != "memory_updated":
                    frames.append(frame)
            assert frames[-1]["type"] == "reply", frames[-1]
            asked, reply = frames[0]["message"], frames[-1]["message"]
            assert frames[0]["type"] == "user_message" and reply["context"][0] == asked["id"]
            assert "".join(f["delta"] for f in frames if f["type"] == "token").strip() == reply["content"]
            pairs.append((asked["id"], reply["id"], reply["context"]))
    return pairs


def test_concurrent_clients_lose_nothing(make_user, live_app):
    clients = []
    for n in range(CLIENTS):
        user = make_user(f"load{n}")
        clients.append((user, services.conversation_create(user=user), session_cookie(user)))

    async def run_all():
        return await asyncio.gather(
            *(
                rest_client(live_app, n, user.token, conversation.pk)
                if n % 2 == 0
                else websocket_client(live_app, n, cookie, conversation.pk)
                for n, (user, conversation, cookie) in enumerate(clients)
            )
        )

    started = time.monotonic()
    results = asyncio.run(run_all())
    elapsed = time.monotonic() - started
    turns = CLIENTS * MESSAGES
    print(f"{turns} turns from {CLIENTS} clients in {elapsed:.1f} s ({turns / elapsed:.1f} turns/s)")

    log = (ARTIFACTS / "web.log").read_text(errors="replace")
    assert "Traceback" not in log and " 500 " not in log

    for n, ((user, conversation, _), pairs) in enumerate(zip(clients, results, strict=True)):
        messages = Message.objects.filter(conversation=conversation).order_by("pk")
        stored = list(messages.values_list("pk", "role", "content"))
        # Exactly the client's turns, each once, question then reply, in order.
        assert [pk for pk, _, _ in stored] == [pk for asked, reply, _ in pairs for pk in (asked, reply)]
        assert [(role, content) for _, role, content in stored[::2]] == [
            (Role.USER, text(n, turn)) for turn in range(MESSAGES)
        ]
        assert all(role == Role.ASSISTANT for _, role, _ in stored[1::2])
        # Each reply's provenance: one edge from every item of the context it was given, its question first.
        edges = set(Edge.objects.filter(dst_id__in=[reply for _, reply, _ in pairs]).values_list("src_id", "dst_id"))
        assert edges == {(src, reply) for _, reply, context in pairs for src in context}
        assert all(context[0] == asked for asked, _, context in pairs)
        assert not Message.objects.filter(owner=user).exclude(conversation=conversation).exists()
