"""The per-user memory switch: with memory off a turn is given no stored item and nothing is derived from it;
the messages are still kept, and turning memory back on lets later turns use what was stored."""

import pytest

from chat import services
from chat.models import Message
from dellm_site.ai.local import UNREMEMBERED_ACKNOWLEDGEMENT
from dellm_site.ai.prompts import SYSTEM_INSTRUCTION, UNREMEMBERED_INSTRUCTION, Prompt
from memory.models import Edge, Fact, Summary
from memory.preferences import memory_enabled, memory_preference_set
from tests.conftest import say

pytestmark = pytest.mark.django_db(transaction=True)


def test_memory_off_retrieves_nothing_and_derives_nothing(user, settings):
    settings.DELLM_SUMMARY_EVERY = 1
    first = services.conversation_create(user=user)
    say(user, first, "I live in Lisbon.")
    assert Fact.objects.filter(owner=user, content="Lives in Lisbon.").exists()
    facts_before = set(Fact.objects.filter(owner=user).values_list("pk", flat=True))
    summaries_before = Summary.objects.filter(owner=user).count()

    memory_preference_set(user=user, enabled=False)
    second = services.conversation_create(user=user)
    asked = say(user, second, "Where do I live? I have a dog called Rex.")
    assert asked.context == [asked.user_message.pk]
    assert list(Edge.objects.filter(dst=asked.reply).values_list("src_id", flat=True)) == [asked.user_message.pk]
    assert "Lisbon" not in asked.reply.content
    assert set(Fact.objects.filter(owner=user).values_list("pk", flat=True)) == facts_before
    assert Summary.objects.filter(owner=user).count() == summaries_before
    assert Message.objects.filter(conversation=second).count() == 2  # still stored
    told = say(user, second, "My sister is called Ana.")
    assert told.reply.content == UNREMEMBERED_ACKNOWLEDGEMENT  # no promise to remember
    assert not Fact.objects.filter(owner=user, content__icontains="Ana").exists()

    memory_preference_set(user=user, enabled=True)
    again = say(user, second, "Where do I live?")
    assert len(again.context) > 1 and "Lisbon" in again.reply.content


def test_a_model_is_told_when_nothing_is_remembered():
    assert Prompt(question="Hi").to_messages()[0]["content"] == SYSTEM_INSTRUCTION
    assert Prompt(question="Hi", remembered=False).to_messages()[0]["content"] == UNREMEMBERED_INSTRUCTION


def test_memory_settings_api(api, user, other_user):
    assert api.get("/api/memory/settings/").json() == {"enabled": True}
    assert api.put("/api/memory/settings/", {"enabled": False}, format="json").json() == {"enabled": False}
    assert memory_enabled(user=user) is False and memory_enabled(user=other_user) is True
    assert api.patch("/api/memory/settings/", {"enabled": True}, format="json").json() == {"enabled": True}
    assert api.put("/api/memory/settings/", {}, format="json").status_code == 400
    assert memory_enabled(user=user) is True


def test_account_page_switches_memory(client, user):
    client.force_login(user)
    page = client.get("/account/").content.decode()
    assert 'id="memory-enabled" checked' in page and "Memory is on" in page
    assert client.post("/account/", {"action": "memory"}).status_code == 302  # unchecked box: off
    assert memory_enabled(user=user) is False
    assert "Memory is off" in client.get("/account/").content.decode()
    client.post("/account/", {"action": "memory", "enabled": "on"})
    assert memory_enabled(user=user) is True
