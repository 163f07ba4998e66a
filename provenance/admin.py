"""Read-only admin for forget requests and the audit log.

An operator sees that and when deletions happened, how, and how many items each store lost, with
node ids and requesters replaced by keyed pseudonyms (``forgetting.audit.pseudonym``): never content, never the
request's words (the ``working`` field), never raw ids or usernames. Nothing here can add, change or delete a record:
deletions go through the forget pipeline, which computes Dep(M) and writes the audit log."""

from __future__ import annotations

import json

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.utils.html import format_html

from dellm_site.admin import ReadOnlyAdmin

from .forgetting.audit import pseudonym
from .models import AuditRecord, DeletionRequest

# Manifest keys that hold node ids (lists of ids, or lists of {"id": ...}).
_ID_LISTS = ("matched", "kept", "deleted_ids")
_ID_RECORDS = ("rebuilt",)


def _ref(node_id) -> str:
    return "node:" + pseudonym("node", node_id)


def _pseudonymous_record(record: dict) -> dict:
    """A derived record's entry ({id, kind, status, new_id | new_ids, ...}) without raw ids."""
    out = dict(record)
    for key in ("id", "new_id"):
        if out.get(key) is not None:
            out[key] = _ref(out[key])
    if "new_ids" in out:
        out["new_ids"] = [_ref(i) for i in out["new_ids"] or []]
    if "sources" in out:
        out["sources"] = [_ref(i) for i in out["sources"] or []]
    return out


def pseudonymous_manifest(manifest: dict) -> dict:
    """The manifest with every node id replaced by its keyed pseudonym."""
    out = dict(manifest or {})
    for key in _ID_LISTS:
        if key in out:
            out[key] = [_ref(i) for i in out[key] or []]
    for key in _ID_RECORDS:
        if key in out:
            out[key] = [_pseudonymous_record(r) for r in out[key] or []]
    if isinstance(out.get("verification"), dict):
        verification = dict(out["verification"])
        verification["residual_ids"] = [_ref(i) for i in verification.get("residual_ids") or []]
        out["verification"] = verification
    return out


def _pretty(data) -> str:
    text = json.dumps(data, indent=2, sort_keys=True)
    return format_html('<pre style="white-space: pre-wrap; margin: 0">{}</pre>', text)


@admin.register(DeletionRequest)
class DeletionRequestAdmin(ReadOnlyAdmin):
    list_display = ("id", "owner", "status", "mode", "created_at", "completed_at")
    list_filter = ("status", "mode")
    search_fields = ("id__exact", "owner__username")
    date_hierarchy = "created_at"
    list_select_related = ("owner",)
    # Explicit, so that ``working`` (the request's words and vectors), ``plan``, ``kept`` and
    # ``target_ids`` (raw node ids) never appear.
    fields = (
        "id", "owner", "status", "mode", "depth", "threshold", "created_at", "expires_at", "confirmed_at",
        "completed_at", "planned", "relaxation", "manifest_pseudonymous",
    )
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).defer("working")

    @admin.display(description="planned")
    def planned(self, obj):
        plan = obj.plan or {}
        counts = {key: len(plan.get(key, [])) for key in ("matched", "tainted", "derived")}
        return "{matched} matched, {tainted} tainted, {derived} derived".format(**counts)

    @admin.display(description="relaxation")
    def relaxation(self, obj):
        parts = []
        if obj.depth is not None:
            parts.append(f"depth {obj.depth}")
        if obj.kept:
            parts.append(f"{len(obj.kept)} kept")
        return ", ".join(parts) or "strict"

    @admin.display(description="manifest (node ids pseudonymised)")
    def manifest_pseudonymous(self, obj):
        if not obj.manifest:
            return "–"
        return _pretty(pseudonymous_manifest(obj.manifest))


@admin.register(AuditRecord)
class AuditRecordAdmin(ReadOnlyAdmin):
    list_display = (
        "request_id", "requester_ref", "status", "mode", "requested_at", "completed_at", "planned_count",
        "residual_hits",
    )
    list_filter = ("status", "mode")
    search_fields = ("requester_ref",)
    date_hierarchy = "started_at"
    readonly_fields = [f.name for f in AuditRecord._meta.fields]

    def get_search_results(self, request, queryset, search_term):
        """Search by pseudonym, or by the username of an existing account (matched through its pseudonym,
        so the username of a deleted account finds nothing)."""
        results, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        term = search_term.strip()
        account = get_user_model().objects.filter(**{get_user_model().USERNAME_FIELD: term}).first() if term else None
        if account is not None:
            results |= queryset.filter(requester_ref=pseudonym("user", account.pk))
        return results, may_have_duplicates
