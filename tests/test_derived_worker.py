"""Derived memory with a real Redis broker and real Celery worker processes."""

import time

import httpx
import pytest

from dellm_site.ai.prompts import SUMMARY_INSTRUCTION
from memory.models import DerivedStatus, Fact, Summary

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]


def wait_for(predicate, timeout=120, interval=0.3, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what}")


class Api:
    def __init__(self, base, user):
        self.http = httpx.Client(base_url=base, headers={"Authorization": f"Token {user.token}"}, timeout=120)

    def conversation(self):
        return self.http.post("/api/conversations/", json={}).json()["id"]

    def say(self, conversation_id, text):
        response = self.http.post(f"/api/conversations/{conversation_id}/messages/", json={"content": text})
        assert response.status_code in (200, 201), response.text
        return response.json()


def test_worker_builds_and_rebuilds_facts_and_summaries(stack_factory, user):
    stack = stack_factory(DELLM_SUMMARY_EVERY="3")
    api = Api(stack["base"], user)
    c1 = api.conversation()
    lisbon = api.say(c1, "I live in Lisbon.")["user_message"]["id"]
    api.say(c1, "I have a tortoise called Sheldon.")
    api.say(c1, "I work as a nurse.")
    old = wait_for(
        lambda: Summary.objects.filter(conversation_id=c1, status=DerivedStatus.ACTIVE).first(), what="a summary"
    )
    wait_for(lambda: Fact.objects.filter(owner=user).count() == 3, what="three facts")
    assert "Lisbon" in old.content

    preview = api.http.post(
        "/api/forget/preview/", json={"mode": "natural", "query": "Forget that I live in Lisbon"}
    ).json()
    assert lisbon in {e["id"] for e in preview["matched"]}
    manifest = api.http.post(f"/api/forget/{preview['request_id']}/confirm/", json={}).json()
    assert manifest["status"] == "completed"

    def rebuilt():
        m = api.http.get(f"/api/forget/{preview['request_id']}/").json()
        return m if m["rebuilt"] and all(r["status"] != "pending" for r in m["rebuilt"]) else None

    final = wait_for(rebuilt, what="the rebuild")
    summary_entry = next(r for r in final["rebuilt"] if r["kind"] == "summary")
    assert summary_entry["status"] == "done" and summary_entry["id"] == old.pk
    new = Summary.objects.get(pk=summary_entry["new_ids"][0])
    assert new.version == old.version + 1 and new.derivation["rebuild_of"] == old.pk
    assert "Lisbon" not in new.content and "Sheldon" in new.content and "nurse" in new.content
    assert {f.content for f in Fact.objects.filter(owner=user)} == {
        "Has a tortoise called Sheldon.",
        "Works as a nurse.",
    }
    assert final["verification"]["residual_hits"] == 0 and final["timings"]["time_to_completion_s"] > 0
    assert "derived_rebuilds_task" in stack["worker"].output()


def test_worker_killed_mid_rebuild_is_retried_and_old_record_never_served(stack_factory, openai_stub, user):
    """A slow OpenAI-compatible model (the local protocol stub) keeps the rebuild in flight while
    the worker is killed; another worker picks the job up once its visibility timeout passes."""
    stack = stack_factory(
        DELLM_LLM="openai", OPENAI_API_KEY=openai_stub.api_key, OPENAI_BASE_URL=openai_stub.base_url,
        DELLM_LLM_MODEL="stub-model", DELLM_SUMMARY_EVERY="3", DELLM_TASK_VISIBILITY_TIMEOUT="3",
        DELLM_TASK_RESTORE_INTERVAL="1", DELLM_TASK_RESTORE_THROTTLE="1",
    )
    api = Api(stack["base"], user)
    c1 = api.conversation()
    api.say(c1, "I have a tortoise called Sheldon.")
    api.say(c1, "I live in Lisbon.")
    nurse = api.say(c1, "I work as a nurse.")["user_message"]["id"]
    old = wait_for(
        lambda: Summary.objects.filter(conversation_id=c1, status=DerivedStatus.ACTIVE).first(), what="a summary"
    )
    assert "nurse" in old.content  # the stub summarises the last line it was given

    summaries_asked = lambda: sum(  # noqa: E731
        1 for body in openai_stub.chat_requests if body["messages"][0]["content"] == SUMMARY_INSTRUCTION
    )
    before = summaries_asked()
    openai_stub.delay = 30  # the model goes slow: the rebuild will be in flight
    preview = api.http.post("/api/forget/preview/", json={"mode": "ids", "message_ids": [nurse]}).json()
    manifest = api.http.post(f"/api/forget/{preview['request_id']}/confirm/", json={}).json()
    assert [r["status"] for r in manifest["rebuilt"] if r["kind"] == "summary"] == ["pending"]
    wait_for(lambda: summaries_asked() > before, what="the rebuild to reach the model")
    stack["worker"].proc.kill()  # SIGKILL in the middle of the rebuild
    stack["worker"].proc.wait()
    openai_stub.delay = 0

    # Until the rebuild completes, neither the old summary nor anything from it is served.
    assert not Summary.objects.filter(pk=old.pk).exists()
    assert not Summary.objects.filter(conversation_id=c1, status=DerivedStatus.ACTIVE).exists()
    c2 = api.conversation()
    reply = api.say(c2, "What do I do for work?")["reply"]
    assert old.pk not in reply["context"] and "nurse" not in reply["content"]

    replacement = stack_factory.add_worker(stack["env"], "worker-2.log")

    def rebuilt():
        m = api.http.get(f"/api/forget/{preview['request_id']}/").json()
        entry = next(r for r in m["rebuilt"] if r["kind"] == "summary")
        return m if entry["status"] != "pending" else None

    final = wait_for(rebuilt, timeout=150, what=f"the retried rebuild\n{replacement.output()}")
    entry = next(r for r in final["rebuilt"] if r["kind"] == "summary")
    assert entry["status"] == "done", entry
    new = Summary.objects.get(pk=entry["new_ids"][0])
    assert new.version == old.version + 1 and "nurse" not in new.content
    assert final["verification"]["residual_hits"] == 0
