"""The entry points of forgetting: preview -> confirm (execute, verify) -> manifest; cancel; resume.

Transports (REST, websocket, pages) and tasks call these and nothing else of this package.
"""

from __future__ import annotations

import time
import uuid
from datetime import timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from dellm_site.ai.embedding import get_embedder
from dellm_site.errors import ApplicationError
from dellm_site.types import RequestId
from dellm_site.validation import MAX_DEPTH, text_check
from memory.models import Embedding, Node, NodeKind

from ..models import DeletionRequest, DeletionStatus
from ..selectors import deletion_request_get
from .audit import audit_open
from .deferred import after_verification
from .execution import execute
from .intent import forget_request_target, is_vague
from .intent_targets import extract_targets, request_gist, request_unaddressed
from .jobs import is_large, job_create, job_progress, job_running, job_start
from .maintenance import disk_reclaim_pending, disk_reclaim_schedule
from .matching import MODES, TEXT_MODES, VECTOR_MODES, Match, match, resolved_matches
from .planning import closure, plan, plan_ids
from .verification import verify

if TYPE_CHECKING:
    from dellm_site.types import User

MAX_STORED_VECTORS = 200


def _validate(*, mode, query, message_ids, threshold, depth, conversation_id) -> tuple[str, float | None]:
    if mode not in MODES:
        raise ApplicationError(f"mode must be one of {', '.join(MODES)}.", code="invalid")
    query = text_check("" if query is None else query, field="query").strip()
    if mode in TEXT_MODES:
        if not query:
            raise ApplicationError(f"mode {mode!r} needs a query saying what to forget.", code="invalid")
        if len(query) > settings.DELLM_MAX_MESSAGE_CHARS:
            raise ApplicationError("The query is too long.", code="invalid")
    if mode == "ids" and not message_ids:
        raise ApplicationError("mode 'ids' needs message_ids.", code="invalid")
    if mode == "conversation" and conversation_id is None:
        raise ApplicationError("mode 'conversation' needs conversation_id.", code="invalid")
    if threshold is not None and not (0.0 < float(threshold) <= 1.0):
        raise ApplicationError("threshold must be in (0, 1].", code="invalid")
    if depth is not None and not 0 <= int(depth) <= MAX_DEPTH:
        raise ApplicationError(f"depth must be from 0 to {MAX_DEPTH}.", code="invalid")
    return query, threshold


def _working_set(
    *, user: User, mode: str, query: str, matched: dict[int, Match], vectors: list[list[float]]
) -> dict:
    """What verification will scan for: the request's words, or the matched texts, and vectors.
    Kept only until the request completes or expires."""
    ids = sorted(matched)[:MAX_STORED_VECTORS]
    if mode in TEXT_MODES:
        terms = [t for t in query.split("; ") if t.strip()]
    else:
        # An erased fact's own words.
        terms = list(Node.objects.filter(pk__in=ids, owner=user).values_list("content", flat=True))
    # Only the matched *messages* define what must not survive: a matched summary also holds other,
    # innocent content, and its rebuilt successor would otherwise be flagged for that. Of those, the ones that
    # hold information: a question or an acknowledgement states nothing of the user's, and near its vector lie
    # only other questions and acknowledgements (every identical "Noted, I will remember that." of the history).
    # Each distinct vector once.
    rows = Embedding.objects.filter(
        node_id__in=ids, owner=user, node__kind=NodeKind.MESSAGE, node__informative=True
    ).values_list("vector", flat=True)
    stored = list({tuple(map(float, v)): None for v in rows})
    return {"terms": terms, "vectors": [list(v) for v in stored] + list(vectors)}


def request_targets(text: str) -> list[str]:
    """What a request in words names, one entry per target; a request that names nothing is refused."""
    found = forget_request_target(text)
    # Asked to forget in words the detector does not read as a request (the Forget panel's box): what they name.
    found = found if found is not None else "; ".join(extract_targets(text))
    targets = [t.strip() for t in found.split("; ") if t.strip()]
    named = [t for t in targets if not is_vague(t)]
    if named:
        return named
    # No target where requests usually put one ("the Mathis thing is embarrassing, don't keep it"): what the
    # message is about once its asking and deleting words are gone.
    gist = request_gist(text)
    if is_vague(gist) or not gist:
        raise ApplicationError("Say what to forget, e.g. 'forget that I live in Lisbon'.", code="vague_request")
    return [gist]


@transaction.atomic
def previews_expire(*, owner: User | None = None) -> int:
    """Expire every preview past its time, anyone's (only ``owner``'s when given), dropping its words; returns
    how many. Run every minute by Celery beat where there are workers; without them (in-process tasks) on every
    preview, confirmation and cancellation (``_previews_sweep``), at start-up and by ``manage.py forget_resume``.
    A preview locked by its own confirmation right now is left to it."""
    stale = DeletionRequest.objects.select_for_update(skip_locked=True).filter(
        status=DeletionStatus.PREVIEWED, expires_at__lte=timezone.now()
    )
    if owner is not None:
        stale = stale.filter(owner=owner)
    count = 0
    for request in stale:
        request.expire()
        count += 1
    return count


def _previews_sweep(user: User) -> None:
    """The sweep a forget action runs: the user's own stale previews, and everyone's where no beat schedule
    runs it (DELLM_FORGET_SWEEP_ON_REQUEST)."""
    if settings.DELLM_FORGET_SWEEP_ON_REQUEST:
        previews_expire()
    else:
        previews_expire(owner=user)


def forget_cancel(*, user: User, request_id: RequestId) -> None:
    """Abandon a preview: it can no longer be confirmed and its working text is dropped now."""
    _previews_sweep(user)
    with transaction.atomic():
        request = deletion_request_get(user=user, request_id=request_id, lock=True)
        if request.status == DeletionStatus.PREVIEWED:
            request.expire()


@transaction.atomic
def forget_preview(
    *,
    user: User,
    mode: str,
    query: str = "",
    message_ids: list[int] | None = None,
    threshold: float | None = None,
    depth: int | None = None,
    conversation_id: int | None = None,
) -> DeletionRequest:
    """Plan a deletion and store it as a preview. Nothing is deleted."""
    _previews_sweep(user)  # stale previews lose their words now, with or without a beat schedule
    disk_reclaim_schedule(after_wipe=False)  # without workers: maintenance left due by an ended process
    query, threshold = _validate(
        mode=mode,
        query=query,
        message_ids=message_ids,
        threshold=threshold,
        depth=depth,
        conversation_id=conversation_id,
    )
    related: list[dict] = []
    vectors: list[list[float]] = []
    if mode in VECTOR_MODES:
        targets = request_targets(query) if mode == "natural" else [query]
        fallback = request_gist(query) if mode == "natural" else None
        context = request_unaddressed(query) if mode == "natural" else None
        # The targets, the whole request and its gist in one pass of the embedder (each pass costs about as much
        # as a sentence, however few its texts).
        texts = list(dict.fromkeys(t for t in [*targets, context, fallback] if t and t.strip()))
        embedded = dict(zip(texts, ([float(x) for x in v] for v in get_embedder().embed(texts)), strict=True))
        vectors = [embedded[t] for t in targets]
        matched, related = resolved_matches(
            user=user, targets=targets, vectors=vectors, threshold=threshold, fallback=fallback,
            fallback_vector=embedded.get(fallback) if fallback else None,
            context=context, context_vector=embedded.get(context) if context else None,
        )
        query = "; ".join(targets)
    else:
        matched = match(
            user=user,
            mode=mode,
            query=query,
            message_ids=message_ids,
            conversation_id=conversation_id,
        )
    depth = None if depth is None else int(depth)
    started = time.monotonic()
    the_plan = plan(user=user, matched=matched, depth=depth)
    the_plan["related"] = [r for r in related if r["id"] not in plan_ids(the_plan)]
    the_plan["conversation"] = int(conversation_id) if mode == "conversation" else None
    the_plan["plan_ms"] = round((time.monotonic() - started) * 1000, 1)
    outermost = not transaction.get_connection().in_atomic_block
    with transaction.atomic():
        if outermost:
            # A preview deletes nothing and is made again in a click: its own commit need not wait for the disk
            # (a crash may lose the last moment's previews, never leave anything half-written).
            with transaction.get_connection().cursor() as cursor:
                cursor.execute("SELECT set_config('synchronous_commit', 'off', true)")
        return DeletionRequest.objects.create(
            id=uuid.uuid4(),
            owner=user,
            mode=mode,
            depth=depth,
            threshold=threshold,
            expires_at=timezone.now() + timedelta(minutes=settings.DELLM_FORGET_PREVIEW_MINUTES),
            plan=the_plan,
            working={**_working_set(user=user, mode=mode, query=query, matched=matched, vectors=vectors),
                     "target": query},
        )


def forget_confirm(
    *,
    user: User,
    request_id: RequestId,
    keep: list[int] | None = None,
    add: list[int] | None = None,
    full_scan: bool = False,
) -> dict:
    """Execute a previewed deletion and return its manifest. ``add`` names possibly related items of
    the preview to forget as well (with everything built from them); ``keep`` spares tainted ones;
    ``full_scan`` verifies by scanning every surviving item (``verification``). A large confirmed set
    (``jobs``) is wiped in the background: this returns ``forget_job_status`` at once.
    Idempotent: confirming again returns the same manifest; an interrupted execution is resumed."""
    _previews_sweep(user)
    expired = False
    in_background = False
    with transaction.atomic():
        request = deletion_request_get(user=user, request_id=request_id, lock=True)
        if request.status == DeletionStatus.COMPLETED:
            return request.manifest
        if request.status == DeletionStatus.EXPIRED or (
            request.status == DeletionStatus.PREVIEWED and request.expires_at <= timezone.now()
        ):
            request.expire()  # committed: the preview's working text goes now
            expired = True
        elif request.status == DeletionStatus.PREVIEWED:
            add = sorted({int(k) for k in (add or [])})
            offered = {e["id"] for e in request.plan.get("related", [])}
            if set(add) - offered:
                raise ApplicationError(
                    f"add lists items that this preview did not offer: {sorted(set(add) - offered)}.", code="invalid"
                )
            if add:
                request.plan["matched"] = [*request.plan["matched"], *({"id": pk, "reason": "added"} for pk in add)]
                request.plan["related"] = [e for e in request.plan["related"] if e["id"] not in add]
            keep = [int(k) for k in (keep or [])]
            unknown = set(keep) - plan_ids(request.plan)
            if unknown:
                raise ApplicationError(
                    f"keep lists items that are not in this preview: {sorted(unknown)}.", code="invalid"
                )
            request.kept = sorted(set(keep))
            request.plan_drop_words()
            request.target_ids = sorted(closure(user=user, request=request))
            request.status = DeletionStatus.EXECUTING
            request.confirmed_at = timezone.now()
            request.save(update_fields=["plan", "kept", "target_ids", "status", "confirmed_at"])
            audit_open(request=request, user=user)
            in_background = is_large(request.target_ids)
        elif job_running(request.pk):
            in_background = None  # already under way: report on it
        else:
            in_background = is_large(request.target_ids)  # interrupted: resumed here, or as a job again
        if in_background:
            job_create(request_pk=request.pk, total=len(request.target_ids))
            job_start(request_pk=request.pk, full_scan=full_scan or None, owner_id=user.pk)
    if expired:
        raise ApplicationError("This preview has expired; ask again to get a fresh one.", code="expired", status=410)
    if in_background is not False:
        return forget_job_status(request_pk=request.pk, owner_id=user.pk)
    # The request and its audit record are committed: from here a crash leaves a resumable job.
    return confirmed_run(request.pk, owner_id=user.pk, full_scan=full_scan or None)


def forget_job_status(*, request_pk: RequestId, owner_id: int | None = None) -> dict:
    """A deletion confirmed as a background job, while it runs: ``{request_id, status, progress}`` (the
    manifest once it completed). ``owner_id``: the request's owner, where known (the read is then routed by it)."""
    requests = DeletionRequest.objects.filter(pk=request_pk)
    if owner_id is not None:
        requests = requests.filter(owner_id=owner_id)
    request = requests.get()
    if request.status == DeletionStatus.COMPLETED:
        return request.manifest
    return {"request_id": str(request.pk), "status": request.status, "progress": job_progress(request.pk)}


def confirmed_run(request_pk, *, owner_id: int | None = None, full_scan: bool | None = None, progress=None) -> dict:
    """Wipe a confirmed (executing) request and verify it; returns the manifest. ``progress`` (a job's)
    hears of each stage. ``owner_id``: the request's owner, where known (its rows are then read by it).
    In-process, the rebuilds are recorded after the verification (``deferred``), except in a job: its
    progress says it completed when the request does."""
    if progress is not None:
        execute(request_pk, owner_id=owner_id, progress=progress)
        return verify(request_pk, owner_id=owner_id, full_scan=full_scan, progress=progress)
    with after_verification() as finishing:
        execute(request_pk, owner_id=owner_id)
        manifest = verify(request_pk, owner_id=owner_id, full_scan=full_scan)
    if finishing:  # the manifest as the rebuilds recorded after it left it
        requests = DeletionRequest.objects.filter(pk=request_pk)
        manifest = (requests if owner_id is None else requests.filter(owner_id=owner_id)).get().manifest
    return manifest


def forget_resume(*, request_ids: list[RequestId] | None = None) -> dict:
    """Finish every request interrupted mid-way (or only ``request_ids``) and expire stale previews (dropping
    their working text). Run by ``manage.py forget_resume``, at start-up, by the worker and the review desk."""
    resumed = []
    interrupted = DeletionRequest.objects.filter(status__in=[DeletionStatus.EXECUTING, DeletionStatus.VERIFYING])
    if request_ids is not None:
        interrupted = interrupted.filter(pk__in=request_ids)
    for request_pk, owner_id in interrupted.values_list("pk", "owner_id"):
        confirmed_run(request_pk, owner_id=owner_id)
        resumed.append(str(request_pk))
    result = {"resumed": resumed, "expired": previews_expire()}
    if request_ids is None:
        # The maintenance of erasures whose process ended before it ran (off any request's path here).
        result["disk_reclaimed"] = bool(disk_reclaim_pending())
    return result
