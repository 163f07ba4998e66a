"""Site-wide views: health, and the error pages (JSON on API and /v1 paths)."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import connection
from django.http import HttpResponseServerError, JsonResponse
from django.shortcuts import render
from django.template import loader
from django.views import defaults
from django.views.decorators.http import require_GET

from dellm_site.errors import ApplicationError, is_api_path, json_error, too_large
from dellm_site.warmup import warm_state


def _probe(check) -> str:
    try:
        return check()
    except Exception as exc:  # report, don't crash, so a load balancer gets an answer
        return f"error: {exc.__class__.__name__}"


def _database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return "ok"


def _redis() -> str:
    import redis

    redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2).ping()
    return "ok"


def _workers() -> str:
    from dellm_site.celery import app

    replies = app.control.inspect(timeout=1.0).ping() or {}
    return f"ok ({len(replies)})" if replies else "error: no worker answered"


@require_GET
def healthz(request):
    """Reachability of the database and, with REDIS_URL, of Redis and the Celery workers; whether this
    process's models are loaded yet (``models``: not started, loading, ready, failed)."""
    report = {"database": _probe(_database)}
    if settings.REDIS_URL:
        report["redis"] = _probe(_redis)
        report["workers"] = _probe(_workers) if report["redis"] == "ok" else "unknown: redis unreachable"
    else:
        report["redis"] = report["workers"] = "not used (tasks run in-process)"
    # Informational: the process answers while its models load, so loading never degrades the status.
    report["models"] = warm_state()["status"]
    ok = report["database"] == "ok" and not any(str(v).startswith("error") for v in report.values())
    return JsonResponse({"status": "ok" if ok else "degraded", **report}, status=200 if ok else 503)


def not_found(request, exception=None):
    """404: JSON on API and /v1 paths, the site's page elsewhere."""
    if is_api_path(request.path):
        return json_error(request.path, ApplicationError("Not found.", code="not_found", status=404))
    return render(request, "404.html", status=404)


def bad_request(request, exception=None):
    """400 for requests Django refuses before any view (a bad Host, a form body over the size limit)."""
    error = too_large() if isinstance(exception, RequestDataTooBig) else ApplicationError("Bad request.")
    if is_api_path(request.path):
        return json_error(request.path, error)
    return defaults.bad_request(request, exception)


def server_error(request):
    """500 without a trace of the failure: JSON on API and /v1 paths, a plain page elsewhere. The page
    needs no database or request context, since either may be what failed."""
    if is_api_path(request.path):
        detail = "Something went wrong on our side; please try again."
        return json_error(request.path, ApplicationError(detail, code="server_error", status=500))
    try:
        page = loader.get_template("500.html").render()
    except Exception:  # the template itself failed: a bare page still beats the server's default
        page = "<!doctype html><title>Server error</title><h1>Something went wrong</h1>"
    return HttpResponseServerError(page)
