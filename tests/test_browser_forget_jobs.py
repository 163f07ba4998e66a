"""The Forget panel with a large deletion (small limits for the test): the preview is summarised and paged (Show
more loads the rest), and the confirmed deletion runs as a job whose progress bar the panel shows until the
manifest is there."""

from __future__ import annotations

import pytest

from tests import browser as tb
from tests.conftest import app_env, start_web

pytestmark = pytest.mark.browser

# Records every label the progress bar shows (the job may finish between two looks of Playwright's).
WATCH_PROGRESS = """() => {
  window.progressSeen = [];
  const job = document.getElementById("forget-job");
  const label = document.getElementById("forget-progress-label");
  new MutationObserver(() => { if (!job.hidden) window.progressSeen.push(label.textContent); })
    .observe(job, { attributes: true, childList: true, subtree: true, characterData: true });
}"""


@pytest.fixture
def live_app_small_jobs(transactional_db):
    """The app with a job from three items on and preview pages of two."""
    app, base = start_web(app_env(DELLM_FORGET_JOB_MIN_ITEMS="3", DELLM_FORGET_PREVIEW_PAGE="2"), "web-jobs.log")
    yield base
    app.stop()


def test_a_large_deletion_is_previewed_in_pages_and_shows_its_progress(live_app_small_jobs, chromium):
    from playwright.sync_api import expect

    base = live_app_small_jobs
    with tb.browser_page(chromium) as (page, seen), tb.artifacts_on_failure(page, seen, "test_browser_forget_jobs"):
        tb.sign_up(page, base, "bigforgetter")
        tb.new_conversation(page, base)
        tb.say(page, "I live in Lisbon.", 1, timeout=tb.FIRST_REPLY_TIMEOUT_MS)
        tb.say(page, "I have a tortoise called Sheldon.", 2)
        tb.say(page, "I work as a nurse.", 3)
        panel = page.locator("aside#forget")

        page.get_by_role("button", name="Delete conversation").click()
        summary = panel.locator("#forget-summary")
        expect(summary).to_be_visible()
        expect(summary).to_contain_text("6 messages")
        expect(summary).to_contain_text("in 1 conversation")
        expect(panel.locator("#forget-counts")).to_contain_text("will be deleted")
        items = panel.locator(".forget-item")
        shown = items.count()
        assert 0 < shown <= 4, shown  # two of each list
        more = panel.locator("#forget-more")
        while more.is_visible():
            more.click()
            expect(items).not_to_have_count(shown)
            shown = items.count()
        expect(summary).to_be_hidden()  # everything is listed now
        assert shown >= 6

        page.evaluate(WATCH_PROGRESS)
        panel.locator("#forget-confirm").click()
        expect(panel.locator("#forget-result")).to_contain_text("1 conversation", timeout=tb.REPLY_TIMEOUT_MS)
        expect(panel.locator("#forget-job")).to_be_hidden()
        labels = page.evaluate("() => window.progressSeen")
        starts = ("Starting", "Forgetting", "Checking", "Collecting")
        assert labels and any(label.startswith(starts) for label in labels)
        expect(page.locator("article.message")).to_have_count(0)
        assert not seen["errors"], f"uncaught errors in the page: {seen['errors']}"
