"""Conversations: search by title or by what was said, rename, and a friendly page for one that is gone
(also with debug on)."""

import pytest

from chat import services
from tests.conftest import say

pytestmark = pytest.mark.django_db


def test_search_finds_titles_and_messages_of_the_user_only(api, user, other_user):
    trip = services.conversation_create(user=user, title="Trip to Porto")
    pets = services.conversation_create(user=user)
    say(user, pets, "I have a tortoise called Sheldon.")
    services.conversation_create(user=other_user, title="Porto and tortoises")

    def found(q):
        return {c["id"] for c in api.get("/api/conversations/", {"q": q}).json()}

    assert found("porto") == {trip.pk}
    assert found("SHELDON") == {pets.pk}  # what was said in it, whatever the case
    assert found("nothing like this") == set()
    assert found("") == {trip.pk, pets.pk}


def test_rename(api, other_api, user):
    conversation = services.conversation_create(user=user)
    say(user, conversation, "I live in Lisbon.")
    response = api.patch(f"/api/conversations/{conversation.pk}/", {"title": "  Where I live  "}, format="json")
    assert response.status_code == 200 and response.json()["title"] == "Where I live"
    assert api.get(f"/api/conversations/{conversation.pk}/").json()["title"] == "Where I live"
    url = f"/api/conversations/{conversation.pk}/"
    assert other_api.patch(url, {"title": "mine"}, format="json").status_code == 404
    too_long = api.patch(f"/api/conversations/{conversation.pk}/", {"title": "x" * 201}, format="json")
    assert too_long.status_code == 400
    assert api.get(f"/api/conversations/{conversation.pk}/").json()["title"] == "Where I live"


def test_unknown_conversation_page_is_friendly_with_debug_on(client, user, settings):
    settings.DEBUG = True
    client.force_login(user)
    page = client.get("/c/987654/")
    assert page.status_code == 404
    text = page.content.decode()
    assert "That conversation does not exist any more" in text and "Back to your chats" in text
    assert "URLconf" not in text and "DEBUG = True" not in text
