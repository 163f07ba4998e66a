"""Account security: login throttling, revocable login tokens, password change and "log out everywhere",
and an audit log that keeps no username of a deleted account."""

from datetime import timedelta

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from chat import services
from provenance.forgetting.audit import pseudonym
from provenance.models import AuditRecord
from tests.conftest import rows_containing, say

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 5


@pytest.fixture(autouse=True)
def login_limits(settings):
    """A known failure limit and cool-off, whatever the environment says."""
    settings.AXES_FAILURE_LIMIT = LIMIT
    settings.AXES_COOLOFF_TIME = timedelta(minutes=15)


def token_login(client, username, password, ip="127.0.0.1"):
    return client.post("/api/auth/token/", {"username": username, "password": password}, REMOTE_ADDR=ip)


def page_login(client, username, password, ip="127.0.0.1"):
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=ip)


def let_the_lock_expire():
    """Move every recorded failure back past the cool-off, as if the time had passed."""
    from axes.models import AccessAttempt

    AccessAttempt.objects.update(attempt_time=AccessAttempt.objects.first().attempt_time - timedelta(minutes=16))


def with_key(key) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def is_signed_in(client) -> bool:
    return client.get("/account/").status_code == 200


# --- 1. Login throttling --------------------------------------------------------------------------


def test_api_login_is_locked_after_repeated_failures_and_unlocks_later(client, user, make_user):
    statuses = [token_login(client, user.username, f"wrong-{i}").status_code for i in range(100)]
    assert statuses[: LIMIT - 1] == [400] * (LIMIT - 1)
    assert set(statuses[LIMIT:]) == {429}
    locked = token_login(client, user.username, user.raw_password)
    assert locked.status_code == 429 and "token" not in locked.json()
    assert locked.json()["code"] == "too_many_attempts" and locked.json()["detail"]
    assert int(locked["Retry-After"]) > 0
    # The lock is per username and address: the same user elsewhere, and another user here, may sign in.
    assert token_login(client, user.username, user.raw_password, ip="10.9.8.7").status_code == 200
    bob = make_user("bob")
    assert token_login(client, "bob", bob.raw_password).json()["token"] == bob.token

    let_the_lock_expire()
    assert token_login(client, user.username, user.raw_password).json()["token"] == user.token


def test_login_page_is_locked_after_repeated_failures_and_unlocks_later(client, user):
    responses = [page_login(client, user.username, f"wrong-{i}") for i in range(100)]
    assert [r.status_code for r in responses[: LIMIT - 1]] == [200] * (LIMIT - 1)
    assert b"didn't match" in responses[0].content
    assert {r.status_code for r in responses[LIMIT:]} == {429}
    locked = page_login(client, user.username, user.raw_password)
    assert locked.status_code == 429 and not is_signed_in(client)
    text = locked.content.decode()
    assert "Too many failed sign-in attempts" in text and "15 minutes" in text and "<html" in text.lower()
    assert page_login(Client(), user.username, user.raw_password, ip="10.9.8.7").status_code == 302

    let_the_lock_expire()
    assert page_login(client, user.username, user.raw_password).status_code == 302 and is_signed_in(client)


def test_a_successful_login_forgets_earlier_failures(client, user):
    for _ in range(3):
        for _ in range(LIMIT - 1):
            assert token_login(client, user.username, "wrong").status_code == 400
        assert token_login(client, user.username, user.raw_password).status_code == 200
    for _ in range(3):
        for _ in range(LIMIT - 1):
            assert page_login(client, user.username, "wrong").status_code == 200
        assert page_login(client, user.username, user.raw_password).status_code == 302


def test_lockout_through_the_asgi_server(transactional_db):
    """The served app (uvicorn, async middleware) answers the same way: JSON on the API, a page on the form."""
    import re

    import httpx

    from tests.conftest import app_env, start_web

    web, base = start_web(app_env(DELLM_LOGIN_FAILURE_LIMIT=str(LIMIT), DELLM_LOGIN_LOCKOUT_MINUTES="15"),
                          "web-lockout.log")
    try:
        with httpx.Client(base_url=base, timeout=30) as http:
            password = "a-long-passphrase-31"
            assert http.post("/api/auth/signup/", json={"username": "wren", "password": password}).status_code == 201
            api = [http.post("/api/auth/token/", json={"username": "wren", "password": "no"}) for _ in range(LIMIT + 1)]
            assert [r.status_code for r in api] == [400] * (LIMIT - 1) + [429, 429]
            assert api[-1].json()["code"] == "too_many_attempts" and api[-1].headers["Retry-After"] == "900"

            page = http.get("/accounts/login/")
            csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
            form = {"csrfmiddlewaretoken": csrf, "username": "wren", "password": password}
            locked = http.post("/accounts/login/", data=form)
            assert locked.status_code == 429 and "Too many failed sign-in attempts" in locked.text
            assert locked.headers["content-type"].startswith("text/html")
    finally:
        web.stop()


# --- 2. Tokens, password change, log out everywhere -----------------------------------------------


def test_login_token_is_listed_and_can_be_revoked(api, user):
    api.post("/api/tokens/", {"name": "cli"}, format="json")
    listed = api.get("/api/tokens/").json()
    login = next(t for t in listed if t["login_token"])
    assert login["id"] == "login" and login["name"] == "login token" and login["revoked_at"] is None
    assert [t["name"] for t in listed if not t["login_token"]] == ["cli"]
    assert all(user.token not in str(t.values()) for t in listed)  # the key itself is never listed

    revoked = api.post("/api/tokens/login/revoke/")
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] and revoked.json()["login_token"]
    assert with_key(user.token).get("/api/conversations/").status_code == 401
    assert not Token.objects.filter(user=user).exists()

    fresh = token_login(APIClient(), user.username, user.raw_password).json()["token"]
    assert fresh != user.token and with_key(fresh).get("/api/conversations/").status_code == 200
    assert with_key(fresh).post("/api/tokens/nonsense/revoke/").status_code == 404


def test_login_token_on_the_account_page(client, user):
    client.force_login(user)
    page = client.get("/account/").content.decode()
    assert "login token" in page and 'name="token_id" value="login"' in page
    client.post("/account/", {"action": "revoke-token", "token_id": "login"})
    assert not Token.objects.filter(user=user).exists()
    assert client.post("/account/", {"action": "revoke-token", "token_id": "x"}).status_code == 200


def test_password_change_revokes_every_token_and_other_sessions(client, user):
    named = with_key(user.token).post("/api/tokens/", {"name": "cli"}, format="json").json()["key"]
    elsewhere = signed_in(user)
    client.force_login(user)
    new = "a-new-passphrase-7"
    response = client.post(
        "/accounts/password_change/", {"old_password": user.raw_password, "new_password1": new, "new_password2": new}
    )
    assert response.status_code == 302
    for key in (user.token, named):
        assert with_key(key).get("/api/conversations/").status_code == 401, key
    assert is_signed_in(client) and not is_signed_in(elsewhere)
    fresh = token_login(APIClient(), user.username, new).json()["token"]
    listed = with_key(fresh).get("/api/tokens/").json()
    assert {t["name"]: bool(t["revoked_at"]) for t in listed} == {"login token": False, "cli": True}


def test_set_password_anywhere_revokes_tokens_but_a_hash_upgrade_does_not(user, settings):
    login_key = user.token
    named = with_key(login_key).post("/api/tokens/", {"name": "cli"}, format="json").json()["key"]
    # Django re-hashes a password with the preferred hasher when it is checked; that is no change of password.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher", *settings.PASSWORD_HASHERS]
    user = get_user_model().objects.get(pk=user.pk)
    assert user.password.startswith("md5$") and user.check_password(user_password := "correct-horse-battery")
    assert get_user_model().objects.get(pk=user.pk).password.startswith("pbkdf2_sha256$")
    for key in (login_key, named):
        assert with_key(key).get("/api/conversations/").status_code == 200, key

    user.set_password("an-admin-chose-this-1")  # as `manage.py changepassword`, the admin and password reset do
    user.save()
    for key in (login_key, named):
        assert with_key(key).get("/api/conversations/").status_code == 401, key
    assert not user.check_password(user_password)


def test_logout_everywhere_api_ends_sessions_and_tokens(api, user, other_user):
    named = api.post("/api/tokens/", {"name": "cli"}, format="json").json()["key"]
    browsers = [signed_in(user), signed_in(user)]
    theirs = signed_in(other_user)
    response = api.post("/api/account/logout-everywhere/")
    assert response.status_code == 200 and response.json() == {"sessions": 2, "tokens": 2}
    assert not any(is_signed_in(b) for b in browsers) and is_signed_in(theirs)
    for key in (user.token, named):
        assert with_key(key).get("/api/conversations/").status_code == 401
    assert with_key(other_user.token).get("/api/conversations/").status_code == 200


def test_logout_everywhere_button(client, user):
    other_browser = signed_in(user)
    client.force_login(user)
    assert 'id="logout-everywhere"' in client.get("/account/").content.decode()
    response = client.post("/account/", {"action": "logout-everywhere"})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not is_signed_in(client) and not is_signed_in(other_browser)
    assert with_key(user.token).get("/api/conversations/").status_code == 401


def test_openapi_schema_documents_the_token_ids():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    revoke = schema["paths"]["/api/tokens/{token_id}/revoke/"]["post"]
    assert "login" in str(revoke["parameters"]) and "/api/account/logout-everywhere/" in schema["paths"]


# --- 3. The audit log of a deleted account ---------------------------------------------------------


def test_deleted_account_leaves_no_username_in_audit_or_admin(make_user, client):
    username = "zephyrine-quill"
    person = make_user(username)
    conversation = services.conversation_create(user=person)
    say(person, conversation, "My cat is called Zanzibar.")
    page_login(Client(), username, "wrong")  # a failed sign-in is recorded under the username
    from django.contrib.admin.models import CHANGE, LogEntry
    from django.contrib.contenttypes.models import ContentType

    root = get_user_model().objects.create_superuser("root", "root@example.com", "a-root-passphrase-1")
    LogEntry.objects.create(user=root, content_type=ContentType.objects.get_for_model(person),
                            object_id=str(person.pk), object_repr=username, action_flag=CHANGE)
    ref = pseudonym("user", person.pk)
    assert with_key(person.token).post("/api/account/delete/", {"password": person.raw_password},
                                       format="json").status_code == 200

    assert "requester_username" not in {f.name for f in AuditRecord._meta.get_fields()}
    audit = AuditRecord.objects.get(mode="account")
    assert audit.requester_ref == ref
    assert rows_containing(username) == {}

    client.force_login(root)
    urls = ["/admin/", f"/admin/provenance/auditrecord/{audit.pk}/change/"]
    for model in admin.site._registry:
        urls.append(f"/admin/{model._meta.app_label}/{model._meta.model_name}/")
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        assert username not in response.content.decode(), url
    listing = client.get("/admin/provenance/auditrecord/").content.decode()
    assert ref in listing and "requester username" not in listing.lower()
    assert ref in client.get(f"/admin/provenance/auditrecord/?q={ref[:8]}").content.decode()
    assert "0 results" in client.get(f"/admin/provenance/auditrecord/?q={username}").content.decode()


def test_migration_clears_and_drops_the_stored_usernames():
    executor = MigrationExecutor(connection)
    before = ("provenance", "0003_move_edge_to_memory")
    try:
        executor.migrate([before])
        OldAudit = executor.loader.project_state([before]).apps.get_model("provenance", "AuditRecord")
        from django.utils import timezone

        OldAudit.objects.create(request_id="4c1d1f6e-8d2b-4f8a-9a57-0b7c9e3f2a11", requester_ref="r" * 20,
                                requester_username="ottoline-vex", mode="account", status="completed",
                                requested_at=timezone.now())
        assert rows_containing("ottoline-vex")
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
    with connection.cursor() as cursor:
        columns = {c.name for c in connection.introspection.get_table_description(cursor, "provenance_auditrecord")}
    assert "requester_username" not in columns
    assert rows_containing("ottoline-vex") == {}
    assert AuditRecord.objects.get().requester_ref == "r" * 20


@pytest.mark.parametrize("sign_in", [token_login, page_login])
def test_a_username_longer_than_any_account_is_refused_not_a_server_error(client, sign_in):
    from axes.models import AccessAttempt

    response = sign_in(client, "u" * 300, "whatever-password")
    assert response.status_code in (200, 400)  # the page shows its form again; the API says why
    if sign_in is token_login:
        assert "username" in response.json()["fields"]
    assert AccessAttempt.objects.count() <= 1
