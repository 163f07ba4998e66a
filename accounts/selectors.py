"""Reads over an account's API tokens, always scoped to their owner."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db.models import QuerySet

from .models import ApiToken

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


def token_list(*, user: AbstractBaseUser) -> QuerySet[ApiToken]:
    """The user's API tokens, revoked ones included, newest first."""
    return ApiToken.objects.filter(owner=user)

