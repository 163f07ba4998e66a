"""End-to-end browser test of the memory controls: the "Memory updated" note under a reply, a temporary chat
(nothing noted, discarded through the Forget panel), the memory switch on the account page, and "Clear all
memory" on the Memory page (preview, confirm, manifest; the account stays). Each screen is checked with axe at
both sizes; screenshots are saved under test-artifacts/ (memory-controls-*.png)."""

from __future__ import annotations

import re

import pytest

from tests import browser as tb

pytestmark = pytest.mark.browser


def check(page, name: str, problems: list[str]) -> None:
    for size_name, size in (("wide", tb.WIDE), ("phone", tb.PHONE)):
        page.set_viewport_size(size)
        problems.extend(f"{name} [{size_name}] {line}" for line in tb.serious_a11y_violations(page))
        tb.assert_no_horizontal_scroll(page)
        tb.screenshot(page, f"memory-controls-{name}-{size_name}")
    page.set_viewport_size(tb.WIDE)


def test_memory_note_temporary_chat_switch_and_clear_all(live_app, chromium):
    from django.contrib.auth import get_user_model
    from playwright.sync_api import expect

    from memory.models import Node

    base = live_app
    problems: list[str] = []
    with tb.browser_page(chromium) as (page, seen), tb.artifacts_on_failure(page, seen, "memory-controls"):
        tb.sign_up(page, base, "controller")
        tb.new_conversation(page, base)
        question = tb.say(page, "I live in Lisbon.", 1, timeout=tb.FIRST_REPLY_TIMEOUT_MS)
        note = page.locator(f'.memory-note[data-message="{question.get_attribute("data-id")}"]')
        expect(note).to_contain_text("Memory updated: “Lives in Lisbon.”")
        expect(note.locator("a")).to_have_attribute("href", "/memory/")
        check(page, "note", problems)

        # A temporary chat: marked as such, nothing noted, discarded through the Forget panel.
        page.locator("#new-temporary").click()
        expect(page.locator("#temporary-note")).to_be_visible()
        temporary_url = page.url
        temporary_id = re.search(r"/c/(\d+)/$", temporary_url).group(1)
        expect(page.locator(f'.conversations li[data-conversation="{temporary_id}"] .temporary-pill')).to_be_visible()
        tb.say(page, "I have a tortoise called Sheldon.", 1)
        expect(tb.finished_reply(page).locator(".content")).to_contain_text("I will not remember that")
        check(page, "temporary", problems)
        assert tb.frame_types(seen).count("memory_updated") == 1  # only the first chat's
        expect(page.locator(".memory-note")).to_have_count(0)
        page.locator("#delete-conversation").click()
        expect(page.locator("#forget-heading")).to_have_text("Discard temporary chat")
        expect(page.locator("#forget-confirm")).to_have_text("Forget 2 items")
        page.locator("#forget-confirm").click()
        expect(page.locator("#forget-result")).to_contain_text("1 conversation")
        expect(page.locator("#conversation-title")).to_have_text("Deleted conversation")

        # The memory switch.
        page.goto(base + "/account/")
        expect(page.locator("#memory-enabled")).to_be_checked()
        page.locator("#memory-enabled").uncheck()
        page.locator("#memory-save").click()
        expect(page.locator("#memory-state")).to_contain_text("Memory is off")
        expect(page.locator("#memory-enabled")).not_to_be_checked()
        check(page, "account", problems)

        # Clear all memory: everything listed first, then gone; the account stays.
        page.goto(base + "/memory/")
        page.locator("#clear-all-memory").click()
        expect(page.locator("#forget-heading")).to_have_text("Clear all memory")
        expect(page.locator("#forget-counts")).to_contain_text("3 items match your request")
        expect(page.locator("#forget-items .forget-item.matched")).to_have_count(3)  # question, reply, fact
        expect(page.locator("#forget-items")).to_contain_text("1 fact or summary will be erased with everything else")
        check(page, "clear-all-preview", problems)
        page.locator("#forget-confirm").click()
        expect(page.locator("#forget-result")).to_contain_text("Done. Deleted 2 messages, 1 fact, 1 conversation.")
        expect(page.locator("#facts-empty")).to_be_visible()
        assert not seen["errors"], seen["errors"]

    user = tb.in_thread(lambda: get_user_model().objects.get(username="controller"))
    assert tb.in_thread(lambda: Node.objects.filter(owner=user).count()) == 0
    assert not problems, "\n".join(problems)
