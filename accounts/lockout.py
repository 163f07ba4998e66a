"""Answers to a sign-in refused by django-axes after too many failures for a username from one address.

The login page and the admin get a page, the API gets ``{"code": "too_many_attempts", "detail": ...}``; both
are 429 with ``Retry-After``. Kept free of DRF views and the app's services: axes imports it lazily."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from rest_framework import exceptions

CODE = "too_many_attempts"


def lockout_seconds() -> int:
    """How long a locked username and address stay refused after their last attempt, in seconds."""
    from axes.helpers import get_cool_off

    cool_off = get_cool_off()
    return int(cool_off.total_seconds()) if cool_off else 0


def lockout_detail() -> str:
    """The sentence shown to a locked-out client."""
    minutes = max(1, round(lockout_seconds() / 60))
    return (
        f"Too many failed sign-in attempts for this username from your address. "
        f"Try again in {minutes} minute{'s' if minutes != 1 else ''}."
    )


class TooManyAttempts(exceptions.Throttled):
    """The API's lockout: 429 with ``Retry-After`` and code ``too_many_attempts``."""

    default_code = CODE

    def __init__(self):
        super().__init__(detail=lockout_detail(), code=CODE)
        self.wait = lockout_seconds()


def lockout_response(request: HttpRequest, original_response=None, credentials=None) -> HttpResponse:
    """``AXES_LOCKOUT_CALLABLE``: JSON under /api/, a page elsewhere."""
    status = settings.AXES_HTTP_RESPONSE_CODE
    if request.path.startswith("/api/"):
        response = JsonResponse({"code": CODE, "detail": lockout_detail()}, status=status)
    else:
        minutes = max(1, round(lockout_seconds() / 60))
        response = render(request, "registration/locked_out.html", {"minutes": minutes}, status=status)
    response["Retry-After"] = str(lockout_seconds())
    return response


def client_username(request: HttpRequest, credentials: dict | None = None) -> object:
    """``AXES_USERNAME_CALLABLE``: the username tried, read as axes reads it, cut to the length its records
    hold. No account has a longer one, so a longer attempt still counts as a failure instead of failing to be
    recorded (a server error on the login page, the admin and the token API)."""
    from axes.models import AccessAttempt

    field = settings.AXES_USERNAME_FORM_FIELD
    username = credentials.get(field) if credentials else getattr(request, "data", request.POST).get(field)
    limit = AccessAttempt._meta.get_field("username").max_length
    return username[:limit] if isinstance(username, str) else username


def forget_failures(request, *, username: str) -> None:
    """After a successful sign-in that does not go through ``login()`` (the token API), drop the failures
    counted for this username from this address, as axes does for ``login()``."""
    if not settings.AXES_RESET_ON_SUCCESS:
        return
    from axes.helpers import get_client_ip_address
    from axes.utils import reset

    reset(ip=get_client_ip_address(request), username=username)


def client_str(username, ip_address, user_agent, path_info, request) -> str:
    """``AXES_CLIENT_STR_CALLABLE``: how axes names a client in the server log, without the username."""
    return f"{{ip_address: {ip_address!r}, path_info: {path_info!r}}}"
