"""The deletion review desk, inside the admin: overview and attention list, the actions that resolve what is
stuck, the audit log's export and the monthly summary. Only for active staff holding the deletion reviewer's
permission (``roles``); everyone else gets the admin's sign-in page or a 403."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from datetime import date

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_POST

from dellm_site.errors import ApplicationError

from .charts import requests_chart_svg
from .forgetting import chain
from .forgetting.execution import rebuild_retry
from .forgetting.services import forget_resume
from .forgetting.verification import verification_recheck
from .review import OUTCOMES, audit_export, desk_overview, monthly_summary
from .roles import can_review


def reviewer_view(view: Callable) -> Callable:
    """The admin's sign-in for anyone not signed in as staff, then 403 for staff who are not reviewers."""

    def checked(request: HttpRequest, *args, **kwargs):
        if not can_review(request.user):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return admin.site.admin_view(checked)


def _context(request: HttpRequest, title: str, **extra) -> dict:
    return {**admin.site.each_context(request), "title": title, **extra}


@require_GET
def desk(request: HttpRequest) -> HttpResponse:
    overview = desk_overview()
    chart = requests_chart_svg(
        buckets=overview["buckets"], series=overview["over_time"],
        title="Deletion requests per " + ("day" if overview["by_day"] else "month") + " by outcome",
    ) if overview["buckets"] else ""
    rows = [(o, overview["over_time"][o]) for o in OUTCOMES if o in overview["over_time"]]
    return render(request, "provenance/desk/desk.html", _context(
        request, "Deletion review desk", overview=overview, chart=mark_safe(chart), series_rows=rows,
        outcomes=OUTCOMES, today=timezone.localdate(),
    ))


@require_POST
def desk_action(request: HttpRequest) -> HttpResponse:
    """Resume an interrupted deletion (or expire a stale preview), check a completed one again, or queue a
    failed rebuild again."""
    action, request_id = request.POST.get("action"), request.POST.get("request_id", "")
    try:
        if action == "resume":
            result = forget_resume(request_ids=[request_id])
            messages.success(request, f"Resumed {len(result['resumed'])} deletion(s), expired {result['expired']} "
                                      "preview(s).")
        elif action == "verify":
            manifest = verification_recheck(request_id)
            hits = manifest["verification"]["residual_hits"]
            messages.success(request, f"Checked {request_id} again: {hits} residual hit(s).")
        elif action == "rebuild":
            rebuild_retry(request_pk=request_id, old_id=int(request.POST.get("old_id", "0")))
            messages.success(request, f"Rebuild queued again for {request_id}.")
        else:
            messages.error(request, "Unknown action.")
    except ApplicationError as error:
        messages.error(request, str(error))
    return redirect("desk")


@require_GET
def desk_export(request: HttpRequest) -> HttpResponse:
    """The audit log from ``from`` to ``to`` (dates, inclusive) as ``format`` json or csv, with its chain hashes."""
    today = timezone.localdate()
    try:
        start = date.fromisoformat(request.GET.get("from") or today.replace(day=1).isoformat())
        end = date.fromisoformat(request.GET.get("to") or today.isoformat())
    except ValueError:
        return HttpResponse("from and to must be dates (YYYY-MM-DD).", status=400, content_type="text/plain")
    export = audit_export(start=start, end=end)
    name = f"dellm-audit-{start}-to-{end}"
    if request.GET.get("format") == "csv":
        response = HttpResponse(content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
        writer = csv.DictWriter(response, fieldnames=chain.COLUMNS)
        writer.writeheader()
        for entry in export["entries"]:
            writer.writerow({k: json.dumps(entry[k]) if k in chain.JSON_COLUMNS else entry[k] for k in chain.COLUMNS})
        return response
    response = HttpResponse(json.dumps(export, indent=1), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{name}.json"'
    return response


@require_GET
def desk_monthly(request: HttpRequest) -> HttpResponse:
    """One month's summary, fit to print (``?month=YYYY-MM``, this month by default)."""
    try:
        month = date.fromisoformat((request.GET.get("month") or timezone.localdate().strftime("%Y-%m")) + "-01")
    except ValueError:
        return HttpResponse("month must be YYYY-MM.", status=400, content_type="text/plain")
    summary = monthly_summary(month=month)
    return render(request, "provenance/desk/monthly.html", _context(
        request, f"Deletions in {summary['month']:%B %Y}", summary=summary,
    ))
