"""Account services shared by the sign-up page and the sign-up API."""

from __future__ import annotations

from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.db import transaction
from rest_framework.authtoken.models import Token

from dellm_site.errors import ApplicationError


@transaction.atomic
def account_create(*, username: str, password: str):
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


def account_export(*, user) -> dict:
    """Everything DeLLM holds about the user, as JSON-ready data: conversations, messages (with
    their context), facts, summaries, provenance edges, deletion manifests and token names."""
    from chat.models import ApiToken, Conversation, Message
    from memory.derived import memory_overview
    from provenance.models import DeletionRequest, DeletionStatus, Edge
    from provenance.selectors import context_ids

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
            r.manifest for r in DeletionRequest.objects.filter(owner=user, status=DeletionStatus.COMPLETED).order_by("created_at")
        ],
        "api_tokens": [
            {"name": t.name, "prefix": t.prefix, "created_at": t.created_at.isoformat(),
             "revoked_at": t.revoked_at.isoformat() if t.revoked_at else None}
            for t in ApiToken.objects.filter(owner=user)
        ],
    }


def account_delete(*, user, password: str) -> dict:
    """Delete the account and everything in it through the same cascade as any forget request
    (so the audit log records it), then the user itself. Returns the deletion manifest; the
    audit record outlives the account and holds no content."""
    from chat.models import Conversation
    from memory.models import Node
    from provenance import forget
    from provenance.models import DeletionRequest, DeletionStatus

    if not user.check_password(password or ""):
        raise ApplicationError("The password is not correct.", code="wrong_password", status=403)
    node_ids = list(Node.objects.for_user(user).values_list("pk", flat=True))
    manifest = {"deleted": {"messages": 0}, "verification": {"residual_hits": 0}}
    if node_ids:
        preview = forget.forget_preview(user=user, mode="ids", message_ids=node_ids)
        DeletionRequest.objects.filter(pk=preview.pk).update(mode="account")
        manifest = forget.forget_confirm(user=user, request_id=preview.pk)
    with transaction.atomic():
        # Unfinished previews still hold the words of their request: they go with the account.
        DeletionRequest.objects.filter(owner=user).exclude(status=DeletionStatus.COMPLETED).delete()
        Conversation.objects.filter(owner=user).delete()
        user.delete()
    return manifest
