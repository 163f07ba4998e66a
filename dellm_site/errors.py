"""One application error type, mapped to JSON by one DRF exception handler."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404, JsonResponse
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler


class ApplicationError(Exception):
    """A failure the user can act on: carries a machine code, a readable detail and an HTTP status."""

    def __init__(self, detail: str, *, code: str = "invalid", status: int = 400, extra: dict | None = None):
        super().__init__(detail)
        self.detail = detail
        self.code = code
        self.status = status
        self.extra = extra or {}

    def as_dict(self) -> dict:
        return {"code": self.code, "detail": self.detail, **self.extra}


class NotFound(ApplicationError):
    def __init__(self, what: str = "Not found."):
        super().__init__(what, code="not_found", status=404)


def is_api_path(path: str) -> bool:
    """Paths answered in JSON, errors included: the REST API and the OpenAI-compatible endpoint."""
    return path.startswith(("/api/", "/v1/"))


def json_error(path: str, error: ApplicationError) -> JsonResponse:
    """``error`` in the shape the path's clients read: OpenAI's ``{"error": {...}}`` under /v1/, else ours."""
    if path.startswith("/v1/"):
        kind = "invalid_request_error" if error.status < 500 else "api_error"
        body = {"error": {"message": error.detail, "type": kind, "param": None, "code": error.code}}
        return JsonResponse(body, status=error.status)
    return JsonResponse(error.as_dict(), status=error.status)


def too_large() -> ApplicationError:
    """The refusal of a request body over DATA_UPLOAD_MAX_MEMORY_SIZE (413)."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return ApplicationError(f"The request body is larger than {limit} bytes.", code="too_large", status=413)


def api_exception_handler(exc, context):
    """Every API error becomes ``{"code", "detail", ...}`` with a 4xx/5xx status, never a stack trace."""
    if isinstance(exc, RequestDataTooBig):
        exc = too_large()
    if isinstance(exc, ApplicationError):
        return Response(exc.as_dict(), status=exc.status)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        fields = response.data if isinstance(response.data, dict) else {"non_field_errors": response.data}
        first = next(iter(fields.items()), ("", [""]))
        message = first[1][0] if isinstance(first[1], list) and first[1] else str(first[1])
        detail = f"{first[0]}: {message}" if first[0] else message
        response.data = {"code": "invalid", "detail": detail, "fields": fields}
    else:
        detail = response.data.get("detail", "") if isinstance(response.data, dict) else str(response.data)
        code = getattr(detail, "code", None) or getattr(exc, "default_code", "error")
        response.data = {"code": str(code), "detail": str(detail)}
    if response.status_code >= 500:
        response.status_code = status.HTTP_500_INTERNAL_SERVER_ERROR
    return response
