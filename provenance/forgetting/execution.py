"""Execution: the wipe of the confirmed set, all or nothing, and the rebuild of derived records.

Crash-safe: the request and its audit record are committed *before* the wipe (``services``), the
wipe is one transaction, and verification runs after it. A reply being generated while its context
is deleted is refused when it is stored (the chat turn locks its context rows; the wipe locks them too).

The confirmed set is recomputed under lock from what the request matches at that moment (a
conversation's messages posted after the preview included), and the wipe removes exactly it: the node
rows the database reports deleted, cascades included, must be the manifest's ids, or the whole wipe
is rolled back and the request stays executing (resumable) with an error.
"""

from __future__ import annotations

import logging
import time

from django.db import connection, transaction
from django.db.models import Q

from dellm_site.ai.embedding import get_embedder
from dellm_site.errors import ApplicationError
from dellm_site.types import RequestId
from memory.graph import context_ids
from memory.models import DerivedStatus, Edge, Embedding, Fact, Node, NodeKind, Summary

from ..manifest import Manifest, RebuiltRecord
from ..models import DeletionRequest, DeletionStatus
from .audit import audit_wiped
from .hooks import erasure_run
from .maintenance import disk_reclaim_schedule
from .matching import NAMING_REASONS, VECTOR_MODES, match_now
from .planning import closure
from .residue import residue_find, residue_tokens
from .verification import rebuilds_finish, verification_scan

logger = logging.getLogger(__name__)


def _match_late(*, user, request: DeletionRequest, vectors: list[list[float]] | None) -> None:
    """Add to the request's M what it matches now and did not at its preview (marked ``late``)."""
    named = {e["id"] for e in request.plan.get("matched", [])}
    found = match_now(
        user=user,
        mode=request.mode,
        query=request.working.get("target", ""),
        conversation_id=request.plan.get("conversation"),
        threshold=request.threshold,
        since=request.created_at,
        vectors=vectors,
    )
    request.plan["matched"] = [
        *request.plan.get("matched", []),
        *({"id": pk, "reason": m.reason, "late": True} for pk, m in sorted(found.items()) if pk not in named),
    ]


def _lock_closure(*, user, request: DeletionRequest, vectors: list[list[float]] | None = None) -> set[int]:
    """Lock every row to delete, growing the set until no reply committed meanwhile is missed."""
    _match_late(user=user, request=request, vectors=vectors)
    locked: set[int] = set()
    target = (set(request.target_ids) | closure(user=user, request=request)) - set(request.kept)
    while True:
        fresh = sorted(target - locked)
        # Locks in id order, like the reply writer, so the two never deadlock.
        rows = Node.objects.select_for_update().filter(pk__in=fresh, owner=user).order_by("pk")
        locked |= set(rows.values_list("pk", flat=True))
        target = (closure(user=user, request=request) | (set(request.target_ids) & locked)) - set(request.kept)
        if target <= locked:
            return target


WIPE_CHUNK = 500


def _wipe(*, user, ids: set[int], progress=None) -> dict:
    """Remove the user's nodes, their vectors and every edge touching them (in one transaction; the nodes in
    chunks, so a job's ``progress`` can be told how far it is). Returns counts per store."""
    kinds = dict(Node.objects.filter(pk__in=ids, owner=user).values_list("pk", "kind"))
    counts = {
        "messages": sum(1 for k in kinds.values() if k == NodeKind.MESSAGE),
        "summaries": sum(1 for k in kinds.values() if k == NodeKind.SUMMARY),
        "facts": sum(1 for k in kinds.values() if k == NodeKind.FACT),
    }
    counts["edges"] = Edge.objects.filter(Q(src_id__in=ids) | Q(dst_id__in=ids), owner=user).delete()[0]
    counts["embeddings"] = Embedding.objects.filter(node_id__in=ids, owner=user).delete()[0]
    ordered = sorted(ids)
    for start in range(0, len(ordered), WIPE_CHUNK):
        nodes_delete(user=user, ids=set(ordered[start : start + WIPE_CHUNK]))
        if progress is not None:
            progress("wiping", min(len(ordered), start + WIPE_CHUNK), len(ordered))
    return counts


def _nodes_delete_sql() -> list[str]:
    """What deleting nodes takes with it (the cascades of Node and its kinds), each statement routed by the
    owner: the edges and vectors that touch them, the links to them that are cleared (a superseded fact, a
    reply's question), then each kind's own rows (which keep a copy of the owner) and the nodes themselves."""
    # The message kind's model, reached through the node's parent link rather than an import of chat.
    message = Node._meta.get_field("message").related_model._meta.db_table
    edge, embedding, fact, summary, node = (m._meta.db_table for m in (Edge, Embedding, Fact, Summary, Node))
    ids = "= ANY(%(ids)s)"
    return [
        f'DELETE FROM "{edge}" WHERE owner_id = %(owner)s AND (src_id {ids} OR dst_id {ids})',
        f'DELETE FROM "{embedding}" WHERE owner_id = %(owner)s AND node_id {ids}',
        f'UPDATE "{fact}" SET supersedes_id = NULL WHERE owner_id = %(owner)s AND supersedes_id {ids}',
        f'UPDATE "{message}" SET question_id = NULL WHERE owner_id = %(owner)s AND question_id {ids}',
        *(
            f'DELETE FROM "{table}" WHERE owner_id = %(owner)s AND node_ptr_id {ids}'
            for table in (fact, summary, message)
        ),
        f'DELETE FROM "{node}" WHERE owner_id = %(owner)s AND id {ids}',
    ]


def nodes_delete(*, user, ids: set[int]) -> None:
    """Delete the user's nodes themselves (their kind's own rows go with them); the last step of the wipe."""
    if user is None or not ids:
        return
    with connection.cursor() as cursor:
        for statement in _nodes_delete_sql():
            cursor.execute(statement, {"owner": user.pk, "ids": sorted(ids)})


def node_rows_deleted() -> int:
    """Node rows this transaction has deleted so far, as Postgres counts them (every statement and
    cascade; needs ``track_counts``, on by default and required by autovacuum)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(n_tup_del, 0) FROM pg_stat_xact_user_tables WHERE relid = %s::regclass",
            [Node._meta.db_table],
        )
        return cursor.fetchone()[0]


def _erase_exactly(*, user, ids: set[int], scope: tuple[str, int] | None, progress=None) -> dict:
    """Run the erasure and check that the rows it removed are exactly ``ids``; else roll it back, loudly."""
    before = node_rows_deleted()
    counts = erasure_run(
        user=user, node_ids=ids, scope=scope, wipe=lambda: _wipe(user=user, ids=ids, progress=progress)
    )
    removed = node_rows_deleted() - before
    left = set(Node.objects.filter(pk__in=ids, owner=user).values_list("pk", flat=True))
    if removed != len(ids) or left:
        logger.error(
            "erasure removed %s node rows for a confirmed set of %s (%s left); rolled back",
            removed,
            len(ids),
            len(left),
        )
        raise ApplicationError(
            f"The deletion would have removed {removed} items, not the {len(ids)} it lists; nothing was deleted.",
            code="deleted_rows_mismatch",
            status=500,
        )
    return counts


def _derived_to_rebuild(*, user, ids: set[int], named: set[int]) -> list[dict]:
    """Derived records in the confirmed set. An active one is rebuilt from its surviving sources
    (a summary that merely mentions the forgotten text still summarises the rest); one the user
    named by id (erase), one already superseded, or one the user wrote is just dropped."""
    out = []
    records = list(Fact.objects.filter(pk__in=ids, owner=user)) + list(Summary.objects.filter(pk__in=ids, owner=user))
    sources = context_ids(node_ids=[r.pk for r in records], owner=user)
    for record in records:
        reason = None
        if record.pk in named:
            status = "erased"
        elif record.status != DerivedStatus.ACTIVE:
            status = "dropped"
        elif getattr(record, "rectified", False):
            status, reason = "dropped", "written by the user; not re-derived"
        else:
            status = "pending"
        surviving = [s for s in sources[record.pk] if s not in ids]
        conversation = getattr(record, "conversation_id", None)
        retry = {"sources": surviving, "conversation": conversation} if status == "pending" else None
        out.append(
            {
                "record": RebuiltRecord(
                    id=record.pk, kind=record.kind, status=status, version=record.version, reason=reason, retry=retry
                ),
                "sources": surviving,
                "conversation": conversation,
            }
        )
    return out


def _requests(request_pk: RequestId, owner_id: int | None):
    """The request, read through its owner where known (``owner_id``)."""
    requests = DeletionRequest.objects.filter(pk=request_pk)
    return requests if owner_id is None else requests.filter(owner_id=owner_id)


def _target_vectors(request_pk: RequestId, owner_id: int | None = None) -> list[list[float]] | None:
    """The vectors of a request in words' targets, to match what was stored since its preview."""
    request = _requests(request_pk, owner_id).only("mode", "working").first()
    if request is None or request.mode not in VECTOR_MODES:
        return None
    targets = [t for t in request.working.get("target", "").split("; ") if t.strip()]
    return [[float(x) for x in v] for v in get_embedder().embed(targets)] if targets else None


def execute(request_pk: RequestId, *, owner_id: int | None = None, progress=None) -> None:
    """Wipe the confirmed set of an executing request in one transaction, then queue the rebuilds. ``progress``
    (a background job's, ``jobs``) hears ``(stage, done, total)`` as it goes. ``owner_id``: the request's owner,
    where known (the request is then read by it)."""
    started = time.monotonic()
    if progress is not None:
        progress("locking")
    vectors = _target_vectors(request_pk, owner_id)  # outside the transaction: no row is locked while embedding
    with transaction.atomic():
        request = _requests(request_pk, owner_id).select_for_update().get()
        if request.status != DeletionStatus.EXECUTING:
            return
        user = request.owner
        ids = _lock_closure(user=user, request=request, vectors=vectors) if user is not None else set()
        if progress is not None:
            progress("wiping", 0, len(ids))
        derived = _derived_to_rebuild(
            user=user,
            ids=ids, named={e["id"] for e in request.plan.get("matched", []) if e["reason"] in NAMING_REASONS}
        )
        if user is not None:
            # What verification will look for in pieces: the distinctive words of the request and of the
            # matched items, read while they still exist.
            matched = {e["id"] for e in request.plan.get("matched", [])} & ids
            texts = list(Node.objects.filter(pk__in=matched, owner=user).values_list("content", flat=True))
            request.working["residue"] = residue_tokens(texts=[*request.working.get("terms", []), *texts])
        scope_id = request.plan.get("conversation")
        scope = ("conversation", scope_id) if request.mode == "conversation" and scope_id else None
        counts = _erase_exactly(user=user, ids=ids, scope=scope, progress=progress)
        # The user's other previews were planned before this wipe: their ids may be gone and their words
        # may be what is forgotten, so they end now (asked again, they are planned afresh).
        for stale in (
            DeletionRequest.objects.select_for_update()
            .filter(owner=user, status=DeletionStatus.PREVIEWED)
            .exclude(pk=request.pk)
        ):
            stale.expire()
        request.target_ids = sorted(ids)
        request.status = DeletionStatus.VERIFYING
        request.manifest = Manifest(
            deleted=counts,
            deleted_ids=sorted(ids),
            rebuilt=[d["record"] for d in derived],
            timings={"wipe_ms": round((time.monotonic() - started) * 1000, 1)},
        ).to_dict()
        request.save(update_fields=["plan", "target_ids", "status", "manifest", "working"])
        audit_wiped(request=request, counts=counts, ids=ids)
        transaction.on_commit(lambda: _after_wipe(request_pk=request.pk, owner_id=request.owner_id, derived=derived))


def _after_wipe(*, request_pk, owner_id: int | None, derived: list[dict]) -> None:
    """After the wipe commits: rebuild what was derived from the deleted items (one task for them all, their
    new records embedded together); reclaim disk soon, in the background and together with the other erasures
    of that time (``maintenance``)."""
    from ..tasks import derived_rebuilds_task  # tasks call back into this module

    items = [
        {"kind": item["record"].kind, "old_id": item["record"].id, "sources": item["sources"],
         "conversation": item["conversation"], "version": item["record"].version}
        for item in derived
        if item["record"].status == "pending"
    ]
    if items:
        derived_rebuilds_task.delay(str(request_pk), items, owner_id)
    disk_reclaim_schedule()


def rebuild_finished(*, request_pk: RequestId, old_id: int, entry: dict, owner_id: int | None = None) -> None:
    """Record one rebuild's outcome on the manifest (``rebuilds_finished``)."""
    rebuilds_finished(request_pk=request_pk, entries={old_id: entry}, owner_id=owner_id)


def rebuilds_finished(*, request_pk: RequestId, entries: dict[int, dict], owner_id: int | None = None) -> None:
    """Record rebuilds' outcomes (``{old_id: entry}``) on the manifest, in one write; once none is pending,
    check the rebuilt records for the deleted content and drop the request's working text. ``owner_id``: the
    request's owner, where known."""
    with transaction.atomic():
        request = _requests(request_pk, owner_id).select_for_update().first()
        if request is None:
            return
        manifest = Manifest.from_dict(request.manifest)
        for old_id, entry in entries.items():
            record = manifest.rebuilt_record(old_id)
            if record is not None:
                record.update(entry)
        if request.status == DeletionStatus.COMPLETED and not manifest.rebuilds_pending:
            new_ids = manifest.rebuilt_ids
            if request.owner is not None and new_ids and manifest.verification is not None:
                _rebuilt_check(request, manifest, new_ids)
            rebuilds_finish(request, manifest)
        request.manifest = manifest.to_dict()
        request.save(update_fields=["manifest", "working"])


def _rebuilt_check(request: DeletionRequest, manifest: Manifest, new_ids) -> None:
    """Scan the rebuilt records for the deleted content; add what is found to the manifest's verification."""
    scan = verification_scan(
        user=request.owner,
        terms=request.working.get("terms", []),
        vectors=request.working.get("vectors", []),
        only=new_ids,
    )
    # A rebuilt record the verification already counted (it was stored before the scan) is not counted twice.
    fresh = set(scan["keyword_hits"]) | set(scan["semantic_hits"])
    fresh -= set(manifest.verification.residual_ids)
    manifest.verification.rebuilt_residual_hits = len(fresh) + scan["title_hits"]
    manifest.verification.residual_hits += len(fresh) + scan["title_hits"]
    residue = residue_find(
        user=request.owner,
        tokens=request.working.get("residue", {}),
        vectors=request.working.get("vectors", []),
        only=new_ids,
        distinctive=request.working.get("distinctive"),
    )
    listed = {e["id"] for e in manifest.verification.possible_residue}
    manifest.verification.possible_residue += [
        e
        for e in residue["items"]
        if e["id"] not in listed and e["id"] not in scan["keyword_hits"] and e["id"] not in scan["semantic_hits"]
    ]


def rebuild_retry(*, request_pk: RequestId, old_id: int) -> None:
    """Queue again a rebuild that failed (or is still pending) with what it was first given."""
    from ..tasks import derived_rebuild_task  # tasks call back into this module

    with transaction.atomic():
        request = DeletionRequest.objects.select_for_update().get(pk=request_pk)
        manifest = Manifest.from_dict(request.manifest)
        record = manifest.rebuilt_record(old_id)
        if record is None or record.status not in ("pending", "failed") or record.retry is None:
            raise ApplicationError("This rebuild cannot be run again.", code="not_retryable", status=409)
        record.update({"status": "pending", "error": None})
        request.manifest = manifest.to_dict()
        request.save(update_fields=["manifest"])
        retry = record.retry
        transaction.on_commit(
            lambda: derived_rebuild_task.delay(
                str(request_pk), record.kind, record.id, retry["sources"], retry["conversation"], record.version,
                request.owner_id,
            )
        )
