"""In the browser: a new conversation's title appears as its first message is sent (no reload), a
conversation can be renamed in place and found by searching what was said in it, and an unknown
conversation's address shows the site's own page.

Screenshots are saved under test-artifacts/ (conversations-*.png)."""

from __future__ import annotations

import re

import pytest

from tests import browser as tb

pytestmark = pytest.mark.browser


def test_titles_rename_and_search(live_app, chromium):
    from playwright.sync_api import expect

    base = live_app
    with tb.browser_page(chromium) as (page, seen), tb.artifacts_on_failure(page, seen, "conversations"):
        tb.sign_up(page, base, "titled")
        first_url = tb.new_conversation(page, base)
        first_id = re.search(r"/c/(\d+)/$", first_url).group(1)
        first_item = page.locator(f'.conversations li[data-conversation="{first_id}"] a')
        expect(first_item).to_have_text("New conversation")
        tb.say(page, "I have a tortoise called Sheldon.", 1, timeout=tb.FIRST_REPLY_TIMEOUT_MS)
        expect(first_item).to_have_text("I have a tortoise called Sheldon.")  # without a reload
        expect(page.locator("#conversation-title")).to_have_text("I have a tortoise called Sheldon.")

        page.locator("#rename-conversation").click()
        expect(page.locator("#rename-input")).to_be_focused()
        page.locator("#rename-input").fill("My pets")
        page.locator("#rename-input").press("Enter")
        expect(page.locator("#conversation-title")).to_have_text("My pets")
        expect(first_item).to_have_text("My pets")
        assert page.title() == "My pets · DeLLM"

        second_url = tb.new_conversation(page, base, previous_url=first_url)
        second_id = re.search(r"/c/(\d+)/$", second_url).group(1)
        tb.say(page, "I am learning the cello.", 1)
        page.reload()
        expect(page.locator(f'.conversations li[data-conversation="{first_id}"] a')).to_have_text("My pets")

        # Search by what was said: only the conversation that holds it stays in the list.
        page.locator("#conversation-search").fill("sheldon")
        expect(page.locator("#conversation-search-status")).to_have_text("1 conversation matches.")
        expect(page.locator(f'.conversations li[data-conversation="{first_id}"]')).to_be_visible()
        expect(page.locator(f'.conversations li[data-conversation="{second_id}"]')).to_be_hidden()
        tb.screenshot(page, "conversations-search")
        page.locator("#conversation-search").fill("")
        expect(page.locator(f'.conversations li[data-conversation="{second_id}"]')).to_be_visible()
        assert tb.serious_a11y_violations(page) == []

        page.goto(f"{base}/c/987654/")
        expect(page.locator("h1")).to_have_text("Not found")
        expect(page.locator("main")).to_contain_text("That conversation does not exist any more")
        assert not seen["errors"], seen["errors"]
