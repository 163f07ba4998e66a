"""Temporary chats: never remembered, and forgotten, through the Forget flow (so the audit log records it),
when the user discards one or once it has been idle for DELLM_TEMPORARY_CHAT_HOURS."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils import timezone

from dellm_site.errors import ApplicationError
from dellm_site.types import AnyId
from provenance.forgetting.services import forget_confirm, forget_preview

from .models import Conversation
from .selectors import conversation_get

if TYPE_CHECKING:
    from dellm_site.types import User


def conversation_discard(*, user: User, conversation_id: AnyId) -> dict:
    """Forget a temporary chat with everything in it (preview and confirm at once); returns the manifest."""
    conversation = conversation_get(user=user, conversation_id=conversation_id)
    if not conversation.temporary:
        raise ApplicationError(
            "Only a temporary chat is discarded; delete this conversation through the Forget panel.",
            code="not_temporary",
            status=409,
        )
    preview = forget_preview(user=user, mode="conversation", conversation_id=conversation.pk)
    return forget_confirm(user=user, request_id=preview.pk)


def temporary_conversations_expire(*, user: User | None = None) -> int:
    """Discard every temporary chat idle for DELLM_TEMPORARY_CHAT_HOURS (only ``user``'s when given); returns
    how many."""
    cutoff = timezone.now() - timedelta(hours=settings.DELLM_TEMPORARY_CHAT_HOURS)
    idle = Conversation.objects.filter(temporary=True, updated_at__lte=cutoff).select_related("owner")
    if user is not None:
        idle = idle.filter(owner=user)
    count = 0
    for conversation in idle:
        conversation_discard(user=conversation.owner, conversation_id=conversation.pk)
        count += 1
    return count
