"""In the browser, with the reply written by an OpenAI-protocol stub: a streamed reply can be stopped (and
is kept as far as it got), a reply's Markdown is rendered while a <script> in it, or in what the user
typed, stays inert text, and a message can be copied.

Screenshots are saved under test-artifacts/ (chat-*.png)."""

from __future__ import annotations

import pytest

from chat.models import Message
from tests import browser as tb
from tests.conftest import app_env, start_web

pytestmark = pytest.mark.browser

MARKDOWN = (
    "Here is **bold**, `code` and a list:\n\n- first\n- second\n\n"
    '<script>window.pwned = 1</script><img src="x" onerror="window.pwned = 2">'
)


@pytest.fixture
def stub_app(transactional_db, openai_stub):
    """The app answering through the stub, so a test decides what a reply says and how fast it streams."""
    env = app_env(DELLM_LLM="openai", OPENAI_API_KEY=openai_stub.api_key, OPENAI_BASE_URL=openai_stub.base_url)
    web, base = start_web(env, "web-stub.log")
    yield base, openai_stub
    web.stop()


def test_stop_markdown_and_copy(stub_app, chromium):
    from playwright.sync_api import expect

    base, stub = stub_app
    with tb.browser_page(chromium) as (page, seen), tb.artifacts_on_failure(page, seen, "chat"):
        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        tb.sign_up(page, base, "stopper")
        tb.new_conversation(page, base)

        # Markdown renders; the script and the handler in the reply never run.
        stub.reply = MARKDOWN
        reply_to = tb.say(page, "Show me <script>window.pwned = 3</script> formatting", 1,
                          timeout=tb.FIRST_REPLY_TIMEOUT_MS)
        reply = tb.finished_reply(page)
        expect(reply.locator(".content strong")).to_have_text("bold")
        expect(reply.locator(".content code")).to_have_text("code")
        expect(reply.locator(".content li")).to_have_count(2)
        expect(reply.locator(".content script, .content img[onerror]")).to_have_count(0)
        expect(reply_to.locator(".content")).to_have_text("Show me <script>window.pwned = 3</script> formatting")
        page.reload()  # rendered the same way from the server's page
        expect(tb.finished_reply(page).locator(".content strong")).to_have_text("bold")
        expect(page.locator("article.message.user .content script")).to_have_count(0)
        assert page.evaluate("() => window.pwned") is None
        tb.screenshot(page, "chat-markdown")

        # Copy puts the message as written (its Markdown) on the clipboard.
        tb.finished_reply(page).locator(".msg-copy").click()
        expect(page.locator("#status")).to_have_text("Copied.")
        assert page.evaluate("() => navigator.clipboard.readText()") == MARKDOWN

        # A slow reply: Stop appears while it streams, ends it, and what was written so far is kept.
        stub.reply = " ".join(f"word{n}" for n in range(200))
        stub.chunk_delay = 0.1
        tb.send(page, "Tell me a long story.")
        stop = page.locator("#stop")
        expect(stop).to_be_visible()
        expect(page.locator("#send")).to_be_hidden()
        expect(page.locator("article.message.assistant.streaming .content")).to_contain_text("word3")
        tb.screenshot(page, "chat-streaming")
        stop.click()
        expect(page.locator("article.message.assistant[data-id]:not(.streaming)")).to_have_count(2)
        expect(stop).to_be_hidden()
        expect(page.locator("#send")).to_be_visible()
        stopped = tb.finished_reply(page)
        text = stopped.locator(".content").text_content()
        assert text.startswith("word0") and "word199" not in text, text
        assert Message.objects.get(pk=stopped.get_attribute("data-id")).content.strip() == text.strip()
        assert not seen["errors"], seen["errors"]
