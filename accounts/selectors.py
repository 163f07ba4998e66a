"""Reads over an account's API tokens, always scoped to their owner.

An account has named tokens (``ApiToken``, id an integer) and at most one login token (DRF's ``Token``, made at
sign-up and by ``POST /api/auth/token/``), listed with the id ``"login"``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from django.db.models import QuerySet
from rest_framework.authtoken.models import Token

from .models import ApiToken

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser

LOGIN_TOKEN_ID = "login"
LOGIN_TOKEN_NAME = "login token"


@dataclass(frozen=True)
class TokenEntry:
    """One row of the token list: a named token or the login token, never its key."""

    id: int | str
    name: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None
    login_token: bool

    @classmethod
    def of_named(cls, token: ApiToken) -> TokenEntry:
        """The entry of a named token."""
        return cls(token.pk, token.name, token.prefix, token.created_at, token.last_used_at, token.revoked_at, False)

    @classmethod
    def of_login(cls, token: Token, *, revoked_at: datetime | None = None) -> TokenEntry:
        """The entry of the login token (its use is not tracked)."""
        return cls(LOGIN_TOKEN_ID, LOGIN_TOKEN_NAME, token.key[:6], token.created, None, revoked_at, True)


def token_list(*, user: AbstractBaseUser) -> QuerySet[ApiToken]:
    """The user's named API tokens, revoked ones included, newest first."""
    return ApiToken.objects.filter(owner=user)


def token_entries(*, user: AbstractBaseUser) -> list[TokenEntry]:
    """Every token of the user: the login token first (while there is one), then the named ones, newest first."""
    login = Token.objects.filter(user=user).first()
    named = [TokenEntry.of_named(t) for t in token_list(user=user)]
    return ([TokenEntry.of_login(login)] if login else []) + named
