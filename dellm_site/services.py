"""Account services shared by the sign-up page and the sign-up API."""

from __future__ import annotations

from django.contrib.auth import get_user_model, password_validation
from django.core.exceptions import ValidationError
from django.db import transaction
from rest_framework.authtoken.models import Token

from dellm_site.errors import ApplicationError


@transaction.atomic
def account_create(*, username: str, password: str):
    """Create a user (Django's username rules and password validators apply) and its API token."""
    User = get_user_model()
    username = username.strip()
    field = User._meta.get_field("username")
    try:
        field.run_validators(username)
    except ValidationError as exc:
        raise ApplicationError(" ".join(exc.messages), code="invalid_username") from None
    if User.objects.filter(username__iexact=username).exists():
        raise ApplicationError("That username is taken.", code="username_taken", status=409)
    user = User(username=username)
    try:
        password_validation.validate_password(password, user)
    except ValidationError as exc:
        raise ApplicationError(" ".join(exc.messages), code="weak_password") from None
    user.set_password(password)
    user.save()
    return user, Token.objects.create(user=user).key
