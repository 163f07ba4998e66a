"""Read-only admin for background jobs: one row per task execution (kind, status, attempt, timing,
error type), filterable by kind and status so failed and retrying jobs stand out.

Facts, summaries and other nodes are deliberately not registered: they hold user content, which an
operator has no reason to read (the user sees them on their Memory page)."""

from __future__ import annotations

from django.contrib import admin

from dellm_site.admin import ReadOnlyAdmin

from .models import TaskRun


@admin.register(TaskRun)
class TaskRunAdmin(ReadOnlyAdmin):
    list_display = ("task_id", "kind", "status", "attempt", "started_at", "finished_at", "duration_ms", "error")
    list_filter = ("kind", "status")
    search_fields = ("task_id__exact",)
    date_hierarchy = "started_at"
    readonly_fields = [f.name for f in TaskRun._meta.fields]
