"""Accessibility of every page at a laptop's and a phone's size, checked by axe-core (vendored under
static/vendor/) for WCAG 2.1 A and AA: no serious or critical violation, no sideways scroll. Keyboard:
every panel closes with Escape, and the message box has a label.

Screenshots are saved under test-artifacts/ (a11y-*.png)."""

from __future__ import annotations

import pytest

from tests.browser import (
    FIRST_REPLY_TIMEOUT_MS,
    PHONE,
    WIDE,
    artifacts_on_failure,
    assert_no_horizontal_scroll,
    browser_page,
    new_conversation,
    say,
    screenshot,
    serious_a11y_violations,
    sign_up,
)

pytestmark = pytest.mark.browser


def audit(page, name: str, problems: list[str]) -> None:
    """Check the page as it stands at both sizes; collect what is wrong rather than stop at the first page."""
    for size_name, size in (("wide", WIDE), ("phone", PHONE)):
        page.set_viewport_size(size)
        for line in serious_a11y_violations(page):
            problems.append(f"{name} [{size_name}] {line}")
        assert_no_horizontal_scroll(page)
        screenshot(page, f"a11y-{name}-{size_name}")
    page.set_viewport_size(WIDE)


def test_every_page_passes_axe_at_both_sizes(live_app, chromium):
    from playwright.sync_api import expect

    base = live_app
    problems: list[str] = []
    with browser_page(chromium) as (page, seen), artifacts_on_failure(page, seen, "a11y"):
        page.set_viewport_size(WIDE)
        page.goto(base + "/")
        audit(page, "landing", problems)
        page.goto(base + "/accounts/login/")
        audit(page, "login", problems)
        page.goto(base + "/accounts/signup/")
        audit(page, "signup", problems)

        sign_up(page, base, "a11y_user")
        audit(page, "home", problems)
        url = new_conversation(page, base)
        audit(page, "empty-conversation", problems)
        say(page, "I live in Lisbon and I like **green tea**.", 1, timeout=FIRST_REPLY_TIMEOUT_MS)
        say(page, "Where do I live?", 2)
        audit(page, "conversation", problems)

        page.locator("article.message.user .content").first.click()
        expect(page.locator("#influence")).to_be_visible()
        expect(page.locator("#influence-body h3").first).to_be_visible()
        audit(page, "influence", problems)
        page.keyboard.press("Escape")
        expect(page.locator("#influence")).to_be_hidden()

        page.locator("article.message.user .msg-forget").first.click()
        expect(page.locator("#forget-confirm")).to_be_visible()
        audit(page, "forget-preview", problems)
        page.locator("#forget-confirm").click()
        expect(page.locator("#forget-result")).to_be_visible()
        audit(page, "forget-result", problems)
        page.keyboard.press("Escape")
        expect(page.locator("#forget")).to_be_hidden()

        for path in ("/memory/", "/forget/history/", "/account/", "/accounts/password_change/", "/c/999999/"):
            page.goto(base + path)
            audit(page, path.strip("/").replace("/", "-"), problems)
        page.goto(base + "/forget/history/")
        page.locator("#history a", has_text="Details").first.click()
        audit(page, "history-detail", problems)
        page.goto(url)
        expect(page.get_by_label("Message", exact=True)).to_be_visible()
        assert not seen["errors"], seen["errors"]
    assert not problems, "\n".join(problems)
