"""Hostile input: oversized bodies, out-of-range integers, NUL characters and lone surrogates, wrong types,
foreign websocket origins, and what a production server shows when something is missing or breaks.

Every refusal is a 4xx JSON reason (or a websocket error frame), never a 5xx, and stores nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid

import httpx
import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.db import connections
from django.test import Client
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from accounts.models import ApiToken
from chat import services, turns
from chat.models import Conversation
from dellm_site.asgi import application
from dellm_site.validation import MAX_DEPTH, MAX_ID
from memory.models import Fact, Node
from provenance.forgetting import execution
from provenance.forgetting import services as forget
from provenance.models import DeletionRequest
from tests.conftest import ROOT, app_env, start_web

pytestmark = pytest.mark.django_db(transaction=True)

# 20 digits: past PostgreSQL's bigint, and past the int4 columns.
HUGE = 10**20
BAD_TEXTS = ["NUL\x00inside", "a lone \ud800 surrogate", "\udfff"]


def stored() -> tuple[int, ...]:
    """Everything a request could have written: items, conversations, forget requests, tokens."""
    return (Node.objects.count(), Conversation.objects.count(), DeletionRequest.objects.count(),
            ApiToken.objects.count())


def refused(response, status: int = 400, code: str | None = "invalid") -> dict:
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"].startswith("application/json"), response["Content-Type"]
    body = response.json()
    if code is not None:
        assert body["code"] == code, body
    assert body["detail"]
    return body


# --- Body size ----------------------------------------------------------------------------------


def test_oversized_bodies_are_a_json_413_and_store_nothing(api, user):
    conversation = services.conversation_create(user=user)
    before = stored()
    too_big = settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1
    body = json.dumps({"content": "x" * too_big})
    response = api.generic("POST", f"/api/conversations/{conversation.pk}/messages/", body,
                           content_type="application/json")
    refused(response, 413, "too_large")
    # Form bodies, which Django parses itself.
    response = api.post("/api/auth/token/", {"username": "x" * too_big, "password": "p"})
    refused(response, 413, "too_large")
    response = api.generic(
        "POST", "/v1/chat/completions", json.dumps({"messages": [{"role": "user", "content": "x" * too_big}]}),
        content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {user.token}",
    )
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"
    assert stored() == before


def test_ten_megabytes_over_real_http_get_json_not_html(live_app, user):
    conversation = services.conversation_create(user=user)
    body = json.dumps({"content": "x" * 10_000_000})
    headers = {"Authorization": f"Token {user.token}", "Content-Type": "application/json"}
    response = httpx.post(f"{live_app}/api/conversations/{conversation.pk}/messages/", content=body, headers=headers,
                          timeout=60)
    assert response.status_code == 413 and response.json()["code"] == "too_large"
    response = httpx.post(f"{live_app}/v1/chat/completions", content=body, headers=headers, timeout=60)
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"
    assert Node.objects.count() == 0


# --- Integers -----------------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [2**31, HUGE, MAX_DEPTH + 1, -1, "deep", 1.5, True])
def test_forget_preview_refuses_out_of_range_depth(api, depth):
    response = api.post("/api/forget/preview/", {"mode": "keyword", "query": "Lisbon", "depth": depth}, format="json")
    assert "depth" in refused(response)["fields"]
    assert DeletionRequest.objects.count() == 0


def test_forget_preview_accepts_the_largest_depth(api):
    response = api.post("/api/forget/preview/", {"mode": "keyword", "query": "Lisbon", "depth": MAX_DEPTH},
                        format="json")
    assert response.status_code == 201 and response.json()["depth"] == MAX_DEPTH


@pytest.mark.parametrize(
    "body",
    [
        {"mode": "ids", "message_ids": [MAX_ID + 1]},
        {"mode": "ids", "message_ids": [HUGE]},
        {"mode": "conversation", "conversation_id": MAX_ID + 1},
        {"mode": "ids", "message_ids": [1], "threshold": "nan"},
        '{"mode": "semantic", "query": "Lisbon", "threshold": 1e999}',
        '{"mode": "semantic", "query": "Lisbon", "threshold": NaN}',
    ],
)
def test_forget_preview_refuses_ids_and_thresholds_out_of_range(api, body):
    raw = body if isinstance(body, str) else json.dumps(body)
    response = api.generic("POST", "/api/forget/preview/", raw, content_type="application/json")
    assert response.status_code == 400 and response.json()["code"] in ("invalid", "parse_error")
    assert DeletionRequest.objects.count() == 0


def test_forget_confirm_refuses_out_of_range_ids(api):
    preview = api.post("/api/forget/preview/", {"mode": "keyword", "query": "Lisbon"}, format="json").json()
    for field in ("keep", "add"):
        response = api.post(f"/api/forget/{preview['request_id']}/confirm/", {field: [HUGE]}, format="json")
        refused(response)
    assert DeletionRequest.objects.get().status == "previewed"


@pytest.mark.parametrize("number", [HUGE, MAX_ID + 1])
def test_out_of_range_ids_in_urls_are_404s(api, client, user, number):
    for method, path, body in [
        ("get", f"/api/conversations/{number}/", None),
        ("get", f"/api/conversations/{number}/messages/", None),
        ("post", f"/api/conversations/{number}/messages/", {"content": "Hello."}),
        ("get", f"/api/messages/{number}/influence/", None),
        ("post", f"/api/tokens/{number}/revoke/", None),
        ("post", f"/api/memory/facts/{number}/rectify/", {"content": "Better."}),
    ]:
        response = getattr(api, method)(path, body, format="json")
        refused(response, 404, "not_found")
    client.force_login(user)
    assert client.get(f"/c/{number}/").status_code == 404
    assert Node.objects.count() == 0


@pytest.mark.parametrize("header", [str(HUGE), str(MAX_ID + 1), "-1", "abc", "1e3"])
def test_v1_conversation_header_out_of_range_is_a_404(client, user, header):
    response = client.post(
        "/v1/chat/completions", {"messages": [{"role": "user", "content": "Hello."}]}, content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {user.token}", HTTP_X_DELLM_CONVERSATION=header,
    )
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    assert Node.objects.count() == 0 and Conversation.objects.count() == 0


def test_account_page_token_forms_refuse_bad_input(client, user):
    client.force_login(user)
    for token_id in ("abc", str(HUGE), "\x00"):
        response = client.post("/account/", {"action": "revoke-token", "token_id": token_id})
        assert response.status_code == 200 and b"Token not found" in response.content
    response = client.post("/account/", {"action": "create-token", "name": "my\x00client"})
    assert response.status_code == 200 and b"may not contain" in response.content
    assert ApiToken.objects.count() == 0


# --- NUL characters and lone surrogates ---------------------------------------------------------


@pytest.mark.parametrize("text", BAD_TEXTS)
def test_rest_refuses_nul_and_surrogates_everywhere(api, user, text):
    conversation = services.conversation_create(user=user)
    fact = Fact.objects.create(owner=user, kind="fact", content="The user lives in Lisbon.")
    before = stored()
    for path, body in [
        ("/api/conversations/", {"title": text}),
        (f"/api/conversations/{conversation.pk}/messages/", {"content": text}),
        ("/api/forget/preview/", {"mode": "keyword", "query": text}),
        ("/api/forget/preview/", {"mode": "natural", "query": text}),
        ("/api/tokens/", {"name": text}),
        (f"/api/memory/facts/{fact.pk}/rectify/", {"content": text}),
        ("/api/auth/signup/", {"username": text, "password": "a-long-passphrase-9"}),
    ]:
        # Encoded here: the test client's JSON renderer cannot write a lone surrogate, a browser's JSON.stringify can.
        refused(api.generic("POST", path, json.dumps(body), content_type="application/json"))
    assert stored() == before
    assert Fact.objects.get(pk=fact.pk).status == "active"


def v1_post(client, user, body, **extra):
    raw = body if isinstance(body, str | bytes) else json.dumps(body)
    return client.generic("POST", "/v1/chat/completions", raw, content_type="application/json",
                          HTTP_AUTHORIZATION=f"Bearer {user.token}", **extra)


def turn(content="Hello there.", **fields) -> dict:
    return {"model": "dellm", "messages": [{"role": "user", "content": content}], **fields}


@pytest.mark.parametrize(
    "body",
    [
        turn("NUL\x00inside"),
        turn("a lone \ud800 surrogate"),
        turn([{"type": "text", "text": "NUL\x00inside"}]),
        turn(user="NUL\x00inside"),
        turn(user="\udc00"),
        turn(model="NUL\x00inside"),
        turn(5),
        turn(None),
        turn({"text": "hi"}),
        turn([{"type": "text", "text": 5}]),
        turn(["hi"]),
        turn(stream=True, stream_options="x"),
        turn(stream_options=["x"]),
        turn(stream=True, stream_options={"include_usage": "yes"}),
        turn(stream="yes"),
        turn(user=5),
        turn(model={"a": 1}),
        turn(dellm="answer"),
        turn(dellm={"intent": "\x00"}),
        {"messages": [{"role": 5, "content": "hi"}, {"role": "user", "content": "hi"}]},
        {"messages": ["hi", {"role": "user", "content": "hi"}]},
        {"messages": {"role": "user", "content": "hi"}},
        ["not", "an", "object"],
    ],
)
def test_v1_refuses_bad_text_and_wrong_types_and_stores_nothing(client, user, body):
    before = stored()
    response = v1_post(client, user, body)
    assert response.status_code == 400, response.content[:500]
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and error["message"]
    assert stored() == before


def test_v1_still_accepts_text_parts_and_a_null_assistant_content(client, user):
    body = {"messages": [
        {"role": "assistant", "content": None, "tool_calls": []},
        {"role": "user", "content": [{"type": "text", "text": "I live in "}, {"type": "text", "text": "Lisbon."}]},
    ], "user": "thread-1", "stream": False, "stream_options": None}
    response = v1_post(client, user, body)
    assert response.status_code == 200, response.content
    assert Node.objects.filter(kind="message", content="I live in Lisbon.").exists()


# --- Websocket frames ---------------------------------------------------------------------------


def session_headers(user, host=b"127.0.0.1:8931", origin=b"http://127.0.0.1:8931"):
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    headers = [(b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode())]
    if host is not None:
        headers.append((b"host", host))
    if origin is not None:
        headers.append((b"origin", origin))
    return headers


async def ws_connect(user, conversation_id, scheme=None, **kwargs):
    headers = await sync_to_async(session_headers)(user, **kwargs)
    communicator = WebsocketCommunicator(application, f"/ws/chat/{conversation_id}/", headers=headers)
    if scheme:
        communicator.scope["scheme"] = scheme
    connected, _ = await communicator.connect(timeout=10)
    return communicator, connected


async def answer_to(communicator, timeout=60) -> list[dict]:
    """Frames up to the one that ends a turn (reply, error, forget preview or question)."""
    frames = []
    while True:
        frame = await communicator.receive_json_from(timeout=timeout)
        frames.append(frame)
        if frame["type"] in {"reply", "error", "forget_preview", "forget_question", "forget_done"}:
            return frames


@pytest.mark.parametrize(
    "frame, code",
    [
        ({"type": "message", "content": "NUL\x00inside"}, "invalid"),
        ({"type": "message", "content": "a lone \ud800 surrogate"}, "invalid"),
        ({"type": "forget_review", "content": "forget \x00 that"}, "invalid"),
        ({"type": "forget_review", "content": "forget \udbff that"}, "invalid"),
        ({"type": "forget_confirm", "request_id": "\x00"}, "not_found"),
        ({"type": "forget_confirm", "request_id": {"a": 1}}, "not_found"),
        ({"type": "forget_confirm", "request_id": str(uuid.uuid4()), "keep": [HUGE]}, "invalid"),
        ({"type": "forget_confirm", "request_id": str(uuid.uuid4()), "add": [MAX_ID + 1]}, "invalid"),
        ({"type": "message\x00", "content": "hi"}, "unknown_type"),
        ({"type": "message", "content": "hi", "intent": "\x00"}, "invalid"),
    ],
)
async def test_websocket_refuses_nul_surrogates_and_huge_ids_with_an_error_frame(user, frame, code):
    conversation = await sync_to_async(services.conversation_create)(user=user)
    communicator, connected = await ws_connect(user, conversation.pk)
    assert connected
    try:
        await communicator.send_json_to(frame)
        answer = await answer_to(communicator, timeout=20)
    finally:
        await communicator.disconnect()
    assert answer == [{"type": "error", "code": code, "detail": answer[-1]["detail"]}]
    assert await sync_to_async(Node.objects.count)() == 0


async def test_websocket_on_a_huge_conversation_id_is_not_found(user):
    communicator, _ = await ws_connect(user, HUGE)
    frame = await communicator.receive_json_from(timeout=10)
    assert frame["type"] == "error" and frame["code"] == "not_found"
    await communicator.disconnect()


@pytest.mark.parametrize("path", ["/ws/chat//", "/ws/chat/abc/", "/ws/no-such-socket/", "/"])
async def test_unknown_websocket_paths_are_refused_not_crashed(user, path):
    headers = await sync_to_async(session_headers)(user)
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect(timeout=10)
    await communicator.disconnect()
    assert not connected


# --- Websocket origins --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host, origin, scheme, accepted",
    [
        (b"127.0.0.1:8931", b"http://127.0.0.1:8931", None, True),
        (b"localhost:8931", b"http://localhost:8931", None, True),
        (b"localhost", b"http://localhost", None, True),
        (b"localhost", b"http://localhost:80", None, True),
        (b"localhost:8931", b"https://localhost:8931", "wss", True),
        (b"localhost:8931", b"http://localhost:9999", None, False),
        (b"127.0.0.1:8931", b"http://127.0.0.1", None, False),
        (b"127.0.0.1:8931", b"https://127.0.0.1:8931", None, False),
        (b"localhost:8931", b"http://localhost:8931", "wss", False),
        (b"127.0.0.1:8931", b"http://evil.example:8931", None, False),
        (b"127.0.0.1:8931", b"null", None, False),
        (b"127.0.0.1:8931", b"http://127.0.0.1:8931.evil.example", None, False),
        (b"127.0.0.1:8931", b"127.0.0.1:8931", None, False),
        # DNS rebinding: the page's own origin, but a host name this server does not answer to.
        (b"evil.example:8931", b"http://evil.example:8931", None, False),
        (None, b"http://127.0.0.1:8931", None, False),
        # Browsers always send an Origin; a client without one is not a web page acting for the user.
        (b"127.0.0.1:8931", None, None, True),
    ],
)
async def test_websocket_origin_must_match_scheme_host_and_port(user, host, origin, scheme, accepted):
    conversation = await sync_to_async(services.conversation_create)(user=user)
    communicator, connected = await ws_connect(user, conversation.pk, scheme=scheme, host=host, origin=origin)
    await communicator.disconnect()
    assert connected is accepted


async def test_websocket_origins_in_csrf_trusted_origins_are_accepted(user, settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://chat.example.com", "https://*.example.org:8443"]
    conversation = await sync_to_async(services.conversation_create)(user=user)
    for origin, accepted in [
        (b"https://chat.example.com", True),
        (b"https://eu.example.org:8443", True),
        (b"http://chat.example.com", False),
        (b"https://chat.example.com:444", False),
        (b"https://eu.example.org", False),
        (b"https://example.org.evil.example:8443", False),
    ]:
        communicator, connected = await ws_connect(user, conversation.pk, host=b"10.0.0.5:8000", origin=origin)
        await communicator.disconnect()
        assert connected is accepted, origin


# --- Error pages and production mode ------------------------------------------------------------


def test_unknown_api_and_v1_paths_are_json_404s(client):
    refused(client.get("/api/no-such-thing/"), 404, "not_found")
    response = client.post("/v1/no-such-thing", {})
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    page = client.get("/no-such-page/")
    assert page.status_code == 404 and page["Content-Type"].startswith("text/html")


def test_crashes_are_a_json_500_on_api_paths_and_a_friendly_page_elsewhere(client, user, monkeypatch):
    from chat import selectors

    def broken(**kwargs):
        raise RuntimeError("the database caught fire")

    monkeypatch.setattr(selectors, "conversation_list", broken)
    client.raise_request_exception = False
    client.force_login(user)
    body = refused(client.get("/api/conversations/"), 500, "server_error")
    assert "fire" not in body["detail"]
    page = client.get("/")
    assert page.status_code == 500 and page["Content-Type"].startswith("text/html")
    assert b"Something went wrong" in page.content and b"fire" not in page.content


def settings_in_subprocess(env: dict) -> subprocess.CompletedProcess:
    code = "import django; django.setup(); from django.conf import settings as s; print(s.DEBUG)"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_debug_is_off_unless_asked_for():
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_DEBUG", "SECRET_KEY", "DELLM_SECRET_KEY_FILE")}
    env.update({"DJANGO_SETTINGS_MODULE": "dellm_site.settings", "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none"})
    result = settings_in_subprocess({**env, "SECRET_KEY": "k" * 50})
    assert result.returncode == 0 and result.stdout.split() == ["False"], result.stderr
    result = settings_in_subprocess(env)
    assert result.returncode != 0 and "SECRET_KEY is not set" in result.stderr
    result = settings_in_subprocess({**env, "DJANGO_DEBUG": "1"})
    assert result.returncode == 0 and result.stdout.split() == ["True"], result.stderr


def test_make_run_serves_in_production_mode():
    """`make run` collects static files, runs with debug off and a key kept in .data/, and resumes
    interrupted deletions in the background instead of before serving."""
    result = subprocess.run(["make", "-n", "run", "PORT=8931"], cwd=ROOT, capture_output=True, text=True, timeout=60,
                            env={**os.environ, "MAKEFLAGS": ""})
    assert result.returncode == 0, result.stderr
    script = result.stdout.replace("\\\n", " ")
    serve = next(line for line in script.splitlines() if "uvicorn" in line)
    assert "DJANGO_DEBUG" not in script  # the settings' default: off
    assert "DELLM_SECRET_KEY_FILE=" in serve and ".data/secret_key" in serve
    assert "collectstatic --noinput" in script.split(serve)[0]
    assert "DELLM_FORGET_RESUME_AT_START=1" in serve
    assert "manage.py forget_resume" not in script


@pytest.fixture
def production_app(transactional_db):
    """The app as `make run` serves it: debug off, a real key, collected static files, deletions resumed."""
    env = app_env(DJANGO_DEBUG="0", SECRET_KEY="test-" + "k" * 50, SESSION_COOKIE_SECURE="0", CSRF_COOKIE_SECURE="0",
                  DELLM_FORGET_RESUME_AT_START="1")
    collected = subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, env=env,
                               capture_output=True, text=True, timeout=300)
    assert collected.returncode == 0, collected.stderr
    app, base = start_web(env, "web-production.log")
    yield base, app
    app.stop()


def test_production_server_hides_debug_pages_and_serves_static_files(production_app):
    base, _ = production_app
    page = httpx.get(f"{base}/no-such-page/", timeout=30)
    assert page.status_code == 404 and "URLconf" not in page.text and "Traceback" not in page.text
    assert "does not exist" in page.text
    api = httpx.get(f"{base}/api/no-such-thing/", timeout=30)
    assert api.status_code == 404 and api.json()["code"] == "not_found"
    login = httpx.get(f"{base}/accounts/login/", timeout=30)
    assert login.status_code == 200
    stylesheets = [part.split('"')[0] for part in login.text.split('href="/static/')[1:]]
    assert stylesheets and all("." in name for name in stylesheets)
    for name in stylesheets:
        asset = httpx.get(f"{base}/static/{name}", timeout=30)
        assert asset.status_code == 200 and "immutable" in asset.headers.get("Cache-Control", ""), name


def test_production_server_resumes_interrupted_deletions_in_the_background(user, monkeypatch):
    conversation = services.conversation_create(user=user)
    posted = turns.message_post(user=user, conversation_id=conversation.pk, content="I live in Lisbon.")
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[posted.user_message.pk])

    def crash(**kwargs):
        raise RuntimeError("power cut")

    monkeypatch.setattr(execution, "nodes_delete", crash)
    with pytest.raises(RuntimeError):
        forget.forget_confirm(user=user, request_id=preview.pk)
    monkeypatch.undo()
    assert DeletionRequest.objects.get(pk=preview.pk).status == "executing"
    env = app_env(DELLM_FORGET_RESUME_AT_START="1")
    app, base = start_web(env, "web-resume.log")
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and DeletionRequest.objects.get(pk=preview.pk).status != "completed":
            time.sleep(0.3)
        assert DeletionRequest.objects.get(pk=preview.pk).status == "completed", app.output()
        assert not Node.objects.filter(pk=posted.user_message.pk).exists()
    finally:
        app.stop()


# --- Properties ---------------------------------------------------------------------------------

# Text with NUL characters and lone surrogates; any JSON value (huge integers, nested objects); and a field
# value that is mostly text, so the generated requests reach the checks behind the type checks.
alphabet = st.characters(min_codepoint=0, exclude_categories=()) | st.characters(categories=["Cs"]) | st.just("\x00")
texts = st.text(alphabet=alphabet, max_size=40) | st.sampled_from(
    ["", " ", "\x00", "\ud800", "a\udfffb", "Hello there.", "I live in Lisbon.", "Forget that I live in Lisbon."]
)
numbers = st.integers(min_value=-(2**80), max_value=2**80) | st.floats(allow_nan=False, allow_infinity=False)
json_values = st.recursive(
    st.none() | st.booleans() | numbers | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)
fields = texts | json_values
ids = st.integers(min_value=-(2**70), max_value=2**70)


def frame_strategy():
    message = st.fixed_dictionaries(
        {"type": st.just("message"), "content": fields}, optional={"intent": st.just("answer") | fields}
    )
    review = st.fixed_dictionaries({"type": st.just("forget_review"), "content": fields})
    confirm = st.fixed_dictionaries(
        {"type": st.just("forget_confirm"), "request_id": st.uuids().map(str) | fields},
        optional={"keep": st.lists(ids, max_size=3) | fields, "add": st.lists(ids, max_size=3) | fields},
    )
    frames = st.one_of(message, message, review, confirm, st.dictionaries(texts, json_values, max_size=3))
    return frames.map(json.dumps) | json_values.map(json.dumps) | texts


@hypothesis_settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(raw=frame_strategy())
async def test_property_websocket_frames_never_crash_and_refusals_store_nothing(user, raw):
    conversation = await sync_to_async(services.conversation_create)(user=user)
    before = await sync_to_async(Node.objects.count)()
    communicator, connected = await ws_connect(user, conversation.pk)
    assert connected
    try:
        # Sent as the server receives it: the communicator's own helper refuses an empty text frame.
        await communicator.send_input({"type": "websocket.receive", "text": raw})
        frames = await answer_to(communicator, timeout=60)
    finally:
        await communicator.disconnect()
    assert all(f.get("code") != "server_error" for f in frames), frames
    if frames[-1]["type"] in ("error", "forget_preview", "forget_question"):
        assert await sync_to_async(Node.objects.count)() == before, frames
    await sync_to_async(connections.close_all)()  # the test database is dropped at the end of the run


def body_strategy():
    part = st.fixed_dictionaries({"type": st.sampled_from(["text", "image_url"]) | fields}, optional={"text": fields})
    new_turn = st.fixed_dictionaries({"role": st.just("user"), "content": fields | st.lists(part, max_size=3)})
    earlier = st.fixed_dictionaries(
        {"role": st.sampled_from(["assistant", "system", "user"]) | fields}, optional={"content": fields}
    )
    messages = st.builds(lambda before, last: [*before, last], st.lists(earlier, max_size=2), new_turn)
    body = st.fixed_dictionaries(
        {"messages": messages | json_values},
        optional={
            "model": fields,
            "user": fields,
            "stream": st.booleans() | fields,
            "stream_options": st.fixed_dictionaries({}, optional={"include_usage": st.booleans() | fields}) | fields,
            "dellm": st.fixed_dictionaries({}, optional={"intent": st.just("answer") | fields}) | fields,
        },
    )
    return body.map(json.dumps) | json_values.map(json.dumps) | texts


async def _streamed(response) -> bytes:
    """Everything a streaming response sends (the endpoint streams from an asynchronous iterator)."""
    return b"".join([piece async for piece in response.streaming_content])


@hypothesis_settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(raw=body_strategy())
@example(raw='{"messages": [{"role": "user", "content": "0"}], "stream": true}')  # a body that streams a reply
def test_property_v1_bodies_never_crash_and_refusals_store_nothing(user, raw):
    client = Client(raise_request_exception=False)
    before = stored()
    # Bytes as a client could send them: a lone surrogate outside JSON escapes is not valid UTF-8.
    response = v1_post(client, user, raw.encode("utf-8", "surrogatepass"))
    assert response.status_code < 500, response.content[:500]
    if response.status_code >= 400:
        assert stored() == before
        assert response.json()["error"]["type"] == "invalid_request_error"
    elif response.streaming:
        chunks = (async_to_sync(_streamed)(response) if response.is_async
                  else b"".join(response.streaming_content)).decode()
        assert "api_error" not in chunks and "server_error" not in chunks
        assert chunks.rstrip().endswith("data: [DONE]")  # the stream was read to its end
