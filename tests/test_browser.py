"""End-to-end browser test: Debian's Chromium, driven by Playwright, against the real ASGI app.

A new user signs up through the page, tells the assistant where they live in one conversation,
asks about it in another, and then follows the provenance back through the influence panel.
"""

from __future__ import annotations

import json
import re
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-quic",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"

# The first message loads the embedding model in the server process (the user message is embedded
# before it is echoed back), so the first round trip can take a while on a slow machine.
FIRST_REPLY_TIMEOUT_MS = 90_000
REPLY_TIMEOUT_MS = 30_000
UI_TIMEOUT_MS = 15_000


def require_chromium() -> None:
    """Fail (never skip) when Debian's Chromium is not installed."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: install Debian's Chromium with "
            "`apt-get update && apt-get install -y chromium` (never `playwright install`).",
            pytrace=False,
        )


@contextmanager
def chromium_page():
    """A fresh headless Chromium page plus what it saw: websocket frames, console lines and page errors."""
    from playwright.sync_api import expect, sync_playwright

    seen = {"frames": [], "console": [], "errors": []}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(UI_TIMEOUT_MS)
        page.set_default_navigation_timeout(UI_TIMEOUT_MS * 2)
        expect.set_options(timeout=UI_TIMEOUT_MS)

        def on_websocket(ws):
            ws.on("framereceived", lambda payload: seen["frames"].append(payload))

        page.on("websocket", on_websocket)
        page.on("console", lambda msg: seen["console"].append(f"{msg.type}: {msg.text}"))
        page.on("pageerror", lambda exc: seen["errors"].append(str(exc)))
        try:
            yield page, seen
        finally:
            expect.set_options(timeout=5_000)  # Playwright's default, for whoever runs next
            context.close()
            browser.close()


@contextmanager
def artifacts_on_failure(page, seen, name: str):
    """Save a screenshot, the page's HTML and what the browser logged when the block fails."""
    try:
        yield
    except BaseException:
        ARTIFACTS.mkdir(exist_ok=True)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        try:
            page.screenshot(path=str(ARTIFACTS / f"{name}-{stamp}.png"), full_page=True)
            (ARTIFACTS / f"{name}-{stamp}.html").write_text(page.content())
        except Exception as exc:  # the page may be gone; keep the original failure
            print(f"could not save the screenshot: {exc}")
        (ARTIFACTS / f"{name}-{stamp}.log").write_text(
            "URL: " + page.url + "\n\nconsole:\n" + "\n".join(seen["console"])
            + "\n\npage errors:\n" + "\n".join(seen["errors"])
            + "\n\nwebsocket frames:\n" + "\n".join(map(str, seen["frames"]))
        )
        print(f"browser artifacts saved under {ARTIFACTS} as {name}-{stamp}.*")
        raise


def frame_types(seen) -> list[str]:
    types = []
    for payload in seen["frames"]:
        try:
            types.append(json.loads(payload).get("type"))
        except (TypeError, ValueError, AttributeError):
            types.append(None)
    return types


def new_conversation(page, base: str, previous_url: str | None = None) -> str:
    """Click "+ New conversation" and wait until its page is connected; return its URL."""
    from playwright.sync_api import expect

    page.get_by_role("button", name="+ New conversation").click()
    expect(page).to_have_url(re.compile(re.escape(base) + r"/c/\d+/$"))
    if previous_url is not None:
        assert page.url != previous_url, "a new conversation must get a page of its own"
    expect(page.locator("#send")).to_be_enabled()  # the websocket is open
    return page.url


def send(page, text: str) -> None:
    from playwright.sync_api import expect

    expect(page.locator("#send")).to_be_enabled()
    page.locator("#composer-input").fill(text)
    page.locator("#send").click()
    expect(page.locator("#composer-input")).to_have_value("")


def finished_reply(page):
    """The last assistant bubble once its reply frame has arrived (it then carries its id)."""
    return page.locator("article.message.assistant[data-id]:not(.streaming)").last


def test_remember_recall_and_trace_influence(live_app, monkeypatch):
    require_chromium()
    from playwright.sync_api import expect

    # Playwright's sync API keeps an event loop in this thread, so Django would refuse ORM calls
    # (e.g. from the database fixtures' teardown) while it runs; the test itself makes none.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    base = live_app
    with chromium_page() as (page, seen), artifacts_on_failure(page, seen, "test_browser"):
        # Sign up through the page; the new user lands on the (empty) chat home.
        page.goto(f"{base}/accounts/signup/")
        page.locator("#id_username").fill("lisbon_browser")
        page.locator("#id_password1").fill("a-Long-browser-passphrase-42")
        page.locator("#id_password2").fill("a-Long-browser-passphrase-42")
        page.get_by_role("button", name="Sign up").click()
        expect(page).to_have_url(f"{base}/")
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
        influenced = panel.locator(".influenced-list li a")
        expect(influenced.filter(has_text=re.compile(rf"^#{answer_id}\b"))).to_have_count(1)
        expect(statement).to_have_class(re.compile(r"\bselected\b"))

        assert not seen["errors"], f"uncaught errors in the page: {seen['errors']}"
