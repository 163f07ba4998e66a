"""Checks every transport applies to text a user sends (chat messages, corrections, queries)."""

from __future__ import annotations

from django.conf import settings

from dellm_site.errors import ApplicationError


def text_validate(*, content: object) -> str:
    """The text, stripped; empty, non-text or over-long input is refused with a clear error."""
    if not isinstance(content, str):
        raise ApplicationError("content must be a string.", code="invalid")
    content = content.strip()
    if not content:
        raise ApplicationError("The message is empty.", code="empty_message")
    limit = settings.DELLM_MAX_MESSAGE_CHARS
    if len(content) > limit:
        raise ApplicationError(
            f"The message is {len(content)} characters long; the limit is {limit}.", code="message_too_long"
        )
    return content
