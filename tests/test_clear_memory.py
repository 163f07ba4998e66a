"""Clear all memory: a preview naming everything the user stored (with counts), then the usual confirm and
manifest; the account, its tokens and other users' data stay."""

import pytest

from chat import services
from chat.models import Conversation, Message
from memory.models import Fact, Node, Summary
from provenance.models import AuditRecord
from tests.conftest import say

pytestmark = pytest.mark.django_db(transaction=True)


def test_clear_all_memory_previews_everything_then_forgets_it(api, user, other_user, settings):
    settings.DELLM_SUMMARY_EVERY = 2
    first = services.conversation_create(user=user)
    say(user, first, "I live in Lisbon.")
    say(user, first, "I have a tortoise called Sheldon.")
    second = services.conversation_create(user=user)
    say(user, second, "Where do I live?")
    theirs = services.conversation_create(user=other_user)
    say(other_user, theirs, "My dog is called Biscuit.")
    mine = set(Node.objects.filter(owner=user).values_list("pk", flat=True))
    facts, summaries = Fact.objects.filter(owner=user).count(), Summary.objects.filter(owner=user).count()
    assert facts and summaries

    preview = api.post("/api/forget/preview/", {"mode": "all"}, format="json")
    assert preview.status_code == 201, preview.content
    body = preview.json()
    assert {e["id"] for e in body["matched"]} == mine and {e["reason"] for e in body["matched"]} == {"all"}
    assert body["tainted"] == []
    assert len(body["derived"]) == facts + summaries and {d["action"] for d in body["derived"]} == {"erase"}
    assert Node.objects.filter(owner=user).count() == len(mine)  # a preview deletes nothing

    manifest = api.post(f"/api/forget/{body['request_id']}/confirm/", {}, format="json").json()
    assert manifest["status"] == "completed" and manifest["mode"] == "all"
    assert manifest["deleted"]["messages"] == 6 and manifest["deleted"]["facts"] == facts
    assert manifest["deleted"]["summaries"] == summaries and manifest["deleted"]["conversations"] == 2
    assert manifest["verification"]["residual_hits"] == 0
    assert not Node.objects.filter(owner=user).exists() and not Conversation.objects.filter(owner=user).exists()
    assert AuditRecord.objects.filter(request_id=manifest["request_id"], mode="all").exists()
    assert api.get("/api/conversations/").json() == []  # the account and its token still work
    assert Message.objects.filter(conversation=theirs).count() == 2


def test_account_mode_stays_private_and_the_memory_page_offers_clearing(api, client, user):
    assert api.post("/api/forget/preview/", {"mode": "account"}, format="json").status_code == 400
    client.force_login(user)
    assert 'id="clear-all-memory"' in client.get("/memory/").content.decode()
