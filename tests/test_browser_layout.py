"""The layout at a laptop's and a phone's size: the page never scrolls sideways, a long conversation scrolls
inside its list while the composer stays in view, the side panels fit the window (their buttons in view),
Escape closes any panel, and the menu and the conversation list fold away on a phone.

Screenshots of every state are saved under test-artifacts/ (layout-*.png)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from chat.models import Conversation
from tests.browser import (
    PHONE,
    WIDE,
    artifacts_on_failure,
    assert_in_view,
    assert_no_horizontal_scroll,
    browser_page,
    new_conversation,
    screenshot,
    sign_up,
)
from tests.conftest import say

pytestmark = pytest.mark.browser

LONG = "I keep a small garden on my balcony with basil, thyme, rosemary and three tomato plants in large pots. " * 3


def test_chat_fits_a_laptop_and_a_phone(live_app, chromium):
    from playwright.sync_api import expect

    base = live_app
    with browser_page(chromium) as (page, seen), artifacts_on_failure(page, seen, "layout"):
        page.set_viewport_size(WIDE)
        sign_up(page, base, "layout_user")
        url = new_conversation(page, base)
        expect(page.locator("#composer-input")).to_be_focused()  # a new conversation is ready to type in
        user = get_user_model().objects.get(username="layout_user")
        conversation = Conversation.objects.get(owner=user)
        for n in range(8):  # more than a window's height of messages
            say(user, conversation, f"Note {n}: {LONG}")

        for name, size in (("wide", WIDE), ("phone", PHONE)):
            page.set_viewport_size(size)
            page.goto(url)
            expect(page.locator("#send")).to_be_enabled()
            assert_no_horizontal_scroll(page)
            messages = page.locator("#messages")
            assert messages.evaluate("el => el.scrollHeight > el.clientHeight"), "the list itself should scroll"
            assert_in_view(page, page.locator("#composer-input"))
            assert_in_view(page, page.locator("#send"))
            box = page.locator("#composer-input").bounding_box()
            assert box["width"] >= size["width"] * 0.5, f"the message box is too narrow: {box}"
            screenshot(page, f"layout-chat-{name}")

            # The Forget panel for one message: its confirm and cancel buttons are in view without scrolling.
            page.locator("article.message.user .msg-forget").first.click()
            expect(page.locator("#forget-preview")).to_be_visible()
            assert_in_view(page, page.locator("#forget-confirm"))
            assert_in_view(page, page.locator("#forget-cancel"))
            assert_no_horizontal_scroll(page)
            screenshot(page, f"layout-forget-{name}")
            page.keyboard.press("Escape")
            expect(page.locator("#forget")).to_be_hidden()

            # The influence panel fits the window too, and Escape closes it.
            page.locator("article.message.assistant .content").first.click()
            expect(page.locator("#influence")).to_be_visible()
            assert_in_view(page, page.locator("#influence-close"))
            assert_no_horizontal_scroll(page)
            screenshot(page, f"layout-influence-{name}")
            page.keyboard.press("Escape")
            expect(page.locator("#influence")).to_be_hidden()

        # On a phone the conversation list is an overlay behind a button, and the menu folds.
        new = page.get_by_role("button", name="+ New conversation")
        expect(new).to_be_hidden()
        page.locator("#sidebar-toggle").click()
        assert_in_view(page, new)
        expect(page.locator("#sidebar-toggle")).to_have_attribute("aria-expanded", "true")
        screenshot(page, "layout-sidebar-phone")
        page.keyboard.press("Escape")
        expect(new).to_be_hidden()
        logout = page.get_by_role("button", name="Log out")
        expect(logout).to_be_hidden()
        page.locator("#nav-toggle").click()
        assert_in_view(page, logout)
        screenshot(page, "layout-menu-phone")
        page.keyboard.press("Escape")
        expect(logout).to_be_hidden()

        # On a laptop the sidebar collapses, and stays collapsed on the next page.
        page.set_viewport_size(WIDE)
        expect(new).to_be_visible()
        page.locator("#sidebar-toggle").click()
        expect(new).to_be_hidden()
        page.reload()
        expect(new).to_be_hidden()
        page.locator("#sidebar-toggle").click()
        expect(new).to_be_visible()

        # Revoking a token asks first; saying no keeps it.
        page.goto(base + "/account/")
        page.locator("#token-name").fill("my phone")
        page.locator("#create-token").click()
        revoke = page.locator("tr", has_text="my phone").get_by_role("button", name="Revoke")
        asked = []
        page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
        revoke.click()
        expect(revoke).to_be_visible()
        assert asked and "my phone" in asked[0], asked
        page.once("dialog", lambda dialog: dialog.accept())
        revoke.click()
        expect(page.locator("tr", has_text="my phone")).to_contain_text("revoked")

        # Every other page fits both sizes.
        for path in ("/memory/", "/forget/history/", "/account/"):
            for name, size in (("wide", WIDE), ("phone", PHONE)):
                page.set_viewport_size(size)
                page.goto(base + path)
                assert_no_horizontal_scroll(page)
                screenshot(page, f"layout-{path.strip('/').replace('/', '-')}-{name}")
        assert not seen["errors"], seen["errors"]
