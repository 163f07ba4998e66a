"""The Memory page (facts with their history, summaries, links to their sources, rebuild status
after a deletion) and the read-only TaskRun admin."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from chat import services
from memory import facts
from memory.models import DerivedStatus, Fact, Summary, TaskRun
from provenance.forgetting import services as forget
from provenance.models import DeletionRequest
from tests.conftest import say

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def memory(user, settings):
    """Two facts and a summary from one conversation, and a fact from another."""
    settings.DELLM_SUMMARY_EVERY = 3
    first = services.conversation_create(user=user)
    lisbon = say(user, first, "I live in Lisbon.")
    sheldon = say(user, first, "I have a tortoise called Sheldon.")
    baker = say(user, first, "I work as a baker.")
    second = services.conversation_create(user=user)
    chess = say(user, second, "I play chess on Sundays.")
    facts = {f.content: f for f in Fact.objects.filter(owner=user)}
    assert set(facts) >= {"Lives in Lisbon.", "Has a tortoise called Sheldon.", "Plays chess on Sundays."}, set(facts)
    return {
        "first": first, "second": second, "facts": facts,
        "lisbon": lisbon.user_message.pk, "sheldon": sheldon.user_message.pk, "baker": baker.user_message.pk,
        "chess": chess.user_message.pk, "summary": Summary.objects.get(conversation=first, status=DerivedStatus.ACTIVE),
    }


def get(client, url="/memory/", status=200):
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code)
    return response.content.decode()


def record(html: str, node_id: int) -> str:
    """The markup of one record (from its opening tag to the end of its meta line)."""
    pattern = rf'<(li|div) class="memory-record[^"]*" data-id="{node_id}".*?</div>\s*<div class="record-meta">.*?</div>'
    found = re.search(pattern, html, re.S)
    assert found, f"record #{node_id} is not on the page"
    return found.group(0)


def rebuild_box(html: str) -> str:
    return re.search(r'<section id="rebuild-status".*?</section>', html, re.S).group(0)


def test_memory_page_needs_login(client):
    response = client.get("/memory/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_memory_page_lists_facts_and_summaries_with_their_sources(client, user, memory):
    client.force_login(user)
    html = get(client)
    assert 'id="nav-memory"' in html and 'href="/memory/"' in html
    lisbon = memory["facts"]["Lives in Lisbon."]
    row = record(html, lisbon.pk)
    assert "Lives in Lisbon." in row and "version 1" in row and "local:extractive" in row
    assert lisbon.derivation["prompt_hash"][:12] in row
    assert f'href="/c/{memory["first"].pk}/#m{memory["lisbon"]}"' in row
    assert 'class="link fact-correct"' in row and f'data-erase="{lisbon.pk}"' in row
    chess = record(html, memory["facts"]["Plays chess on Sundays."].pk)
    assert f'href="/c/{memory["second"].pk}/#m{memory["chess"]}"' in chess
    # The summary of the first conversation, with its three sources.
    summary = memory["summary"]
    row = record(html, summary.pk)
    assert "Lisbon" in row and "Sheldon" in row and "3 sources" in row and "version 1" in row
    for source in (memory["lisbon"], memory["sheldon"], memory["baker"]):
        assert f'href="/c/{memory["first"].pk}/#m{source}"' in row
    assert f'data-conversation="{memory["first"].pk}"' in html
    # The Forget panel is on the page (erasing goes through its preview), with its script.
    for marker in ('id="forget"', 'id="forget-confirm"', "js/forget.js", "js/memory.js"):
        assert marker in html, marker


def test_rectified_fact_is_current_and_the_old_one_is_history(client, user, memory):
    lisbon = memory["facts"]["Lives in Lisbon."]
    porto = facts.fact_rectify(user=user, fact_id=lisbon.pk, content="Lives in Porto.")
    client.force_login(user)
    html = get(client)
    new = record(html, porto.pk)
    assert 'data-status="active"' in new and "corrected by you" in new and "version 2" in new
    assert f'href="/c/{memory["first"].pk}/#m{memory["lisbon"]}"' in new  # same sources as the old one
    assert f'data-erase="{porto.pk},{lisbon.pk}"' in new  # erasing takes the earlier version too
    old = record(html, lisbon.pk)
    assert 'class="memory-record fact superseded' in old and "superseded" in old and "fact-correct" not in old
    # The old version is listed inside the new one's history, after it.
    history = re.search(r'<ul class="fact-history".*?</ul>', html[html.index(f'data-id="{porto.pk}"'):], re.S).group(0)
    assert f'data-id="{lisbon.pk}"' in history
    # Current facts come before ones without a current version.
    assert html.index(f'data-id="{porto.pk}"') < html.index(f'data-id="{lisbon.pk}"')


def test_rectify_through_the_api_with_the_session_and_csrf_token(user, memory):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    get(browser)
    token = browser.cookies["csrftoken"].value
    fact = memory["facts"]["Has a tortoise called Sheldon."]
    url = f"/api/memory/facts/{fact.pk}/rectify/"
    body = {"content": "Has a tortoise called Leonard."}
    assert browser.post(url, body, content_type="application/json").status_code == 403  # no token, no change
    response = browser.post(url, body, content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 201, response.content
    assert response.json()["version"] == 2 and response.json()["rectified"] is True
    again = browser.post(url, {"content": "Has two."}, content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert again.status_code == 409 and again.json()["code"] == "superseded"


def test_another_user_sees_none_of_it(client, other_user, memory):
    client.force_login(other_user)
    html = get(client)
    for text in ("Lisbon", "Sheldon", "chess", "baker"):
        assert text not in html
    assert 'id="facts-empty"' in html and 'id="summaries-empty"' in html
    assert 'class="memory-record' not in html


def test_rebuild_status_after_a_deletion(client, user, other_user, memory):
    """?after=<request_id>: each derived record the deletion dropped, and what became of it."""
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[memory["lisbon"]])
    manifest = forget.forget_confirm(user=user, request_id=preview.pk)
    statuses = {r["kind"]: r for r in manifest["rebuilt"]}
    assert statuses["summary"]["status"] == "done" and statuses["fact"]["status"] == "dropped"
    client.force_login(user)
    html = get(client, f"/memory/?after={preview.pk}")
    box = rebuild_box(html)
    assert 'data-pending="0"' in box
    assert f"rebuilt (version 2) as #{statuses['summary']['new_ids'][0]}" in box
    assert "dropped: no surviving sources" in box
    assert record(html, statuses["summary"]["new_ids"][0])  # the rebuilt summary is listed
    assert "Lisbon" not in html

    # While a rebuild job has not run yet (a worker is busy), the page says so and polls.
    request = DeletionRequest.objects.get(pk=preview.pk)
    request.manifest["rebuilt"] = [{**statuses["summary"], "status": "pending"}]
    request.save(update_fields=["manifest"])
    box = rebuild_box(get(client, f"/memory/?after={preview.pk}"))
    assert 'data-pending="1"' in box and "rebuilding…" in box

    # Someone else's request, or a malformed id, shows nothing.
    client.force_login(other_user)
    assert 'id="rebuild-status"' not in get(client, f"/memory/?after={preview.pk}")
    assert 'id="rebuild-status"' not in get(client, "/memory/?after=not-a-uuid")


def test_erasing_a_fact_removes_it_from_the_page(client, user, memory):
    fact = memory["facts"]["Has a tortoise called Sheldon."]
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[fact.pk])
    assert [e["id"] for e in preview.plan["matched"]] == [fact.pk]
    assert preview.plan["derived"] == [{"id": fact.pk, "kind": "fact", "action": "erase"}]
    manifest = forget.forget_confirm(user=user, request_id=preview.pk)
    assert manifest["rebuilt"] == [{"id": fact.pk, "kind": "fact", "status": "erased", "version": 1}]
    client.force_login(user)
    html = get(client)
    assert f'data-id="{fact.pk}"' not in html and "Has a tortoise called Sheldon." not in html
    assert "Lives in Lisbon." in html


@pytest.fixture
def admin_client(client, db):
    superuser = get_user_model().objects.create_superuser("root", "root@example.com", "a-root-passphrase-1")
    client.force_login(superuser)
    return client


def test_taskrun_admin_lists_and_filters_jobs_read_only(admin_client, memory):
    failed = TaskRun.objects.create(task_id="f" * 36, kind="derived_rebuild_task", status=TaskRun.Status.FAILED,
                                    attempt=5, error="OperationalError")
    succeeded = TaskRun.objects.filter(status=TaskRun.Status.SUCCEEDED).first()
    assert succeeded is not None  # the tasks that built the memory above were recorded
    base = "/admin/memory/taskrun/"
    listing = get(admin_client, base)
    assert failed.task_id in listing and succeeded.task_id in listing
    assert "facts_extract_task" in listing and "By kind" in listing and "By status" in listing
    only_failed = get(admin_client, base + "?status__exact=failed")
    assert failed.task_id in only_failed and "OperationalError" in only_failed
    assert succeeded.task_id not in only_failed
    by_kind = get(admin_client, base + "?kind=facts_extract_task")
    assert failed.task_id not in by_kind
    # Read-only: the detail opens, nothing can be added, changed or deleted.
    detail = get(admin_client, f"{base}{failed.pk}/change/")
    assert "OperationalError" in detail and 'name="_save"' not in detail
    assert admin_client.get(base + "add/").status_code == 403
    assert admin_client.post(f"{base}{failed.pk}/delete/").status_code == 403
    assert 'name="action"' not in listing
    # Nothing with user content is registered.
    for model in ("fact", "summary", "node", "embedding"):
        assert admin_client.get(f"/admin/memory/{model}/").status_code == 404
    for text in ("Lisbon", "Sheldon"):
        assert text not in listing
