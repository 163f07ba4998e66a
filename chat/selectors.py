"""Reads over conversations and messages, always scoped to their owner."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import Q, QuerySet

from dellm_site.errors import NotFound
from dellm_site.types import AnyId

from .models import Conversation, Message

if TYPE_CHECKING:
    from dellm_site.types import User


def conversation_list(*, user: User, query: str = "") -> QuerySet[Conversation]:
    """The user's conversations, most recently active first; with ``query``, those whose title or one
    of whose messages contains it."""
    conversations = Conversation.objects.for_user(user)
    if query.strip():
        words = query.strip()
        matching = Message.objects.filter(owner=user, content__icontains=words).values("conversation_id")
        conversations = conversations.filter(Q(title__icontains=words) | Q(pk__in=matching))
    return conversations


def conversation_get(*, user: User, conversation_id: AnyId) -> Conversation:
    """One of the user's conversations; anyone else's, or a missing one, is a 404."""
    try:
        return Conversation.objects.for_user(user).get(pk=int(conversation_id))
    except (Conversation.DoesNotExist, TypeError, ValueError):
        raise NotFound("Conversation not found.") from None


def message_list(*, user: User, conversation_id: AnyId, after: int | None = None) -> QuerySet[Message]:
    """The messages of one of the user's conversations, oldest first (only those after message ``after``)."""
    conversation = conversation_get(user=user, conversation_id=conversation_id)
    messages = Message.objects.filter(conversation=conversation, owner=user).order_by("node_ptr_id")
    return messages.filter(node_ptr_id__gt=after) if after else messages


def message_get(*, user: User, message_id: AnyId) -> Message:
    """One of the user's messages; anyone else's, or a missing one, is a 404."""
    try:
        return Message.objects.for_user(user).get(pk=int(message_id))
    except (Message.DoesNotExist, TypeError, ValueError):
        raise NotFound("Message not found.") from None
