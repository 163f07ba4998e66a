"""Named API tokens: creation and revocation (authentication lives in chat.authentication)."""

from __future__ import annotations

import secrets

from django.db import transaction
from django.utils import timezone

from dellm_site.errors import ApplicationError, NotFound

from .authentication import KEY_PREFIX, digest
from .models import ApiToken


@transaction.atomic
def token_create(*, user, name: str) -> tuple[ApiToken, str]:
    """Create a named token; returns it and its key (the only time the key is available)."""
    name = (name or "").strip()
    if not name:
        raise ApplicationError("Give the token a name, e.g. the client that will use it.", code="invalid")
    if len(name) > 100:
        raise ApplicationError("The name is longer than 100 characters.", code="invalid")
    key = KEY_PREFIX + secrets.token_urlsafe(30)
    token = ApiToken.objects.create(owner=user, name=name, prefix=key[: len(KEY_PREFIX) + 6], digest=digest(key))
    return token, key


@transaction.atomic
def token_revoke(*, user, token_id) -> ApiToken:
    """Revoke one of the user's tokens; it is refused from then on."""
    token = ApiToken.objects.select_for_update().filter(owner=user, pk=token_id).first()
    if token is None:
        raise NotFound("Token not found.")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token
