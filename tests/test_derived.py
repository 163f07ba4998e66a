"""Derived memory in-process: facts, summaries, rectify, and how forgetting treats them."""

import pytest

from chat import services
from chat.models import Message
from memory.models import DerivedStatus, Edge, Embedding, Fact, Summary, TaskRun
from memory.selectors import memory_overview
from provenance.forgetting import services as forget
from provenance.tasks import vacuum_after_forget
from tests.conftest import say

pytestmark = pytest.mark.django_db(transaction=True)


def test_facts_and_summary_are_built_with_sources_and_versions(user, settings):
    settings.DELLM_SUMMARY_EVERY = 3
    c1 = services.conversation_create(user=user)
    lisbon = say(user, c1, "I live in Lisbon.")
    say(user, c1, "I have a tortoise called Sheldon.")
    say(user, c1, "What is the capital of France?")
    facts = {f.content: f for f in Fact.objects.filter(owner=user)}
    assert set(facts) == {"Lives in Lisbon.", "Has a tortoise called Sheldon."}
    fact = facts["Lives in Lisbon."]
    assert list(Edge.objects.filter(dst=fact).values_list("src_id", flat=True)) == [lisbon.user_message.pk]
    assert fact.derivation["backend"] == "local:extractive" and fact.derivation["prompt_hash"]
    assert Embedding.objects.filter(node=fact).exists()
    summary = Summary.objects.get(conversation=c1, status=DerivedStatus.ACTIVE)
    assert "Lisbon" in summary.content and "Sheldon" in summary.content and summary.version == 1
    assert set(Edge.objects.filter(dst=summary).values_list("src_id", flat=True)) == set(
        Message.objects.filter(conversation=c1, role="user").values_list("pk", flat=True)
    )
    overview = memory_overview(user=user)
    assert {f["content"] for f in overview["facts"]} == set(facts)
    assert overview["summaries"][0]["sources"] and overview["summaries"][0]["conversation"] == c1.pk
    assert TaskRun.objects.filter(kind="facts_extract_task", status="succeeded").exists()
    assert TaskRun.objects.filter(kind="summary_refresh_task", status="succeeded").exists()


def test_reply_that_used_a_derived_fact_is_tainted_and_deleted(user):
    c1 = services.conversation_create(user=user)
    lisbon = say(user, c1, "I live in Lisbon.")
    fact = Fact.objects.get(owner=user, content="Lives in Lisbon.")
    c2 = services.conversation_create(user=user)
    # The fact and its source share one context slot; asked this way, the fact ranks first and takes it.
    asked = say(user, c2, "Which city does the user live in?")
    assert fact.pk in asked.context and lisbon.user_message.pk not in asked.context
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[lisbon.user_message.pk])
    tainted = {e["id"]: e for e in preview.plan["tainted"]}
    assert fact.pk in tainted and asked.reply.pk in tainted
    assert {e["id"] for e in preview.plan["derived"]} == {fact.pk}
    manifest = forget.forget_confirm(user=user, request_id=preview.pk)
    assert not Fact.objects.filter(pk=fact.pk).exists() and not Message.objects.filter(pk=asked.reply.pk).exists()
    assert manifest["deleted"]["facts"] == 1
    assert manifest["rebuilt"] == [
        {"id": fact.pk, "kind": "fact", "status": "dropped", "version": 1, "reason": "no surviving sources"}
    ]
    assert not Fact.objects.filter(owner=user, content__icontains="Lisbon").exists()


def test_forgetting_a_source_rebuilds_the_summary_without_it(user, settings):
    settings.DELLM_SUMMARY_EVERY = 3
    c1 = services.conversation_create(user=user)
    lisbon = say(user, c1, "I live in Lisbon.")
    say(user, c1, "I have a tortoise called Sheldon.")
    say(user, c1, "I work as a nurse.")
    old = Summary.objects.get(conversation=c1, status=DerivedStatus.ACTIVE)
    assert "Lisbon" in old.content
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[lisbon.user_message.pk])
    manifest = forget.forget_confirm(user=user, request_id=preview.pk)
    rebuilt = {r["kind"]: r for r in manifest["rebuilt"]}
    assert rebuilt["summary"]["status"] == "done" and rebuilt["summary"]["id"] == old.pk
    new = Summary.objects.get(pk=rebuilt["summary"]["new_ids"][0])
    assert new.status == DerivedStatus.ACTIVE and new.version == old.version + 1
    assert "Lisbon" not in new.content and "Sheldon" in new.content and "nurse" in new.content
    assert not Summary.objects.filter(pk=old.pk).exists()
    assert manifest["verification"]["residual_hits"] == 0
    assert manifest["timings"]["time_to_completion_s"] >= 0
    # The maintenance is left to a background run (once for every erasure waiting for it), not the confirmation.
    assert not TaskRun.objects.filter(kind="vacuum_after_forget").exists()
    vacuum_after_forget.delay()
    assert TaskRun.objects.filter(kind="vacuum_after_forget", status="succeeded").exists()


def test_rectify_supersedes_without_erasing(api, user):
    c1 = services.conversation_create(user=user)
    lisbon = say(user, c1, "I live in Lisbon.")
    fact = Fact.objects.get(owner=user, content="Lives in Lisbon.")
    response = api.post(f"/api/memory/facts/{fact.pk}/rectify/", {"content": "Lives in Porto."}, format="json")
    assert response.status_code == 201, response.content
    new = response.json()
    assert new["supersedes"] == fact.pk and new["status"] == "active" and new["version"] == 2
    assert new["sources"] == [lisbon.user_message.pk]
    fact.refresh_from_db()
    assert fact.status == "superseded" and not fact.retrievable and fact.content == "Lives in Lisbon."
    memory = api.get("/api/memory/").json()
    assert {(f["content"], f["status"]) for f in memory["facts"]} == {
        ("Lives in Lisbon.", "superseded"),
        ("Lives in Porto.", "active"),
    }
    # The superseded fact never enters a context again; the correction does.
    c2 = services.conversation_create(user=user)
    asked = say(user, c2, "Where do I live?")
    assert fact.pk not in asked.context and new["id"] in asked.context
    assert Message.objects.filter(pk=lisbon.user_message.pk).exists()
    again = api.post(f"/api/memory/facts/{fact.pk}/rectify/", {"content": "x"}, format="json")
    assert again.status_code == 409 and again.json()["code"] == "superseded"
    assert api.post("/api/memory/facts/999999/rectify/", {"content": "x"}, format="json").status_code == 404


def test_another_users_memory_is_invisible(api, other_api, user, other_user):
    c1 = services.conversation_create(user=user)
    say(user, c1, "I live in Lisbon.")
    fact = Fact.objects.get(owner=user)
    assert other_api.get("/api/memory/").json() == {"facts": [], "summaries": []}
    response = other_api.post(f"/api/memory/facts/{fact.pk}/rectify/", {"content": "hacked"}, format="json")
    assert response.status_code == 404
    fact.refresh_from_db()
    assert fact.status == "active"


def test_a_reply_never_uses_what_was_derived_from_its_own_question(user):
    c1 = services.conversation_create(user=user)
    said = say(user, c1, "I have a tortoise called Sheldon.")
    fact = Fact.objects.get(owner=user, content="Has a tortoise called Sheldon.")
    assert fact.pk not in said.context and said.context == [said.user_message.pk]


def test_rebuilt_facts_keep_counting_versions_and_corrections_are_not_re_derived(user):
    from memory.facts import fact_rectify
    from memory.rebuild import derived_rebuild

    c1 = services.conversation_create(user=user)
    said = say(user, c1, "I live in Lisbon. I have a tortoise called Sheldon.")
    lisbon = Fact.objects.get(owner=user, content="Lives in Lisbon.")
    old_id = lisbon.pk
    lisbon.delete()
    entry = derived_rebuild(kind="fact", old_id=old_id, sources=[said.user_message.pk], conversation_id=None, version=1)
    assert entry["status"] == "done" and entry["version"] == 2
    assert sorted(Fact.objects.filter(owner=user).values_list("content", flat=True)) == [
        "Has a tortoise called Sheldon.", "Lives in Lisbon."
    ]  # the surviving fact is not duplicated
    corrected = fact_rectify(
        user=user, fact_id=Fact.objects.get(owner=user, content="Lives in Lisbon.").pk, content="Lives in Porto."
    )
    preview = forget.forget_preview(user=user, mode="keyword", query="Porto")
    manifest = forget.forget_confirm(user=user, request_id=preview.pk)
    entry = next(r for r in manifest["rebuilt"] if r["id"] == corrected.pk)
    assert entry["status"] == "dropped" and "user" in entry["reason"]
    assert not Fact.objects.filter(owner=user, content__icontains="Porto").exists()
