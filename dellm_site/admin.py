"""Admin building blocks shared by the apps."""

from __future__ import annotations

from django.contrib import admin

admin.site.site_header = "DeLLM administration"
admin.site.site_title = "DeLLM admin"
admin.site.index_title = "Deletions, audit log and background jobs"


class ReadOnlyAdmin(admin.ModelAdmin):
    """View-only: no add, change or delete, and no bulk actions."""

    actions = None

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
