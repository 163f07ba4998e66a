"""Helpers for the end-to-end browser tests: Debian's Chromium, driven by Playwright, against the real ASGI app.

The browser itself is the session-scoped ``chromium`` fixture in conftest; each test gets a fresh
context and page from ``browser_page``.
"""

from __future__ import annotations

import json
import re
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

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
def browser_page(browser):
    """A fresh page in its own context of ``browser``, plus what it saw: websocket frames, console lines and
    page errors."""
    from playwright.sync_api import expect

    seen = {"frames": [], "console": [], "errors": []}
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


def in_thread(fn):
    """Run ORM code away from Playwright's event loop: in this thread Django would keep its
    connection in the loop's context, where nothing closes it before the test database is dropped."""
    from django.db import connections

    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # re-raised in the test
            out["error"] = exc
        finally:
            connections.close_all()

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if "error" in out:
        raise out["error"]
    return out.get("value")


def sign_up(page, base: str, username: str, password: str = "a-Long-forget-passphrase-42") -> None:
    """Sign up through the page; the new user lands on the chat home."""
    from playwright.sync_api import expect

    page.goto(f"{base}/accounts/signup/")
    page.locator("#id_username").fill(username)
    page.locator("#id_password1").fill(password)
    page.locator("#id_password2").fill(password)
    page.get_by_role("button", name="Sign up").click()
    expect(page).to_have_url(f"{base}/")


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


def say(page, text: str, replies: int, timeout: int = REPLY_TIMEOUT_MS):
    """Send ``text`` and wait until the page shows ``replies`` finished assistant replies."""
    from playwright.sync_api import expect

    send(page, text)
    expect(page.locator("article.message.assistant[data-id]:not(.streaming)")).to_have_count(replies, timeout=timeout)
    expect(page.locator("#send")).to_be_enabled()
    return page.locator("article.message.user", has_text=text).last


WIDE = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def screenshot(page, name: str) -> Path:
    """Save a screenshot of what the window shows under test-artifacts/ (kept whether the test passes or not)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def assert_no_horizontal_scroll(page) -> None:
    """The page is no wider than the window."""
    widths = page.evaluate(
        "() => ({page: document.documentElement.scrollWidth, body: document.body.scrollWidth, window: innerWidth})"
    )
    assert widths["page"] <= widths["window"] and widths["body"] <= widths["window"], (page.url, widths)


def assert_in_view(page, locator, timeout: float = 3.0) -> None:
    """``locator`` is visible and wholly inside the window, without scrolling (once any slide-in has ended)."""
    from playwright.sync_api import expect

    expect(locator).to_be_visible()
    size = page.viewport_size
    deadline = time.monotonic() + timeout
    while True:
        box = locator.bounding_box()
        assert box is not None, locator
        inside = box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= size["width"] + 0.5
        inside = inside and box["y"] + box["height"] <= size["height"] + 0.5
        if inside or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert inside, (str(locator), box, size)


AXE = Path(__file__).resolve().parent.parent / "static/vendor/axe-core-4.11.0/axe.min.js"


def serious_a11y_violations(page) -> list[str]:
    """Run the vendored axe-core on the page (WCAG 2.1 A and AA rules); the serious and critical violations,
    one line each with the offending elements."""
    if not page.evaluate("() => Boolean(window.axe)"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        "() => axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})"
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at " + ", ".join(" ".join(n["target"]) for n in v["nodes"][:5])
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]
