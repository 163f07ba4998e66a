"""The Deletion history pages and the Forget panel's markup on the chat page."""

import pytest

from chat import services
from provenance.forgetting import services as forget
from tests.conftest import say

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def history(user, other_user):
    """A completed deletion, a relaxed one, a preview never confirmed, and someone else's deletion."""
    conversation = services.conversation_create(user=user)
    pin = say(user, conversation, "My PIN is 4321.")
    say(user, conversation, "My locker code is 9876.")
    done = forget.forget_preview(user=user, mode="ids", message_ids=[pin.user_message.pk])
    manifest = forget.forget_confirm(user=user, request_id=done.pk)
    locker = forget.forget_preview(user=user, mode="exact", query="locker code", depth=0)
    relaxed = forget.forget_confirm(user=user, request_id=locker.pk)
    # Both deletions may have emptied (and so removed) the first conversation.
    say(user, services.conversation_create(user=user), "My bank is Moneybags.")
    pending = forget.forget_preview(user=user, mode="keyword", query="Moneybags")
    theirs_conversation = services.conversation_create(user=other_user)
    theirs = say(other_user, theirs_conversation, "Their secret is 1111.")
    their_request = forget.forget_preview(user=other_user, mode="ids", message_ids=[theirs.user_message.pk])
    forget.forget_confirm(user=other_user, request_id=their_request.pk)
    return {
        "done": done, "manifest": manifest, "relaxed": relaxed, "locker": locker, "pending": pending,
        "theirs": their_request,
    }


def test_history_needs_login(client, history):
    assert client.get("/forget/history/").status_code == 302
    assert client.get(f"/forget/history/{history['done'].pk}/").status_code == 302


def test_history_lists_own_confirmed_deletions_newest_first_without_content(client, user, history):
    client.force_login(user)
    page = client.get("/forget/history/").content.decode()
    done, locker = str(history["done"].pk), str(history["locker"].pk)
    assert done in page and locker in page and page.index(locker) < page.index(done)  # newest first
    assert str(history["theirs"].pk) not in page
    assert str(history["pending"].pk) not in page and "1 preview never confirmed" in page
    assert "no trace found" in page and "depth 0" in page and "strict" in page
    for secret in ("4321", "9876", "locker", "Moneybags", "PIN"):
        assert secret not in page
    everything = client.get("/forget/history/?all=1").content.decode()
    assert str(history["pending"].pk) in everything and "Moneybags" not in everything


def test_history_detail_shows_the_manifest_by_id_only(client, user, history):
    client.force_login(user)
    page = client.get(f"/forget/history/{history['done'].pk}/").content.decode()
    assert "Completed" in page
    for node_id in history["manifest"]["deleted_ids"]:
        assert f"#{node_id}" in page
    assert "4321" not in page and "PIN" not in page
    relaxed = client.get(f"/forget/history/{history['locker'].pk}/").content.decode()
    assert "depth 0" in relaxed and "may still reveal" in relaxed and "locker" not in relaxed
    pending = client.get(f"/forget/history/{history['pending'].pk}/").content.decode()
    assert "Never confirmed" in pending and "Moneybags" not in pending
    assert client.get(f"/forget/history/{history['theirs'].pk}/").status_code == 404
    assert client.get("/forget/history/not-a-uuid/").status_code == 404


def test_chat_page_has_the_forget_panel_and_actions(client, user):
    conversation = services.conversation_create(user=user)
    said = say(user, conversation, "I live in Lisbon.")
    client.force_login(user)
    page = client.get(f"/c/{conversation.pk}/").content.decode()
    for marker in ('id="forget"', 'id="forget-open"', 'id="delete-conversation"', 'id="forget-depth"',
                   f'data-forget="{said.user_message.pk}"', "js/forget.js", 'href="/forget/history/"'):
        assert marker in page, marker
