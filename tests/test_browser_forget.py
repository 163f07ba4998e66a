"""End-to-end browser tests of forgetting: Debian's Chromium, driven by Playwright, against the real
ASGI app (uvicorn in its own process on the test database).

A user tells the assistant where they live, asks about it in another conversation, then types
"Forget that I live in Lisbon": the Forget panel shows what matched and what used it, the user
confirms, the messages disappear everywhere, and the deletion is in their history. A second test
drives the other ways in: the Forget… search (including an empty result), the per-message Forget
action, and Delete conversation.
"""

from __future__ import annotations

import re

import pytest

from tests import browser as tb

pytestmark = pytest.mark.browser

MATCHED_OR_TAINTED = re.compile(r"\b(matched|tainted)\b")


def test_forget_from_the_chat_composer(live_app, chromium):
    from playwright.sync_api import expect

    base = live_app
    with tb.browser_page(chromium) as (page, seen), tb.artifacts_on_failure(page, seen, "test_browser_forget"):
        tb.sign_up(page, base, "forgetful")

        # Conversation A: two facts about me.
        first_url = tb.new_conversation(page, base)
        lisbon = tb.say(page, "I live in Lisbon.", 1, timeout=tb.FIRST_REPLY_TIMEOUT_MS)
        sheldon = tb.say(page, "I have a tortoise called Sheldon.", 2)
        lisbon_id, sheldon_id = lisbon.get_attribute("data-id"), sheldon.get_attribute("data-id")
        assert lisbon_id.isdigit() and sheldon_id.isdigit()
        first_id = re.search(r"/c/(\d+)/$", first_url).group(1)

        # Conversation B: the answer is built from conversation A.
        second_url = tb.new_conversation(page, base, previous_url=first_url)
        question = tb.say(page, "Where do I live?", 1)
        answer = tb.finished_reply(page)
        expect(answer.locator(".content")).to_contain_text("Lisbon")
        answer_id = answer.get_attribute("data-id")

        # The deletion request typed into the composer: not answered, not stored; the panel opens.
        seen["frames"].clear()
        tb.send(page, "Forget that I live in Lisbon")
        panel = page.locator("aside#forget")
        expect(panel).to_be_visible()
        expect(panel.locator("#forget-counts")).to_contain_text("will be deleted")
        assert tb.frame_types(seen) == ["forget_preview"], seen["frames"]
        expect(page.locator("article.message")).to_have_count(2)  # the request itself is not in the chat
        expect(panel.locator("#forget-origin")).to_contain_text("I live in Lisbon")

        # Matched: the Lisbon statement (in conversation A, grouped under a link to it).
        expect(panel.locator(f'.forget-item.matched[data-id="{lisbon_id}"]')).to_have_count(1)
        expect(panel.locator(f'.forget-item.matched[data-id="{lisbon_id}"] .reason')).not_to_be_empty()
        expect(panel.locator(f'.forget-group h3 a[href="/c/{first_id}/"]')).to_have_count(1)
        # Tainted: replies that used it, each with its explanation and path, kept unchecked (strict).
        tainted = panel.locator(".forget-item.tainted")
        expect(tainted.first).to_be_visible()
        expect(tainted.locator(".explanation").filter(has_text="in view").first).to_be_visible()
        expect(tainted.first.locator(".explanation")).to_contain_text("“I live in Lisbon.”")
        expect(tainted.first.locator(".tech-explanation")).to_contain_text(" used ")  # behind "Details"
        expect(tainted.first.locator(".tech-explanation")).to_be_hidden()
        expect(tainted.first.locator(".path")).to_contain_text("→")
        expect(tainted.locator("input.keep-box:checked")).to_have_count(0)
        # The answer on this page is highlighted in place; the question is not.
        expect(answer).to_have_class(MATCHED_OR_TAINTED)
        expect(question).not_to_have_class(MATCHED_OR_TAINTED)
        expect(panel.locator("#forget-warning")).to_be_hidden()

        # Relaxing the deletion warns; going back to strict removes the warning.
        tainted.first.locator("input.keep-box").check()
        expect(panel.locator("#forget-warning")).to_be_visible()
        expect(panel.locator("#forget-warning")).to_contain_text("may still reveal")
        expect(panel.locator("#forget-counts")).to_contain_text("1 kept")
        tainted.first.locator("input.keep-box").uncheck()
        expect(panel.locator("#forget-warning")).to_be_hidden()
        # Here every item that used it did so directly: limiting the depth to 1 changes nothing, so no warning.
        counts = panel.locator("#forget-counts").text_content()
        with page.expect_response(lambda r: r.url.endswith("/api/forget/preview/")):
            panel.locator("#forget-depth").select_option("1")
        expect(panel.locator("#forget-status")).to_be_empty()
        expect(panel.locator("#forget-counts")).to_have_text(counts)
        expect(panel.locator("#forget-warning")).to_be_hidden()
        panel.locator("#forget-depth").select_option("")
        expect(panel.locator("#forget-warning")).to_be_hidden()
        expect(panel.locator(f'.forget-item.matched[data-id="{lisbon_id}"]')).to_have_count(1)

        # Confirm: what was deleted disappears from the page, and the manifest summary says so.
        panel.locator("#forget-confirm").click()
        result = panel.locator("#forget-result")
        expect(result).to_be_visible(timeout=tb.REPLY_TIMEOUT_MS)
        expect(result).to_contain_text("Deleted")
        expect(result.locator(".verification")).to_have_text(re.compile(r"no trace found"))
        expect(page.locator(f'article.message[data-id="{answer_id}"]')).to_have_count(0)
        expect(question).to_be_visible()
        expect(page.locator(".sidebar")).not_to_contain_text("Lisbon")  # A's title quoted the deleted message
        expect(page.locator("article.message.matched, article.message.tainted")).to_have_count(0)
        history_link = result.locator("a.history-link")
        expect(history_link).to_have_attribute("href", re.compile(r"^/forget/history/[0-9a-f-]{36}/$"))
        request_id = history_link.get_attribute("href").split("/")[-2]

        # After a reload, in both conversations: the Lisbon messages are gone, Sheldon stays.
        page.reload()
        expect(page.locator("article.message.user", has_text="Where do I live?")).to_have_count(1)
        expect(page.locator("#messages")).not_to_contain_text("Lisbon")
        page.goto(first_url)
        expect(page.locator(f'article.message[data-id="{sheldon_id}"]')).to_have_text(
            re.compile("I have a tortoise called Sheldon.")
        )
        expect(page.locator(f'article.message[data-id="{lisbon_id}"]')).to_have_count(0)
        expect(page.locator("body")).not_to_contain_text("Lisbon")

        # The Deletion history lists it, completed, with counts and the verification result.
        page.locator("#nav-history").click()
        expect(page).to_have_url(f"{base}/forget/history/")
        row = page.locator(f'tr.history-row[data-request="{request_id}"]')
        expect(row).to_have_count(1)
        expect(row.locator(".pill.completed")).to_have_text("Completed")
        expect(row).to_contain_text("no trace found")
        expect(row.locator(".count-messages")).to_have_text(re.compile(r"^[1-9]\d* messages$"))
        row.get_by_role("link", name="Details").click()
        expect(page.locator("#manifest-status")).to_have_text("Completed")
        expect(page.locator("#deleted-ids")).to_contain_text(f"#{lisbon_id}")
        expect(page.locator("#deleted-ids")).to_contain_text(f"#{answer_id}")
        expect(page.locator("body")).not_to_contain_text("Lisbon")
        assert second_url != first_url
        assert not seen["errors"], f"uncaught errors in the page: {seen['errors']}"


def test_forget_search_message_action_and_delete_conversation(live_app, chromium):
    from playwright.sync_api import expect

    base = live_app
    with tb.browser_page(chromium) as (page, seen), tb.artifacts_on_failure(page, seen, "test_browser_forget_actions"):
        tb.sign_up(page, base, "tidy_user")
        tb.new_conversation(page, base)
        cat = tb.say(page, "My cat is called Tom.", 1, timeout=tb.FIRST_REPLY_TIMEOUT_MS)
        green = tb.say(page, "My favourite colour is green.", 2)
        cat_id, green_id = cat.get_attribute("data-id"), green.get_attribute("data-id")
        panel = page.locator("aside#forget")

        # The influence panel still works, and the Forget panel replaces it.
        green.locator(".content").click()
        expect(page.locator("aside#influence")).to_be_visible()
        expect(page.locator("#influence-title")).to_have_text(f"#{green_id}")

        # Forget…: a search that matches nothing says so and offers nothing to confirm.
        page.get_by_role("button", name="Forget…").click()
        expect(panel).to_be_visible()
        expect(page.locator("aside#influence")).to_be_hidden()
        panel.locator("#forget-query").fill("zebra crossing")
        panel.locator("#forget-mode").select_option("keyword")
        panel.locator("#forget-search-go").click()
        expect(panel.locator(".forget-empty")).to_contain_text("Nothing matches")
        expect(panel.locator("#forget-confirm")).to_be_hidden()
        panel.locator("#forget-cancel").click()
        expect(panel).to_be_hidden()

        # The Forget action on one message: it and its reply go, the rest stays.
        cat.locator(".msg-forget").click()
        expect(panel).to_be_visible()
        expect(panel.locator("#forget-heading")).to_have_text(f"Forget message #{cat_id}")
        expect(panel.locator(f'.forget-item.matched[data-id="{cat_id}"] .reason')).to_contain_text("chosen by you")
        expect(cat).to_have_class(re.compile(r"\bmatched\b"))
        cat_reply_id = panel.locator(".forget-item.tainted").first.get_attribute("data-id")
        expect(page.locator(f'article.message[data-id="{cat_reply_id}"]')).to_have_class(re.compile(r"\btainted\b"))
        panel.locator("#forget-confirm").click()
        expect(panel.locator("#forget-result .verification")).to_be_visible(timeout=tb.REPLY_TIMEOUT_MS)
        expect(page.locator(f'article.message[data-id="{cat_id}"]')).to_have_count(0)
        expect(page.locator(f'article.message[data-id="{cat_reply_id}"]')).to_have_count(0)
        expect(green).to_be_visible()
        panel.locator("#forget-done").click()
        expect(panel).to_be_hidden()

        # Delete conversation: everything in it goes, and the page says so.
        page.get_by_role("button", name="Delete conversation").click()
        expect(panel.locator("#forget-heading")).to_have_text("Delete conversation")
        expect(panel.locator(f'.forget-item.matched[data-id="{green_id}"] .reason')).to_contain_text(
            "in the conversation"
        )
        panel.locator("#forget-confirm").click()
        expect(panel.locator("#forget-result")).to_contain_text("1 conversation", timeout=tb.REPLY_TIMEOUT_MS)
        expect(page.locator("article.message")).to_have_count(0)
        expect(page.locator("#conversation-title")).to_have_text("Deleted conversation")
        expect(page.locator("#composer-input")).to_be_disabled()
        expect(page.locator(".conversations li[data-conversation]")).to_have_count(0)

        page.locator("#nav-history").click()
        expect(page.locator("tr.history-row.completed")).to_have_count(2)
        expect(page.locator("body")).not_to_contain_text("cat is called")
        assert not seen["errors"], f"uncaught errors in the page: {seen['errors']}"


def test_possible_residue_is_offered_as_a_follow_up(live_app, chromium):
    from playwright.sync_api import expect

    base = live_app
    with tb.browser_page(chromium) as (page, seen), tb.artifacts_on_failure(page, seen, "test_browser_residue"):
        tb.sign_up(page, base, "residual")
        first_url = tb.new_conversation(page, base)
        tb.say(page, "My locker code is 4826 at Brindlemoor gym.", 1, timeout=tb.FIRST_REPLY_TIMEOUT_MS)
        tb.new_conversation(page, base, previous_url=first_url)
        note = tb.say(page, "Note to self: 4826 is the number.", 1)
        note_id = note.get_attribute("data-id")

        tb.send(page, "Forget that my locker code is 4826 at Brindlemoor gym")
        panel = page.locator("aside#forget")
        expect(panel.locator("#forget-counts")).to_contain_text("will be deleted")
        panel.locator("#forget-confirm").click()
        result = panel.locator("#forget-result")
        expect(result).to_be_visible(timeout=tb.REPLY_TIMEOUT_MS)
        # The whole phrase is gone, but a surviving note shares its number: shown, with the token marked.
        residue = result.locator("#forget-residue")
        expect(residue).to_contain_text("Possible residue")
        item = residue.locator(f'.forget-item[data-id="{note_id}"]')
        expect(item.locator(".reason")).to_contain_text("a number of the deleted text")
        expect(item.locator("mark")).to_have_text("4826")
        request_id = result.locator("a.history-link").get_attribute("href").split("/")[-2]

        # One click: a new preview of exactly those items, confirmed like any other.
        residue.locator("#forget-residue-open").click()
        expect(panel.locator(f'.forget-item.matched[data-id="{note_id}"]')).to_have_count(1)
        panel.locator("#forget-confirm").click()
        expect(panel.locator("#forget-result")).to_contain_text("Deleted", timeout=tb.REPLY_TIMEOUT_MS)
        expect(page.locator(f'article.message[data-id="{note_id}"]')).to_have_count(0)

        # The first deletion's page lists the residue by id, now forgotten, and shows no content.
        page.goto(f"{base}/forget/history/{request_id}/")
        listed = page.locator(f'#possible-residue li[data-id="{note_id}"]')
        expect(listed).to_contain_text("since forgotten")
        expect(page.locator("body")).not_to_contain_text("4826")
        assert not seen["errors"], f"uncaught errors in the page: {seen['errors']}"
