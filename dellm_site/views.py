"""Site-wide views: health and the JSON 404 for API paths."""

from __future__ import annotations

from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET


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
    """Reachability of the database and, with REDIS_URL, of Redis and the Celery workers."""
    report = {"database": _probe(_database)}
    if settings.REDIS_URL:
        report["redis"] = _probe(_redis)
        report["workers"] = _probe(_workers) if report["redis"] == "ok" else "unknown: redis unreachable"
    else:
        report["redis"] = report["workers"] = "not used (tasks run in-process)"
    ok = report["database"] == "ok" and not any(str(v).startswith("error") for v in report.values())
    return JsonResponse({"status": "ok" if ok else "degraded", **report}, status=200 if ok else 503)


def not_found(request, exception=None):
    if request.path.startswith("/api/"):
        return JsonResponse({"code": "not_found", "detail": "Not found."}, status=404)
    return render(request, "404.html", status=404)
