"""End-to-end browser tests of the Memory page: Debian's Chromium, driven by Playwright, against the
real ASGI app (uvicorn in its own process on the test database; tasks run in-process, so the facts
of a message exist by the time its reply arrives).

A user tells the assistant two things about themselves, opens Memory, sees the two facts with links
to the messages they came from, corrects one (the old version stays as greyed-out history) and
erases the other through the Forget panel's preview. A second test forgets a message a summary was
built from and follows the summary's rebuild on the Memory page.
"""

from __future__ import annotations

import re

import pytest

from tests import browser as tb

pytestmark = pytest.mark.browser


def fact(page, text: str, status: str = "active"):
    return page.locator(f'#fact-list .memory-record.fact[data-status="{status}"]').filter(
        has=page.locator(":scope > .record-head > .record-content", has_text=re.compile("^" + re.escape(text) + "$"))
    )


def test_memory_page_correct_and_erase_facts(live_app, chromium):
    from playwright.sync_api import expect

    base = live_app
    with tb.browser_page(chromium) as (page, seen), tb.artifacts_on_failure(page, seen, "test_browser_memory"):
        tb.sign_up(page, base, "rememberer")
        conversation_url = tb.new_conversation(page, base)
        conversation_id = re.search(r"/c/(\d+)/$", conversation_url).group(1)
        lisbon_id = tb.say(page, "I live in Lisbon.", 1, timeout=tb.FIRST_REPLY_TIMEOUT_MS).get_attribute("data-id")
        sheldon_id = tb.say(page, "I have a tortoise called Sheldon.", 2).get_attribute("data-id")

        # Memory lists both facts, each linked to the message it came from.
        page.locator("#nav-memory").click()
        expect(page).to_have_url(f"{base}/memory/")
        lisbon, sheldon = fact(page, "Lives in Lisbon."), fact(page, "Has a tortoise called Sheldon.")
        expect(lisbon).to_have_count(1)
        expect(sheldon).to_have_count(1)
        expect(page.locator("#fact-list .memory-record.fact")).to_have_count(2)
        expect(lisbon.locator("a.source-link")).to_have_attribute("href", f"/c/{conversation_id}/#m{lisbon_id}")
        expect(sheldon.locator("a.source-link")).to_have_attribute("href", f"/c/{conversation_id}/#m{sheldon_id}")
        expect(lisbon.locator(".record-version")).to_have_text("version 1")
        expect(lisbon.locator(".record-derivation")).to_contain_text("local:extractive")
        lisbon_fact_id = lisbon.get_attribute("data-id")
        sheldon_fact_id = sheldon.get_attribute("data-id")

        # Correct the Lisbon fact: the new one is current (version 2, corrected by you), the old
        # one is shown under it as superseded history.
        lisbon.locator(".fact-correct").click()
        form = lisbon.locator("form.correct-form")
        expect(form).to_be_visible()
        expect(form.locator("input[name=content]")).to_have_value("Lives in Lisbon.")
        form.locator("input[name=content]").fill("Lives in Porto.")
        form.get_by_role("button", name="Save").click()
        porto = fact(page, "Lives in Porto.")
        expect(porto).to_have_count(1)
        expect(porto.locator(".pill.corrected")).to_have_text("corrected by you")
        expect(porto.locator(".record-version").first).to_have_text("version 2")
        expect(porto.locator("a.source-link").first).to_have_attribute("href", f"/c/{conversation_id}/#m{lisbon_id}")
        old = porto.locator(f'.fact-history .memory-record.superseded[data-id="{lisbon_fact_id}"]')
        expect(old).to_have_count(1)
        expect(old.locator(".record-content")).to_have_text("Lives in Lisbon.")
        expect(old.locator(".pill.superseded")).to_have_text("superseded")
        expect(old.locator(".fact-correct")).to_have_count(0)
        expect(fact(page, "Lives in Lisbon.")).to_have_count(0)  # no longer current
        expect(page.locator("#memory-status")).to_contain_text("Corrected")
        page.reload()
        expect(fact(page, "Lives in Porto.").locator(f'.fact-history [data-id="{lisbon_fact_id}"]')).to_have_count(1)

        # Erase the Sheldon fact: the Forget panel previews it (and any reply that used it) first.
        fact(page, "Has a tortoise called Sheldon.").locator(".record-erase").click()
        panel = page.locator("aside#forget")
        expect(panel).to_be_visible()
        expect(panel.locator("#forget-heading")).to_have_text(f"Erase fact #{sheldon_fact_id}")
        expect(panel.locator("#forget-origin")).to_contain_text("messages it was built from")
        matched = panel.locator(f'.forget-item.matched[data-id="{sheldon_fact_id}"]')
        expect(matched).to_have_count(1)
        expect(matched.locator(".excerpt")).to_have_text("Has a tortoise called Sheldon.")
        expect(matched.locator(".reason")).to_contain_text("chosen by you")
        expect(panel.locator(".forget-item.matched")).to_have_count(1)
        expect(panel.locator("#forget-counts")).to_contain_text("will be deleted")
        expect(panel.locator("#forget-items")).to_contain_text("will be erased, not rebuilt")
        tainted = panel.locator(".forget-item.tainted")
        for i in range(tainted.count()):  # replies that used the fact, each explained
            expect(tainted.nth(i).locator(".tech-explanation")).to_contain_text(f"used fact {sheldon_fact_id}")
        # Nothing is deleted before confirming.
        expect(fact(page, "Has a tortoise called Sheldon.")).to_have_count(1)
        panel.locator("#forget-confirm").click()
        result = panel.locator("#forget-result")
        expect(result).to_contain_text("Deleted", timeout=tb.REPLY_TIMEOUT_MS)
        expect(result).to_contain_text("1 erased")
        expect(fact(page, "Has a tortoise called Sheldon.")).to_have_count(0)
        expect(page.locator(f'.memory-record[data-id="{sheldon_fact_id}"]')).to_have_count(0)
        expect(page.locator(f'#rebuild-status .rebuild-item[data-id="{sheldon_fact_id}"]')).to_contain_text("erased")
        expect(page).to_have_url(re.compile(re.escape(base) + r"/memory/\?after=[0-9a-f-]{36}$"))
        expect(fact(page, "Lives in Porto.")).to_have_count(1)
        panel.locator("#forget-done").click()
        expect(panel).to_be_hidden()
        page.reload()
        expect(page.locator("#fact-list")).not_to_contain_text("Sheldon")

        # A source link opens the message in its conversation; the source message itself stayed.
        fact(page, "Lives in Porto.").locator("a.source-link").first.click()
        expect(page).to_have_url(f"{base}/c/{conversation_id}/#m{lisbon_id}")
        expect(page.locator(f"article#m{lisbon_id}")).to_contain_text("I live in Lisbon.")
        expect(page.locator(f"article#m{sheldon_id}")).to_contain_text("I have a tortoise called Sheldon.")
        assert not seen["errors"], f"uncaught errors in the page: {seen['errors']}"


def test_memory_page_follows_a_rebuild_after_a_deletion(live_app, chromium):
    from playwright.sync_api import expect

    from provenance.models import DeletionRequest

    base = live_app
    with tb.browser_page(chromium) as (page, seen), tb.artifacts_on_failure(page, seen, "test_browser_memory_rebuild"):
        tb.sign_up(page, base, "rebuilder")
        conversation_url = tb.new_conversation(page, base)
        tb.say(page, "I live in Lisbon.", 1, timeout=tb.FIRST_REPLY_TIMEOUT_MS)
        tb.say(page, "I have a tortoise called Sheldon.", 2)
        baker = tb.say(page, "I work as a baker.", 3)  # the third message: the conversation is summarised
        baker_id = baker.get_attribute("data-id")

        page.locator("#nav-memory").click()
        summary = page.locator("#summary-list .memory-record.summary.active")
        expect(summary).to_have_count(1)
        expect(summary.locator(".record-content")).to_contain_text("baker")
        expect(summary.locator(".record-sources")).to_contain_text("3 sources")
        expect(summary.locator(".record-version")).to_have_text("version 1")
        summary_id = summary.get_attribute("data-id")
        page.goto(conversation_url)

        # Forget the baker message on the chat page: the summary built from it is dropped and
        # rebuilt from what remains; the manifest summary links to the Memory page.
        page.locator(f'article.message[data-id="{baker_id}"] .msg-forget').click()
        panel = page.locator("aside#forget")
        expect(panel.locator(f'.forget-item.tainted[data-id="{summary_id}"]')).to_have_count(1)
        panel.locator("#forget-confirm").click()
        link = panel.locator("#forget-result a.memory-link")
        expect(link).to_be_visible(timeout=tb.REPLY_TIMEOUT_MS)
        request_id = re.search(r"after=([0-9a-f-]{36})$", link.get_attribute("href")).group(1)
        link.click()
        box = page.locator("#rebuild-status")
        expect(box.locator(f'.rebuild-item[data-id="{summary_id}"]')).to_contain_text("rebuilt (version 2)")
        expect(box.locator(".rebuild-item.fact")).to_contain_text("dropped: no surviving sources")
        rebuilt = page.locator("#summary-list .memory-record.summary.active")
        expect(rebuilt.locator(".record-version")).to_have_text("version 2")
        expect(rebuilt.locator(".record-content")).not_to_contain_text("baker")
        expect(rebuilt.locator(".record-sources")).to_contain_text("2 sources")

        # While a rebuild job is still queued (a busy worker), the page says "rebuilding…" and polls
        # the manifest until it is done.
        manifest = tb.in_thread(lambda: DeletionRequest.objects.get(pk=request_id).manifest)
        done = manifest["rebuilt"]
        pending = [
            {"id": r["id"], "kind": r["kind"], "status": "pending", "version": 1} if r["kind"] == "summary" else r
            for r in done
        ]
        queued = {**manifest, "rebuilt": pending}
        tb.in_thread(lambda: DeletionRequest.objects.filter(pk=request_id).update(manifest=queued))
        page.reload()
        item = box.locator(f'.rebuild-item[data-id="{summary_id}"]')
        expect(item).to_contain_text("rebuilding…")
        expect(box).to_have_attribute("data-pending", "1")
        tb.in_thread(lambda: DeletionRequest.objects.filter(pk=request_id).update(manifest=manifest))
        expect(item).to_contain_text("rebuilt (version 2)", timeout=10_000)
        expect(box).to_have_attribute("data-pending", "0")
        assert not seen["errors"], f"uncaught errors in the page: {seen['errors']}"
