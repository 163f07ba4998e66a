"""End-to-end browser test: Debian's Chromium, driven by Playwright, against the real ASGI app.

A new user signs up through the page, tells the assistant where they live in one conversation,
asks about it in another, and then follows the provenance back through the influence panel.
"""

from __future__ import annotations

import re

import pytest

from tests.browser import (
    FIRST_REPLY_TIMEOUT_MS,
    REPLY_TIMEOUT_MS,
    artifacts_on_failure,
    browser_page,
    finished_reply,
    frame_types,
    new_conversation,
    send,
    sign_up,
)

pytestmark = pytest.mark.browser


def test_remember_recall_and_trace_influence(live_app, chromium):
    from playwright.sync_api import expect

    base = live_app
    with browser_page(chromium) as (page, seen), artifacts_on_failure(page, seen, "test_browser"):
        # Sign up through the page; the new user lands on the (empty) chat home.
        sign_up(page, base, "lisbon_browser", password="a-Long-browser-passphrase-42")
        expect(page.get_by_role("button", name="+ New conversation")).to_be_visible()

        # Conversation 1: a statement, answered by a streamed reply.
        first_url = new_conversation(page, base)
        send(page, "I live in Lisbon.")
        user_bubble = page.locator("article.message.user").first
        expect(user_bubble.locator(".content")).to_have_text("I live in Lisbon.", timeout=FIRST_REPLY_TIMEOUT_MS)
        reply = finished_reply(page)
        expect(reply.locator(".content")).to_have_text("Noted, I will remember that.", timeout=FIRST_REPLY_TIMEOUT_MS)
        expect(reply.locator(".used")).to_have_text(re.compile(r"^used \d+ stored items?$"))
        expect(page.locator("#status")).not_to_have_class(re.compile(r"\berror\b"))
        types = frame_types(seen)
        # The "memory updated" notice for a statement follows its reply; it is not part of the turn.
        assert set(types[types.index("reply") + 1 :]) <= {"memory_updated"}, types
        types = [t for t in types if t != "memory_updated"]
        assert types[:1] == ["user_message"] and types[-1] == "reply", types
        assert "token" in types, f"the reply was not streamed token by token: {types}"
        assert "error" not in types, seen["frames"]
        lisbon_id = user_bubble.get_attribute("data-id")
        assert lisbon_id and lisbon_id.isdigit(), lisbon_id

        # Conversation 2: the question is answered from what was stored in conversation 1.
        new_conversation(page, base, previous_url=first_url)
        expect(page.locator("article.message")).to_have_count(0)
        seen["frames"].clear()
        send(page, "Where do I live?")
        expect(page.locator("article.message.user .content")).to_have_text("Where do I live?", timeout=REPLY_TIMEOUT_MS)
        answer = finished_reply(page)
        expect(answer.locator(".content")).to_contain_text("Lisbon", timeout=REPLY_TIMEOUT_MS)
        expect(answer.locator(".used")).to_have_text(re.compile(r"^used [1-9]\d* stored items?$"))
        types = frame_types(seen)
        types = [t for t in types if t != "memory_updated"]
        assert types[:1] == ["user_message"] and types[-1] == "reply" and "token" in types, types
        answer_id = answer.get_attribute("data-id")
        assert answer_id and answer_id.isdigit(), answer_id

        # Back in conversation 1: the Lisbon message lists the later answer as influenced.
        page.goto(first_url)
        statement = page.locator("article.message.user", has_text="I live in Lisbon.").first
        expect(statement).to_have_attribute("data-id", lisbon_id)
        statement.click()
        panel = page.locator("aside#influence")
        expect(panel).to_be_visible()
        expect(panel.locator("#influence-title")).to_have_text(f"#{lisbon_id}")
        expect(panel.locator(".context-list")).to_be_visible()
        influenced = panel.locator(f'.influenced-list li[data-id="{answer_id}"]')
        expect(influenced).to_have_count(1)
        expect(influenced.locator("a")).to_have_text("Reply")  # said in words; the id is in Details
        expect(influenced.locator(".excerpt")).to_contain_text("Lisbon")
        expect(statement).to_have_class(re.compile(r"\bselected\b"))

        assert not seen["errors"], f"uncaught errors in the page: {seen['errors']}"
