"""DRF authentication with API keys: ``Authorization: Token <key>`` or ``Bearer <key>``.

Kept free of project imports that load DRF views, since DRF imports this while loading its settings.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from django.utils import timezone
from rest_framework import authentication, exceptions

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser
    from rest_framework.authtoken.models import Token

    from .models import ApiToken

KEY_PREFIX = "dllm-"


def digest(key: str) -> str:
    """The stored form of a key: its SHA-256, hex."""
    return hashlib.sha256(key.encode()).hexdigest()


def token_user(key: str) -> tuple[AbstractBaseUser, ApiToken | Token] | None:
    """(user, token) for a key, or None. Accepts named tokens and the account's login token."""
    if not key:
        return None
    from rest_framework.authtoken.models import Token

    from .models import ApiToken

    if key.startswith(KEY_PREFIX):
        token = ApiToken.objects.select_related("owner").filter(digest=digest(key), revoked_at__isnull=True).first()
        if token is None or not token.owner.is_active:
            return None
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=timezone.now())
        return token.owner, token
    legacy = Token.objects.select_related("user").filter(key=key).first()
    if legacy is None or not legacy.user.is_active:
        return None
    return legacy.user, legacy


class ApiTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Token <key>`` or ``Authorization: Bearer <key>`` (what OpenAI clients send)."""

    keywords = ("token", "bearer")

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1").split()
        if not header or header[0].lower() not in self.keywords:
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Invalid Authorization header: expected '<scheme> <key>'.")
        found = token_user(header[1])
        if found is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked API key.")
        return found

    def authenticate_header(self, request):
        return "Bearer"
