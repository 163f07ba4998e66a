"""User data rights (export, account deletion), API tokens, and health."""

import json

import pytest
from django.contrib.auth import get_user_model

from accounts.models import ApiToken
from chat import services
from chat.models import Conversation
from memory.models import Node
from provenance.forgetting.audit import pseudonym
from provenance.models import AuditRecord
from tests.conftest import rows_containing, say

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def two_histories(user, other_user, settings):
    settings.DELLM_SUMMARY_EVERY = 2
    mine = services.conversation_create(user=user, title="Mine")
    say(user, mine, "My cat is called Zanzibar.")
    say(user, mine, "I work at Quillfeather Labs.")
    c2 = services.conversation_create(user=user)
    say(user, c2, "What is my cat called?")
    theirs = services.conversation_create(user=other_user, title="Theirs")
    say(other_user, theirs, "My dog is called Biscuit.")
    return mine, theirs


def test_export_has_everything_of_the_user_and_nothing_else(api, user, other_user, two_histories):
    data = api.get("/api/account/export/").json()
    text = json.dumps(data)
    assert "Zanzibar" in text and "Quillfeather" in text and "Biscuit" not in text
    assert {c["title"] for c in data["conversations"]} == {"Mine", "What is my cat called?"}
    assert len(data["messages"]) == 6 and data["facts"] and data["summaries"]
    mine = set(Node.objects.filter(owner=user).values_list("pk", flat=True))
    exported = {m["id"] for m in data["messages"]} | {f["id"] for f in data["facts"]}
    assert exported | {s["id"] for s in data["summaries"]} == mine
    assert all(e["src"] in mine and e["dst"] in mine for e in data["edges"]) and data["edges"]
    reply = next(m for m in data["messages"] if m["role"] == "assistant" and "Zanzibar" in m["content"])
    assert reply["context"]


def test_export_page_download(client, user, two_histories):
    client.force_login(user)
    response = client.get("/account/export.json")
    assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    assert "Zanzibar" in response.content.decode()


def test_account_deletion_removes_every_trace_and_keeps_others(api, user, other_user, two_histories):
    username, requester = user.username, pseudonym("user", user.pk)
    assert api.post("/api/account/delete/", {"password": "wrong"}, format="json").status_code == 403
    assert Node.objects.filter(owner=user).exists()
    manifest = api.post("/api/account/delete/", {"password": user.raw_password}, format="json").json()
    assert manifest["deleted"]["messages"] == 6 and manifest["verification"]["residual_hits"] == 0
    assert not get_user_model().objects.filter(username=username).exists()
    for needle in ("Zanzibar", "Quillfeather", "What is my cat called"):
        assert rows_containing(needle) == {}, needle
    assert Node.objects.filter(owner=other_user, content="My dog is called Biscuit.").exists()
    assert Conversation.objects.filter(owner=other_user).count() == 1
    audit = AuditRecord.objects.get(mode="account")
    assert audit.status == "completed" and audit.deleted["messages"] == 6 and audit.requester_ref == requester
    assert rows_containing(username) == {}


def test_tokens_page_and_api(client, api, user):
    client.force_login(user)
    page = client.post("/account/", {"action": "create-token", "name": "my chat UI"})
    assert page.status_code == 200 and b"dllm-" in page.content
    created = api.post("/api/tokens/", {"name": "cli"}, format="json").json()
    assert created["key"].startswith("dllm-")
    listed = api.get("/api/tokens/").json()
    assert {t["name"] for t in listed} == {"login token", "my chat UI", "cli"} and all("key" not in t for t in listed)
    from rest_framework.test import APIClient

    with_new = APIClient()
    with_new.credentials(HTTP_AUTHORIZATION=f"Bearer {created['key']}")
    assert with_new.get("/api/conversations/").status_code == 200
    assert api.post(f"/api/tokens/{created['id']}/revoke/", {}, format="json").json()["revoked_at"]
    assert with_new.get("/api/conversations/").status_code == 401
    token = ApiToken.objects.get(name="my chat UI")
    client.post("/account/", {"action": "revoke-token", "token_id": token.pk})
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert created["key"] not in str(list(ApiToken.objects.values()))  # only a hash is stored


def test_healthz_reports_redis_and_workers(client, settings, redis_url):
    assert client.get("/healthz").json()["database"] == "ok"
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    report = client.get("/healthz")
    assert report.status_code == 503 and report.json()["redis"].startswith("error")


def test_healthz_with_a_live_worker(live_stack):
    import httpx

    report = httpx.get(f"{live_stack['base']}/healthz", timeout=30).json()
    assert report["database"] == "ok" and report["redis"] == "ok" and report["workers"].startswith("ok")
