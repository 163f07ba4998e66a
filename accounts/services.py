"""Account services: sign-up, named API tokens, data export and account deletion."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from rest_framework.authtoken.models import Token

from chat.models import Conversation, Message
from dellm_site.errors import ApplicationError, NotFound
from dellm_site.validation import id_value, text_check
from memory.graph import context_ids
from memory.models import Edge, Node
from memory.selectors import memory_overview
from provenance.forgetting import services as forget
from provenance.models import DeletionRequest, DeletionStatus

from .authentication import KEY_PREFIX, digest
from .models import ApiToken
from .selectors import token_list

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
    contexts = context_ids(node_ids=[m.pk for m in messages])
    return {
        "format": "dellm-export-1",
        "user": {"username": user.get_username(), "date_joined": user.date_joined.isoformat()},
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
            for src, dst in Edge.objects.filter(dst__owner=user).order_by("pk").values_list("src_id", "dst_id")
        ],
        "deletions": [
            r.manifest
            for r in DeletionRequest.objects.filter(owner=user, status=DeletionStatus.COMPLETED).order_by("created_at")
        ],
        "api_tokens": [
            {"name": t.name, "prefix": t.prefix, "created_at": t.created_at.isoformat(),
             "revoked_at": t.revoked_at.isoformat() if t.revoked_at else None}
            for t in token_list(user=user)
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
        user.delete()
    return manifest


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
def token_revoke(*, user: AbstractUser, token_id: int | str | None) -> ApiToken:
    """Revoke one of the user's tokens; it is refused from then on."""
    token = ApiToken.objects.select_for_update().filter(owner=user, pk=id_value(token_id)).first()
    if token is None:
        raise NotFound("Token not found.")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token
