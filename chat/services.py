"""Writes of conversations (a turn's writes are in ``turns``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from dellm_site.errors import ApplicationError
from dellm_site.types import AnyId
from dellm_site.validation import text_check

from .models import Conversation
from .selectors import conversation_get

if TYPE_CHECKING:
    from dellm_site.types import User

TITLE_LENGTH = 60


def conversation_title_from(content: str) -> str:
    """A conversation is titled after its first user message."""
    return content[:TITLE_LENGTH]


@transaction.atomic
def conversation_create(*, user: User, title: str = "", temporary: bool = False) -> Conversation:
    """Start a new conversation for the user (``temporary``: one that is never remembered)."""
    title = text_check(title or "", field="title").strip()
    if len(title) > 200:
        raise ApplicationError("The title is longer than 200 characters.", code="invalid")
    return Conversation.objects.create(owner=user, title=title, temporary=bool(temporary))


@transaction.atomic
def conversation_rename(*, user: User, conversation_id: AnyId, title: object) -> Conversation:
    """Give one of the user's conversations a title of their choosing (blank: untitled)."""
    title = text_check(title if isinstance(title, str) else "", field="title").strip()
    if len(title) > 200:
        raise ApplicationError("The title is longer than 200 characters.", code="invalid")
    conversation = conversation_get(user=user, conversation_id=conversation_id)
    conversation.title = title
    conversation.save(update_fields=["title"])
    return conversation


@transaction.atomic
def conversation_for_client(
    *, user: User, token: object | None = None, conversation_id: AnyId | None = None, client_user: str | None = None
) -> Conversation:
    """The conversation an OpenAI-compatible client is talking in: the one named by id, else the
    one keyed by the client's ``user`` field, else the token's own (created on first use)."""
    if conversation_id not in (None, ""):
        return conversation_get(user=user, conversation_id=conversation_id)
    if client_user not in (None, ""):
        client_user = text_check(client_user, field="user")
        key, title = f"user:{client_user[:180]}", f"API: {client_user[:60]}"
    else:
        token_name = getattr(token, "name", None) or "login token"
        key, title = f"token:{getattr(token, 'pk', 'login')}", f"API: {token_name}"[:200]
    conversation, _ = Conversation.objects.get_or_create(owner=user, external_key=key, defaults={"title": title})
    return conversation
