"""In the browser: a message that may ask to forget gets a question card (nothing stored until the user
chooses), and the Forget panel offers possibly related items, unchecked, that one click adds."""

from __future__ import annotations

import pytest

from tests import browser as tb
from tests.conftest import app_env, start_web

pytestmark = pytest.mark.browser


@pytest.fixture
def unsure_app(transactional_db):
    """The app never sure, so a plain request to forget is asked about first (the trained "ask" threshold stays:
    the ordinary messages of the test must still fall below it)."""
    web, base = start_web(app_env(DELLM_INTENT_SURE="1.01"), "web-unsure.log")
    yield base
    web.stop()


def test_question_card_then_possibly_related_items(unsure_app, chromium):
    from playwright.sync_api import expect

    base = unsure_app
    with tb.browser_page(chromium) as (page, seen), tb.artifacts_on_failure(page, seen, "test_browser_forget_requests"):
        tb.sign_up(page, base, "unsure")
        tb.new_conversation(page, base)
        sheldon = tb.say(page, "I have a tortoise called Sheldon.", 1, timeout=tb.FIRST_REPLY_TIMEOUT_MS)
        radiator = tb.say(page, "My pet sleeps under the radiator all winter.", 2)
        tb.say(page, "I work as a sous-chef.", 3)
        sheldon_id, radiator_id = sheldon.get_attribute("data-id"), radiator.get_attribute("data-id")

        # "No, just answer it": the message is then stored and answered like any other.
        seen["frames"].clear()
        tb.send(page, "Forget that I work as a sous-chef.")
        card = page.locator(".forget-question")
        expect(card).to_be_visible()
        expect(card).to_contain_text("Did you want me to forget")
        assert tb.frame_types(seen) == ["forget_question"], seen["frames"]
        expect(page.locator("article.message")).to_have_count(6)  # not stored, not shown as a message
        card.locator(".forget-question-answer").click()
        expect(page.locator("article.message")).to_have_count(8)
        expect(card).to_have_count(0)

        # "Review what I'd forget": the Forget panel opens with the preview.
        tb.send(page, "Forget that I have a tortoise called Sheldon.")
        expect(card).to_be_visible()
        card.locator(".forget-question-review").click()
        panel = page.locator("aside#forget")
        expect(panel).to_be_visible()
        expect(panel.locator(f'.forget-item.matched[data-id="{sheldon_id}"]')).to_have_count(1)
        related = panel.locator(f'.forget-item.related[data-id="{radiator_id}"]')
        expect(related).to_be_visible()
        expect(related.locator("input.add-box")).not_to_be_checked()
        expect(related.locator(".explanation")).to_contain_text("Not included")
        page.screenshot(path=str(tb.ARTIFACTS / "forget-possibly-related.png"), full_page=True)

        related.locator("input.add-box").check()
        expect(panel.locator("#forget-counts")).to_contain_text("you added 1 related item")
        panel.locator("#forget-confirm").click()
        expect(panel.locator("#forget-result")).to_be_visible()
        expect(page.locator(f'article.message[data-id="{sheldon_id}"]')).to_have_count(0)
        expect(page.locator(f'article.message[data-id="{radiator_id}"]')).to_have_count(0)
        expect(page.locator("article.message").filter(has_text="sous-chef").first).to_be_visible()
