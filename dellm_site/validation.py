"""Checks every transport applies to what a user sends (chat messages, corrections, queries, names, ids).

Text PostgreSQL cannot store (NUL characters, lone surrogates) and numbers past its columns are refused
here, as a 4xx reason, before anything is written.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework import serializers

from dellm_site.errors import ApplicationError

# Largest id PostgreSQL's bigint holds; larger ones can name nothing.
MAX_ID = 2**63 - 1
# Deepest provenance walk a forget request may ask for.
MAX_DEPTH = 1000


def text_problem(value: str) -> str | None:
    """Why PostgreSQL could not store ``value`` (a NUL character, a lone surrogate), or None when it can."""
    if "\x00" in value:
        return "may not contain NUL characters"
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # only lone surrogates (U+D800..U+DFFF) fail to encode
            return "may not contain lone surrogates (U+D800..U+DFFF)"
    return None


def text_check(value: object, *, field: str = "content") -> str:
    """``value`` unchanged when it is text PostgreSQL can store; anything else is refused (code ``invalid``)."""
    if not isinstance(value, str):
        raise ApplicationError(f"{field} must be a string.", code="invalid")
    problem = text_problem(value)
    if problem:
        raise ApplicationError(f"{field} {problem}.", code="invalid")
    return value


def text_validate(*, content: object) -> str:
    """The text, stripped; empty, non-text, unstorable or over-long input is refused with a clear error."""
    content = text_check(content).strip()
    if not content:
        raise ApplicationError("The message is empty.", code="empty_message")
    limit = settings.DELLM_MAX_MESSAGE_CHARS
    if len(content) > limit:
        raise ApplicationError(
            f"The message is {len(content)} characters long; the limit is {limit}.", code="message_too_long"
        )
    return content


def id_value(value: object) -> int | None:
    """``value`` as an id that could exist (an int, or a string of digits, from 1 to MAX_ID), else None."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 19:
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_ID:
        return value
    return None


class IdField(serializers.IntegerField):
    """A REST field for an id: an integer from 1 to PostgreSQL's largest bigint."""

    def __init__(self, **kwargs):
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(**kwargs)
