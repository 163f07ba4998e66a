"""Temporary chats: never given to the LLM again, never embedded, never turned into facts or summaries, and
forgotten through the Forget flow (with its audit entry) when discarded or once idle."""

from datetime import timedelta

import pytest
from django.utils import timezone

from chat import services
from chat.models import Conversation, Message
from chat.temporary import temporary_conversations_expire
from memory.models import Embedding, Fact, Node, Summary
from provenance.models import AuditRecord, DeletionRequest, DeletionStatus
from tests.conftest import say

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_temporary_chat_is_neither_remembered_nor_retrieved(api, user, settings):
    settings.DELLM_SUMMARY_EVERY = 1
    normal = services.conversation_create(user=user)
    say(user, normal, "I live in Lisbon.")
    created = api.post("/api/conversations/", {"temporary": True}, format="json").json()
    assert created["temporary"] is True
    temporary = Conversation.objects.get(pk=created["id"])

    told = say(user, temporary, "I have a tortoise called Sheldon. Where do I live?")
    assert told.context == [told.user_message.pk]  # nothing remembered is read here either
    assert "Lisbon" not in told.reply.content
    stored = Message.objects.filter(conversation=temporary)
    assert stored.count() == 2 and not stored.filter(retrievable=True).exists()
    assert not Embedding.objects.filter(node__in=stored).exists()
    assert not Fact.objects.filter(owner=user, content__icontains="Sheldon").exists()
    assert not Summary.objects.filter(conversation=temporary).exists()
    assert "not remember" in say(user, temporary, "My sister is called Ana.").reply.content

    asked = say(user, normal, "What is my tortoise called? Sheldon?")
    assert not set(asked.context) & set(stored.values_list("pk", flat=True))
    assert api.get(f"/api/conversations/{normal.pk}/").json()["temporary"] is False


def test_discarding_goes_through_the_forget_flow(api, user):
    temporary = services.conversation_create(user=user, temporary=True)
    told = say(user, temporary, "My locker code is 4417.")
    manifest = api.post(f"/api/conversations/{temporary.pk}/discard/").json()
    assert manifest["status"] == "completed" and manifest["mode"] == "conversation"
    assert manifest["deleted"]["messages"] == 2 and manifest["deleted"]["conversations"] == 1
    assert not Conversation.objects.filter(pk=temporary.pk).exists()
    assert not Node.objects.filter(pk__in=[told.user_message.pk, told.reply.pk]).exists()
    assert AuditRecord.objects.filter(request_id=manifest["request_id"], status=DeletionStatus.COMPLETED).exists()

    normal = services.conversation_create(user=user)
    refused = api.post(f"/api/conversations/{normal.pk}/discard/")
    assert refused.status_code == 409 and refused.json()["code"] == "not_temporary"
    assert Conversation.objects.filter(pk=normal.pk).exists()


def test_idle_temporary_chats_are_forgotten(client, user, other_user, settings):
    settings.DELLM_TEMPORARY_CHAT_HOURS = 2
    idle = services.conversation_create(user=user, temporary=True)
    say(user, idle, "My locker code is 4417.")
    fresh = services.conversation_create(user=user, temporary=True)
    old_normal = services.conversation_create(user=user)
    say(user, old_normal, "Hello there.")
    theirs = services.conversation_create(user=other_user, temporary=True)
    long_ago = timezone.now() - timedelta(hours=3)
    Conversation.objects.filter(pk__in=[idle.pk, old_normal.pk, theirs.pk]).update(updated_at=long_ago)

    client.force_login(user)
    assert client.get("/").status_code == 302  # opening the chat sweeps the user's own idle temporary chats
    assert not Conversation.objects.filter(pk=idle.pk).exists()
    assert Conversation.objects.filter(pk__in=[fresh.pk, old_normal.pk, theirs.pk]).count() == 3
    assert DeletionRequest.objects.filter(owner=user, mode="conversation", status=DeletionStatus.COMPLETED).count() == 1
    assert temporary_conversations_expire() == 1  # the beat's sweep: everyone's
    assert not Conversation.objects.filter(pk=theirs.pk).exists()


def test_the_sidebar_starts_a_temporary_chat(client, user):
    client.force_login(user)
    page = client.get("/").content.decode()
    assert 'id="new-temporary"' in page
    response = client.post("/c/new/", {"temporary": "1"})
    conversation = Conversation.objects.get(owner=user)
    assert conversation.temporary and response.url == f"/c/{conversation.pk}/"
    page = client.get(response.url).content.decode()
    assert 'id="temporary-note"' in page and 'data-temporary="1"' in page and ">Discard<" in page
