"""Large deletions as background jobs (progress polled over REST, relayed over the websocket) and large previews
summarised and paged."""

import threading
import time

import pytest
from asgiref.sync import sync_to_async
from django.db import connections

from chat import services
from chat.models import Message
from provenance.forgetting import execution
from provenance.forgetting import services as forget
from provenance.models import DeletionJob, DeletionRequest
from tests.conftest import say
from tests.test_websocket import connect, receive_until

pytestmark = pytest.mark.django_db(transaction=True)

FACTS = ["I live in Lisbon.", "I have a tortoise called Sheldon.", "I work as a nurse."]


@pytest.fixture
def small_limits(settings):
    """A job from three items on, pages of two: large deletions in a few messages. Afterwards, waits for the
    jobs' threads to end, so none still holds a connection when the test's database is flushed."""
    settings.DELLM_FORGET_JOB_MIN_ITEMS = 3
    settings.DELLM_FORGET_PREVIEW_PAGE = 2
    yield
    for thread in threading.enumerate():
        if thread.name.startswith("forget-job-"):
            thread.join(timeout=60)


def _conversation(user):
    conversation = services.conversation_create(user=user)
    for text in FACTS:
        say(user, conversation, text)
    return conversation


def _until_completed(api, request_id: str, seen: list) -> dict:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        data = api.get(f"/api/forget/{request_id}/").json()
        if data["status"] == "completed":
            return data
        seen.append(data.get("progress"))
        time.sleep(0.05)
    raise AssertionError(f"the job did not complete: {seen[-3:]}")


def test_a_large_preview_is_summarised_and_paged(api, user, small_limits):
    conversation = _conversation(user)
    stored = set(Message.objects.filter(conversation=conversation).values_list("pk", flat=True))
    preview = api.post(
        "/api/forget/preview/", {"mode": "conversation", "conversation_id": conversation.pk}, format="json"
    ).json()
    summary = preview["summary"]
    everything = summary["matched"] + summary["tainted"]  # the messages, and the facts and summary built from them
    assert everything > len(stored) and summary["page_size"] == 2
    assert summary["by_conversation"][0] == {"conversation": conversation.pk, "items": len(stored)}
    assert summary["by_kind"]["message"] == len(stored) and sum(summary["by_kind"].values()) == everything
    assert len(preview["matched"]) == 2 and preview["matched"][0]["excerpt"]
    listed, url = [e["id"] for e in preview["matched"]], preview["next"]["matched"]
    assert url.endswith("list=matched&offset=2&limit=2")
    while url:
        page = api.get(url).json()
        assert page["count"] == summary["matched"] and len(page["results"]) <= 2 and page["previous"]
        listed += [e["id"] for e in page["results"]]
        url = page["next"]
    assert len(set(listed)) == len(listed) == summary["matched"] and stored <= set(listed)
    assert api.get(f"/api/forget/{preview['request_id']}/items/?list=elsewhere").status_code == 400


def test_a_large_deletion_runs_as_a_job_whose_progress_is_polled(api, user, small_limits, monkeypatch):
    conversation = _conversation(user)
    stored = set(Message.objects.filter(conversation=conversation).values_list("pk", flat=True))
    monkeypatch.setattr(execution, "WIPE_CHUNK", 2)
    read_meanwhile = []
    real_delete = execution.nodes_delete

    def delete_and_look(*, user, ids):
        real_delete(user=user, ids=ids)
        # Another connection sees how far the wipe is while its transaction is still open.
        other = connections.create_connection("default")
        try:
            with other.cursor() as cursor:
                cursor.execute("SELECT stage, done, total FROM provenance_deletionjob")
                read_meanwhile.append(cursor.fetchone())
                cursor.execute("SELECT count(*) FROM memory_node WHERE id = ANY(%s)", [sorted(stored)])
                read_meanwhile.append(cursor.fetchone()[0])
        finally:
            other.close()

    monkeypatch.setattr(execution, "nodes_delete", delete_and_look)
    preview = api.post(
        "/api/forget/preview/", {"mode": "conversation", "conversation_id": conversation.pk}, format="json"
    ).json()
    response = api.post(f"/api/forget/{preview['request_id']}/confirm/", {}, format="json")
    assert response.status_code == 202, response.content
    started = response.json()
    total = len(DeletionRequest.objects.get(pk=preview["request_id"]).target_ids)
    assert started["status"] == "executing" and started["progress"]["total"] == total > len(stored)
    seen = []
    manifest = _until_completed(api, preview["request_id"], seen)
    assert manifest["deleted"]["messages"] == len(stored) and manifest["verification"]["residual_hits"] == 0
    assert not Message.objects.filter(pk__in=stored).exists()
    # Mid-wipe: the progress said how far it was, and nothing was gone yet for anyone else (all or nothing).
    assert read_meanwhile[0::2] == [("wiping", done, total) for done in range(0, total, 2)]
    assert read_meanwhile[1::2] == [len(stored)] * len(range(0, total, 2))
    job = DeletionJob.objects.get(request_id=preview["request_id"])
    assert (job.stage, job.done, job.total) == ("completed", total, total)
    assert all(p is None or 0 <= (p["fraction"] or 0) <= 1 for p in seen)


def test_a_failed_job_leaves_the_deletion_resumable_and_confirming_again_finishes_it(
    api, user, small_limits, monkeypatch
):
    conversation = _conversation(user)
    stored = set(Message.objects.filter(conversation=conversation).values_list("pk", flat=True))

    def crash(**kwargs):
        raise RuntimeError("power cut")

    monkeypatch.setattr(execution, "nodes_delete", crash)
    preview = api.post(
        "/api/forget/preview/", {"mode": "conversation", "conversation_id": conversation.pk}, format="json"
    ).json()
    assert api.post(f"/api/forget/{preview['request_id']}/confirm/", {}, format="json").status_code == 202
    deadline = time.monotonic() + 60
    while DeletionJob.objects.get(request_id=preview["request_id"]).stage != "failed":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    progress = api.get(f"/api/forget/{preview['request_id']}/").json()["progress"]
    assert progress["stage"] == "failed" and progress["error"] == "RuntimeError"
    assert DeletionRequest.objects.get(pk=preview["request_id"]).status == "executing"
    assert Message.objects.filter(pk__in=stored).count() == len(stored)  # rolled back: nothing half-deleted
    monkeypatch.undo()
    assert api.post(f"/api/forget/{preview['request_id']}/confirm/", {}, format="json").status_code == 202
    manifest = _until_completed(api, preview["request_id"], [])
    assert manifest["deleted"]["messages"] == len(stored)


async def test_over_the_websocket_a_job_sends_its_progress_then_the_manifest(user, small_limits):
    conversation = await sync_to_async(_conversation)(user)
    preview = await sync_to_async(forget.forget_preview)(
        user=user, mode="conversation", conversation_id=conversation.pk
    )
    other = await sync_to_async(services.conversation_create)(user=user)
    communicator, connected = await connect(user, other.pk)
    assert connected
    try:
        await communicator.send_json_to({"type": "forget_confirm", "request_id": str(preview.pk)})
        frames = await receive_until(communicator, {"forget_done", "error"})
    finally:
        await communicator.disconnect()
    assert frames[0]["type"] == "forget_progress" and frames[0]["request_id"] == str(preview.pk)
    assert frames[-1]["type"] == "forget_done" and frames[-1]["manifest"]["status"] == "completed"
