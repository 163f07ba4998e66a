"""Account services: sign-up, API tokens, signing out everywhere, data export and account deletion."""

from __future__ import annotations

import secrets
from importlib import import_module
from typing import TYPE_CHECKING, Any

from axes.models import AccessAttempt, AccessFailureLog, AccessLog
from django.conf import settings
from django.contrib.admin.models import LogEntry
from django.contrib.auth import SESSION_KEY, get_user_model, password_validation
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ImproperlyConfigured, ValidationError
from django.db import transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token

from chat.models import Conversation, Message
from dellm_site.errors import ApplicationError, NotFound
from dellm_site.validation import id_value, text_check
from memory.graph import context_ids
from memory.models import Edge, Node
from memory.preferences import memory_enabled
from memory.selectors import memory_overview
from provenance.forgetting import services as forget
from provenance.models import DeletionRequest, DeletionStatus

from .authentication import KEY_PREFIX, digest
from .models import ApiToken
from .selectors import LOGIN_TOKEN_ID, TokenEntry, token_entries

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractUser


@transaction.atomic
def account_create(*, username: str, password: str) -> tuple[AbstractUser, str]:
    """Create a user (Django's username rules and password validators apply) and its API token."""
    User = get_user_model()
    username = username.strip()
    field = User._meta.get_field("username")
    try:
        field.run_validators(username)
    except ValidationError as exc:
        raise ApplicationError(" ".join(exc.messages), code="invalid_username") from None
    if User.objects.filter(username__iexact=username).exists():
        raise ApplicationError("That username is taken.", code="username_taken", status=409)
    user = User(username=username)
    try:
        password_validation.validate_password(password, user)
    except ValidationError as exc:
        raise ApplicationError(" ".join(exc.messages), code="weak_password") from None
    user.set_password(password)
    user.save()
    return user, Token.objects.create(user=user).key


def account_export(*, user: AbstractUser) -> dict[str, Any]:
    """Everything DeLLM holds about the user, as JSON-ready data: conversations, messages (with
    their context), facts, summaries, provenance edges, deletion manifests and token names."""
    messages = list(Message.objects.filter(owner=user).order_by("pk"))
    contexts = context_ids(node_ids=[m.pk for m in messages], owner=user)
    return {
        "format": "dellm-export-1",
        "user": {"username": user.get_username(), "date_joined": user.date_joined.isoformat(),
                 "memory_enabled": memory_enabled(user=user)},
        "conversations": [
            {"id": c.pk, "title": c.title, "created_at": c.created_at.isoformat()}
            for c in Conversation.objects.filter(owner=user).order_by("pk")
        ],
        "messages": [
            {"id": m.pk, "conversation": m.conversation_id, "role": m.role, "content": m.content,
             "created_at": m.created_at.isoformat(), "context": contexts[m.pk]}
            for m in messages
        ],
        **memory_overview(user=user),
        "edges": [
            {"src": src, "dst": dst}
            for src, dst in Edge.objects.for_user(user).order_by("pk").values_list("src_id", "dst_id")
        ],
        "deletions": [
            r.manifest
            for r in DeletionRequest.objects.filter(owner=user, status=DeletionStatus.COMPLETED).order_by("created_at")
        ],
        "api_tokens": [
            {"name": t.name, "prefix": t.prefix, "created_at": t.created_at.isoformat(),
             "revoked_at": t.revoked_at.isoformat() if t.revoked_at else None, "login_token": t.login_token}
            for t in token_entries(user=user)
        ],
    }


def account_delete(*, user: AbstractUser, password: str) -> dict[str, Any]:
    """Delete the account and everything in it through the same cascade as any forget request
    (so the audit log records it), then the user itself. Returns the deletion manifest; the
    audit record outlives the account and holds no content."""
    if not user.check_password(password or ""):
        raise ApplicationError("The password is not correct.", code="wrong_password", status=403)
    manifest = {"deleted": {"messages": 0}, "verification": {"residual_hits": 0}}
    if Node.objects.for_user(user).exists():
        preview = forget.forget_preview(user=user, mode="account")
        manifest = forget.forget_confirm(user=user, request_id=preview.pk)
    with transaction.atomic():
        # Unfinished previews still hold the words of their request: they go with the account.
        DeletionRequest.objects.filter(owner=user).exclude(status=DeletionStatus.COMPLETED).delete()
        Conversation.objects.filter(owner=user).delete()
        _forget_identifiers(user)
        sessions_end_all(user=user)
        user.delete()
    return manifest


def _forget_identifiers(user: AbstractUser) -> None:
    """Records outside the account that name it in clear: the admin's history of changes to it and the
    sign-in attempts counted under its username."""
    LogEntry.objects.filter(content_type=ContentType.objects.get_for_model(user), object_id=str(user.pk)).delete()
    username = user.get_username()
    for model in (AccessAttempt, AccessFailureLog, AccessLog):
        model.objects.filter(username=username).delete()


@transaction.atomic
def token_create(*, user: AbstractUser, name: str) -> tuple[ApiToken, str]:
    """Create a named token; returns it and its key (the only time the key is available)."""
    name = text_check(name or "", field="name").strip()
    if not name:
        raise ApplicationError("Give the token a name, e.g. the client that will use it.", code="invalid")
    if len(name) > 100:
        raise ApplicationError("The name is longer than 100 characters.", code="invalid")
    key = KEY_PREFIX + secrets.token_urlsafe(30)
    token = ApiToken.objects.create(owner=user, name=name, prefix=key[: len(KEY_PREFIX) + 6], digest=digest(key))
    return token, key


@transaction.atomic
def token_revoke(*, user: AbstractUser, token_id: int | str | None) -> TokenEntry:
    """Revoke one of the user's tokens: a named token by its integer id, or the login token by ``"login"``
    (it is deleted; ``POST /api/auth/token/`` makes a new one). It is refused from then on."""
    token_id = str(token_id or "")
    if token_id == LOGIN_TOKEN_ID:
        login = Token.objects.select_for_update().filter(user=user).first()
        if login is None:
            raise NotFound("Token not found.")
        entry = TokenEntry.of_login(login, revoked_at=timezone.now())
        login.delete()
        return entry
    token = ApiToken.objects.select_for_update().filter(owner=user, pk=id_value(token_id)).first()
    if token is None:
        raise NotFound("Token not found.")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return TokenEntry.of_named(token)


@transaction.atomic
def tokens_revoke_all(*, user: AbstractUser) -> int:
    """Revoke every token of the user, named ones and the login token; returns how many were still valid."""
    named = ApiToken.objects.filter(owner=user, revoked_at__isnull=True).update(revoked_at=timezone.now())
    login, _ = Token.objects.filter(user=user).delete()
    return named + login


def sessions_end_all(*, user: AbstractUser) -> int:
    """End every signed-in session of the user; returns how many. Needs a database-backed session engine
    (Django's default), the only kind whose sessions can be found by user."""
    store = import_module(settings.SESSION_ENGINE).SessionStore
    if not hasattr(store, "get_model_class"):
        raise ImproperlyConfigured("Ending a user's sessions needs a database-backed SESSION_ENGINE.")
    ended = 0
    rows = store.get_model_class().objects.filter(expire_date__gt=timezone.now())
    for key, data in rows.values_list("session_key", "session_data").iterator():
        if store().decode(data).get(SESSION_KEY) == str(user.pk):
            store(session_key=key).delete()
            ended += 1
    return ended


def logout_everywhere(*, user: AbstractUser) -> dict[str, int]:
    """Sign the user out of every browser and client: end all sessions and revoke all tokens."""
    return {"sessions": sessions_end_all(user=user), "tokens": tokens_revoke_all(user=user)}
