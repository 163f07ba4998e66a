"""The Redis path: a real Redis broker and channel layer, a real Celery worker process."""

import time

import httpx
import pytest
from asgiref.sync import async_to_sync

from memory.models import Embedding

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]


def wait_for(predicate, timeout=90, interval=0.3):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return False


def test_worker_process_embeds_posted_messages(live_stack, user):
    base = live_stack["base"]
    headers = {"Authorization": f"Token {user.token}"}
    conversation = httpx.post(f"{base}/api/conversations/", headers=headers, json={}, timeout=30).json()
    response = httpx.post(
        f"{base}/api/conversations/{conversation['id']}/messages/",
        headers=headers,
        json={"content": "I live in Lisbon."},
        timeout=120,
    )
    assert response.status_code == 201, response.text
    ids = [response.json()["user_message"]["id"], response.json()["reply"]["id"]]
    # The web process only enqueues (REDIS_URL is set); the worker process stores the vectors.
    assert wait_for(lambda: Embedding.objects.filter(node_id__in=ids).count() == 2), live_stack["worker"].output()
    log = live_stack["worker"].output()
    assert "memory.tasks.embed_node" in log and "succeeded" in log
    assert set(Embedding.objects.filter(node_id__in=ids).values_list("owner_id", flat=True)) == {user.pk}

    # Once the worker has embedded it, a question in a new conversation retrieves it.
    second = httpx.post(f"{base}/api/conversations/", headers=headers, json={}, timeout=30).json()
    reply = httpx.post(
        f"{base}/api/conversations/{second['id']}/messages/",
        headers=headers,
        json={"content": "Where do I live?"},
        timeout=120,
    ).json()["reply"]
    assert ids[0] in reply["context"] and "Lisbon" in reply["content"]


def test_redis_channel_layer_round_trip(redis_url, settings):
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [redis_url]}}
    }
    from channels.layers import channel_layers

    channel_layers.backends.pop("default", None)
    layer = channel_layers["default"]

    async def round_trip():
        channel = await layer.new_channel()
        await layer.group_add("chat-test", channel)
        await layer.group_send("chat-test", {"type": "chat.token", "delta": "hi"})
        return await layer.receive(channel)

    try:
        assert async_to_sync(round_trip)() == {"type": "chat.token", "delta": "hi"}
    finally:
        channel_layers.backends.pop("default", None)
