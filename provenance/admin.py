"""Read-only admin for forget requests and the audit log.

An operator sees that and when deletions happened, how, and how many items each store lost, with
node ids and requesters replaced by keyed pseudonyms (``forgetting.audit.pseudonym``): never content, never the
request's words (the ``working`` field), never raw ids or usernames. Nothing here can add, change or delete a record:
deletions go through the forget pipeline, which computes Dep(M) and writes the audit log."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from dellm_site.admin import ReadOnlyAdmin

from .forgetting.audit import pseudonym
from .models import AuditRecord, DeletionRequest
from .review import OUTCOMES, deletion_outcome

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


LABELS = {
    "messages": "Messages", "embeddings": "Embeddings", "edges": "Edges", "summaries": "Summaries",
    "facts": "Facts", "conversations": "Conversations", "conversation_titles": "Conversation titles",
}


def _refs(refs: list) -> str:
    return ", ".join(str(r) for r in refs) if refs else "none"


def _table(rows: list[tuple[str, object]]) -> str:
    """A two-column table of plain labels and values (values escaped; ``SafeString`` values kept)."""
    body = format_html_join("", "<tr><th scope=\"row\">{}</th><td>{}</td></tr>", rows)
    return format_html('<table class="record-table">{}</table>', body)


def _counts(counts: dict) -> str:
    return _table([(LABELS.get(k, k.replace("_", " ")), v) for k, v in sorted((counts or {}).items())]) if counts \
        else "none"


def manifest_table(manifest: dict) -> str:
    """A manifest as labelled tables, every node id a keyed pseudonym."""
    m = pseudonymous_manifest(manifest)
    rebuilt = format_html_join(
        "", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        ((r.get("id"), r.get("kind"), r.get("status"), _refs(r.get("new_ids") or []),
          r.get("error") or r.get("reason") or "") for r in m.get("rebuilt") or []),
    )
    rows: list[tuple[str, object]] = [
        ("Status", m.get("status") or "not completed"),
        ("Mode", m.get("mode") or "–"),
        ("Strict (nothing kept, no depth limit)", {True: "yes", False: "no"}.get(m.get("strict"), "–")),
        ("Requested", m.get("requested_at") or "–"),
        ("Confirmed", m.get("confirmed_at") or "–"),
        ("Completed", m.get("completed_at") or "–"),
        ("Deleted, per store", mark_safe(_counts(m.get("deleted")))),
        ("Deleted items", _refs(m.get("deleted_ids"))),
        ("Matched items", _refs(m.get("matched"))),
        ("Kept items", _refs(m.get("kept"))),
        ("Rebuilt records", format_html(
            '<table class="record-table"><tr><th>Record</th><th>Kind</th><th>Outcome</th><th>Rebuilt as</th>'
            "<th>Note</th></tr>{}</table>", rebuilt) if m.get("rebuilt") else "none"),
    ]
    found = m.get("verification")
    if isinstance(found, dict):
        rows += [
            ("Residual hits", found.get("residual_hits")),
            ("Residual items", _refs(found.get("residual_ids"))),
            ("Residual hits in conversation titles", found.get("residual_title_hits", "–")),
            ("Possible residue (items)", len(found.get("possible_residue") or [])),
            ("Stores checked", ", ".join(found.get("checked_stores") or [])),
            ("Checked again", found.get("rechecked_at") or "no"),
            ("How it was checked", found.get("method") or "–"),
        ]
    rows.append(("Timings", mark_safe(_counts(m.get("timings")))))
    return _table(rows)


class OutcomeFilter(admin.SimpleListFilter):
    """Where a request ended: completed clean, with residual hits, a failed or pending rebuild, stuck."""

    title = "outcome"
    parameter_name = "outcome"

    def lookups(self, request, model_admin):
        return [(o, o) for o in OUTCOMES]

    def queryset(self, request, queryset):
        if self.value() is None:
            return queryset
        now = timezone.now()
        pks = [r.pk for r in queryset.defer("working", "plan") if deletion_outcome(r, now=now) == self.value()]
        return queryset.filter(pk__in=pks)


@admin.register(DeletionRequest)
class DeletionRequestAdmin(ReadOnlyAdmin):
    list_display = ("id", "requester", "status", "outcome", "mode", "created_at", "completed_at")
    list_filter = ("status", OutcomeFilter, "mode", "created_at")
    search_fields = ("id__exact",)
    search_help_text = "Search by request id."
    date_hierarchy = "created_at"
    # Explicit, so that ``working`` (the request's words and vectors), ``plan``, ``kept``, ``target_ids`` (raw
    # node ids) and the owner's username never appear.
    fields = (
        "id", "requester", "status", "outcome", "mode", "depth", "threshold", "created_at", "expires_at",
        "confirmed_at", "completed_at", "planned", "relaxation", "manifest_pseudonymous",
    )
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).defer("working")

    @admin.display(description="requester (pseudonym)")
    def requester(self, obj):
        return pseudonym("user", obj.owner_id) if obj.owner_id is not None else "account deleted"

    @admin.display(description="outcome")
    def outcome(self, obj):
        return deletion_outcome(obj)

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
        return manifest_table(obj.manifest)


@admin.register(AuditRecord)
class AuditRecordAdmin(ReadOnlyAdmin):
    list_display = (
        "seq", "request_id", "requester_ref", "status", "mode", "requested_at", "completed_at", "planned_count",
        "residual_hits",
    )
    list_filter = ("status", "mode", "started_at")
    search_fields = ("requester_ref", "request_id__exact")
    search_help_text = "Search by request id, requester pseudonym, or the username of an existing account."
    date_hierarchy = "started_at"
    fields = (
        "seq", "request_id", "requester_ref", "mode", "status", "requested_at", "started_at", "completed_at",
        "planned_count", "relaxation_table", "deleted_table", "item_refs_list", "residual_hits", "chain_prev",
        "chain_hash", "seal",
    )
    readonly_fields = fields

    @admin.display(description="relaxation")
    def relaxation_table(self, obj):
        return _table([(k, "–" if v is None else v) for k, v in sorted((obj.relaxation or {}).items())])

    @admin.display(description="deleted, per store")
    def deleted_table(self, obj):
        return _counts(obj.deleted)

    @admin.display(description="item refs (keyed hashes of the deleted items)")
    def item_refs_list(self, obj):
        return _refs(obj.item_refs)

    def get_search_results(self, request, queryset, search_term):
        """Search by pseudonym, or by the username of an existing account (matched through its pseudonym,
        so the username of a deleted account finds nothing)."""
        results, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        term = search_term.strip()
        account = get_user_model().objects.filter(**{get_user_model().USERNAME_FIELD: term}).first() if term else None
        if account is not None:
            results |= queryset.filter(requester_ref=pseudonym("user", account.pk))
        return results, may_have_duplicates
