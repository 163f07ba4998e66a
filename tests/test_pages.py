"""Server-rendered pages, sign-up (page and API), the demo script, and production settings."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from chat import services, turns
from chat.models import Conversation

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent


def test_signup_page_logs_in_and_shows_the_chat(client):
    response = client.post(
        "/accounts/signup/",
        {"username": "newbie", "password1": "a-long-passphrase-9", "password2": "a-long-passphrase-9"},
    )
    assert response.status_code == 302
    page = client.get("/", follow=True)
    assert page.status_code == 200 and b"New conversation" in page.content and b"newbie" in page.content


def test_chat_page_lists_messages_and_hides_others(client, user, other_user):
    conversation = services.conversation_create(user=user)
    turns.message_post(user=user, conversation_id=conversation.pk, content="I live in Lisbon.")
    client.force_login(user)
    page = client.get(f"/c/{conversation.pk}/")
    assert page.status_code == 200
    assert b"I live in Lisbon." in page.content and b"Noted" in page.content
    client.force_login(other_user)
    page = client.get(f"/c/{conversation.pk}/")
    assert page.status_code == 404 and b"Lisbon" not in page.content


def test_visitor_sees_what_dellm_is_then_logs_in(client):
    page = client.get("/")
    assert page.status_code == 200 and b"forgets on request" in page.content
    assert b'href="/accounts/signup/"' in page.content and b'href="/accounts/login/"' in page.content
    assert client.get("/memory/").status_code == 302
    assert client.get("/accounts/login/").status_code == 200


def test_new_conversation_button(client, user):
    client.force_login(user)
    response = client.post("/c/new/")
    conversation = Conversation.objects.get(owner=user)
    assert response.status_code == 302 and response["Location"] == f"/c/{conversation.pk}/"


def test_signup_api(client):
    response = client.post(
        "/api/auth/signup/", {"username": "apiuser", "password": "another-long-pass-5"}, content_type="application/json"
    )
    assert response.status_code == 201 and response.json()["token"]
    again = client.post(
        "/api/auth/signup/", {"username": "APIUSER", "password": "another-long-pass-5"}, content_type="application/json"
    )
    assert again.status_code == 409 and again.json()["code"] == "username_taken"
    weak = client.post("/api/auth/signup/", {"username": "weak", "password": "123"}, content_type="application/json")
    assert weak.status_code == 400 and weak.json()["code"] == "weak_password"


def test_healthz(client):
    assert client.get("/healthz").json()["database"] == "ok"


def test_demo_script_against_a_live_server(live_app):
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts/demo.py"), live_app], capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("PASS") == 3


def test_production_mode_refuses_to_start_without_secret_key():
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    env.update({"DJANGO_DEBUG": "0", "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none"})
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django, os; os.environ.setdefault('DJANGO_SETTINGS_MODULE','dellm_site.settings'); django.setup()",
        ],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode != 0 and "SECRET_KEY is not set" in result.stderr


def test_deploy_check_is_clean_in_production_settings():
    env = dict(os.environ)
    env.update({
        "DJANGO_DEBUG": "0", "SECRET_KEY": "x" * 30 + "-production-grade-secret-key-value-1234567890",
        "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none", "ALLOWED_HOSTS": "dellm.example.com",
        "SECURE_SSL_REDIRECT": "1", "SECURE_HSTS_SECONDS": "31536000", "SECURE_HSTS_PRELOAD": "1",
    })
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_signed_in_pages_are_not_cached(client, user):
    client.force_login(user)
    assert client.get("/").headers["Cache-Control"] == "no-store"
