"""The per-user memory switch: read by every turn, set from the account page and the API."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import transaction

from .models import MemoryPreference

if TYPE_CHECKING:
    from dellm_site.types import User


def memory_enabled(*, user: User) -> bool:
    """Whether the user's turns read from memory and derive facts and summaries (on unless turned off)."""
    return MemoryPreference.objects.filter(owner=user).values_list("enabled", flat=True).first() is not False


@transaction.atomic
def memory_preference_set(*, user: User, enabled: bool) -> bool:
    """Turn the user's memory on or off; returns the new state."""
    MemoryPreference.objects.update_or_create(owner=user, defaults={"enabled": bool(enabled)})
    return bool(enabled)
