"""Forgetting: match -> plan -> preview -> confirm -> execute -> verify.

Every rule about what a deletion removes lives here, next to the paper's definitions:

- ``matched`` (M): the items the request names (by id, exact text, keyword, meaning, or a
  natural-language request such as "forget that I live in Lisbon").
- ``Dep(M)``: M and everything reachable from M along provenance edges, i.e. every reply,
  summary or fact whose context contained an item of M, directly or through others.
- ``tainted``: Dep(M) minus M. Strict by default: all of Dep(M) is removed. The user may relax
  it in the preview (a taint depth k, or items to keep); the manifest records that choice.
- ``derived``: summaries and extracted facts in Dep(M); they are removed with the rest and
  rebuilt from their surviving sources after the deletion commits.
- Execution is crash-safe: the request and the audit record are committed *before* the wipe,
  the wipe is one transaction (all or nothing), and the verification scan and the audit
  completion run after it. An interrupted request is resumed by ``forget_resume``.
- A reply being generated while its context is deleted is refused when it is stored
  (``chat.services._reply_store`` locks its context rows; the wipe locks them too).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from pgvector.django import CosineDistance

from dellm_site.errors import ApplicationError, NotFound
from memory.models import Embedding, Node, NodeKind

from .models import AuditRecord, DeletionRequest, DeletionStatus, Edge
from .selectors import context_ids, dep_explained

MODES = ("ids", "exact", "keyword", "semantic", "natural", "conversation", "account")
DERIVED_KINDS = (NodeKind.SUMMARY, NodeKind.FACT)
EXCERPT = 160
MAX_STORED_VECTORS = 200
CHECKED_STORES = ["messages", "embeddings", "edges", "summaries", "facts", "conversation_titles"]

# ---------------------------------------------------------------------------------------
# Recognising a deletion request in a chat message (never sent to the LLM, never stored)
# ---------------------------------------------------------------------------------------

_REQUEST = re.compile(
    r"^\s*(?:(?:hey|ok|okay|please|pls|so|now|and)[\s,]+)*"
    r"(?:(?:can|could|would|will) you(?: please)?\s+|i (?:want|need) you to\s+|i'?d like you to\s+)?"
    r"(?P<verb>forget|delete|remove|erase|wipe|purge|unlearn|scrub|"
    r"(?:do not|don'?t|dont|stop) (?:remember(?:ing)?|keep(?:ing)?|stor(?:e|ing))|never mention)\b"
    r"(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_LEAD = re.compile(
    r"^(?:\s*(?:that|about|everything (?:about|on)|all (?:about|of)|anything (?:about|on)|all mentions of|"
    r"mentions of|any mention of|the fact that|what i (?:said|told you|wrote|mentioned) about|"
    r"what i (?:said|told you|wrote|mentioned)|(?:the )?messages? (?:about|saying|where i said)|"
    r"everything i (?:said|told you) about)\b[\s:,]*)+",
    re.IGNORECASE,
)
_TRAIL = re.compile(
    r"(?:[\s,]*(?:please|thanks|thank you|from (?:your|my) memory|from memory|for good|forever|"
    r"completely|entirely|permanently|right now|now))+[\s.!?]*$",
    re.IGNORECASE,
)
_VAGUE = {"it", "this", "that", "them", "everything", "all", "something", "", "me"}


def forget_request_target(text: str) -> str | None:
    """If ``text`` asks the assistant to forget something, return what (else None).

    "Forget that I live in Lisbon." -> "I live in Lisbon"; "Please delete my address" -> "my address".
    """
    found = _REQUEST.match(text or "")
    if not found:
        return None
    target = _LEAD.sub("", found.group("rest").strip(" :,")).strip()
    target = _TRAIL.sub("", target).strip().strip("\"'“”‘’").rstrip(".!?").strip()
    return target


# ---------------------------------------------------------------------------------------
# Matching: which stored items the request names (M)
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Match:
    reason: str  # id | exact | keyword | semantic | conversation | account
    score: float | None = None


def _query_vector(text: str) -> list[float]:
    from memory.embeddings import get_embedder

    return [float(x) for x in get_embedder().embed_one(text)]


def _semantic_matches(*, user, vector: list[float], threshold: float) -> dict[int, Match]:
    rows = (
        Embedding.objects.filter(owner=user)
        .annotate(distance=CosineDistance("vector", vector))
        .filter(distance__lte=1.0 - threshold)
        .values_list("node_id", "distance")
    )
    return {node_id: Match("semantic", round(1.0 - float(distance), 4)) for node_id, distance in rows}


def _keyword_matches(*, user, text: str) -> dict[int, Match]:
    query = SearchQuery(text, config="english", search_type="plain")
    rows = (
        Node.objects.for_user(user)
        .annotate(search=SearchVector("content", config="english"))
        .filter(search=query)
        .annotate(rank=SearchRank(SearchVector("content", config="english"), query))
        .values_list("pk", "rank")
    )
    return {pk: Match("keyword", round(float(rank), 4)) for pk, rank in rows}


def match(
    *, user, mode: str, query: str = "", message_ids=None, threshold: float | None = None, conversation_id=None,
    query_vector: list[float] | None = None,
) -> dict[int, Match]:
    """M: the user's stored items named by the request, each with the reason it matched."""
    if mode in ("semantic", "natural") and query_vector is None:
        query_vector = _query_vector(query)
    nodes = Node.objects.for_user(user)
    if mode == "ids":
        ids = {int(i) for i in message_ids or []}
        found = set(nodes.filter(pk__in=ids).values_list("pk", flat=True))
        if ids - found:
            raise NotFound(f"No such items: {sorted(ids - found)}.")
        return {pk: Match("id") for pk in found}
    if mode == "conversation":
        from chat.selectors import conversation_get

        conversation = conversation_get(user=user, conversation_id=conversation_id)
        return {pk: Match("conversation") for pk in conversation.messages.values_list("pk", flat=True)}
    if mode == "account":
        return {pk: Match("account") for pk in nodes.values_list("pk", flat=True)}
    if mode == "exact":
        return {pk: Match("exact") for pk in nodes.filter(content__icontains=query).values_list("pk", flat=True)}
    if mode == "keyword":
        return _keyword_matches(user=user, text=query)
    if mode == "semantic":
        return _semantic_matches(user=user, vector=query_vector, threshold=threshold)
    if mode == "natural":
        # Keyword first, so an item found both ways is explained by its words.
        return {**_semantic_matches(user=user, vector=query_vector, threshold=threshold), **_keyword_matches(user=user, text=query)}
    raise ApplicationError(f"Unknown mode {mode!r}; use one of {', '.join(MODES)}.", code="invalid")


# ---------------------------------------------------------------------------------------
# Planning: Dep(M), what is tainted and why, what is derived
# ---------------------------------------------------------------------------------------


def _describe(nodes: dict[int, Node], pk: int) -> str:
    node = nodes.get(pk)
    if node is None:
        return f"item {pk}"
    if node.kind == NodeKind.MESSAGE:
        role = getattr(getattr(node, "message", None), "role", "user")
        return f"{'reply' if role == 'assistant' else 'message'} {pk}"
    return f"{node.kind} {pk}"


def explanation(path: list[int], nodes: dict[int, Node]) -> str:
    """'reply 8 used message 4 in its context, and message 4 used message 1'."""
    steps = [f"{_describe(nodes, dst)} used {_describe(nodes, src)}" for src, dst in zip(path, path[1:])]
    steps.reverse()
    if not steps:
        return ""
    return steps[0] + " in its context" + "".join(f", and {s}" for s in steps[1:])


def plan(*, user, matched: dict[int, Match], depth: int | None) -> dict:
    """The preview's content: matched, tainted (with shortest path and explanation), derived."""
    dep = dep_explained(user=user, seeds=matched.keys(), max_depth=depth)
    nodes = Node.objects.select_related("message").in_bulk(list(dep))
    out = {"matched": [], "tainted": [], "derived": []}
    for pk, m in sorted(matched.items()):
        entry = {"id": pk, "reason": m.reason}
        if m.score is not None:
            entry["score"] = m.score
        out["matched"].append(entry)
    for entry in sorted(dep.values(), key=lambda e: (e.depth, e.id)):
        node = nodes[entry.id]
        if node.kind in DERIVED_KINDS:
            named = entry.id in matched and matched[entry.id].reason in ("id", "account")
            out["derived"].append({"id": entry.id, "kind": node.kind, "action": "erase" if named else "rebuild"})
        if entry.id in matched:
            continue
        out["tainted"].append(
            {"id": entry.id, "depth": entry.depth, "path": entry.path, "explanation": explanation(entry.path, nodes)}
        )
    return out


def _plan_ids(plan_: dict) -> set[int]:
    return {e["id"] for e in plan_["matched"]} | {e["id"] for e in plan_["tainted"]}


# ---------------------------------------------------------------------------------------
# Preview
# ---------------------------------------------------------------------------------------


def _validate(*, mode, query, message_ids, threshold, depth, conversation_id) -> tuple[str, float | None]:
    if mode not in MODES:
        raise ApplicationError(f"mode must be one of {', '.join(MODES)}.", code="invalid")
    query = (query or "").strip() if isinstance(query, str | type(None)) else None
    if query is None:
        raise ApplicationError("query must be a string.", code="invalid")
    if mode in ("exact", "keyword", "semantic", "natural"):
        if not query:
            raise ApplicationError(f"mode {mode!r} needs a query saying what to forget.", code="invalid")
        if len(query) > settings.DELLM_MAX_MESSAGE_CHARS:
            raise ApplicationError("The query is too long.", code="invalid")
    if mode == "ids" and not message_ids:
        raise ApplicationError("mode 'ids' needs message_ids.", code="invalid")
    if mode == "conversation" and conversation_id is None:
        raise ApplicationError("mode 'conversation' needs conversation_id.", code="invalid")
    if threshold is None and mode in ("semantic", "natural"):
        threshold = settings.DELLM_FORGET_SEMANTIC_THRESHOLD
    if threshold is not None and not (0.0 < float(threshold) <= 1.0):
        raise ApplicationError("threshold must be in (0, 1].", code="invalid")
    if depth is not None and int(depth) < 0:
        raise ApplicationError("depth must be 0 or more.", code="invalid")
    return query, threshold


def _working_set(*, mode: str, query: str, matched: dict[int, Match], query_vector: list[float] | None) -> dict:
    """What verification will scan for: the request's words, or the matched texts, and vectors.
    Kept only until the request completes or expires."""
    ids = sorted(matched)[:MAX_STORED_VECTORS]
    if mode in ("ids", "conversation", "account"):
        terms = list(Node.objects.filter(pk__in=ids).values_list("content", flat=True))  # an erased fact's own words
    else:
        terms = [query]
    # Only the matched *messages* define what must not survive: a matched summary also holds other,
    # innocent content, and its rebuilt successor would otherwise be flagged for that.
    vectors = [
        list(map(float, v))
        for v in Embedding.objects.filter(node_id__in=ids, node__kind=NodeKind.MESSAGE).values_list("vector", flat=True)
    ]
    if query_vector is not None:
        vectors.append(query_vector)
    return {"terms": terms, "vectors": vectors}


def forget_cancel(*, user, request_id) -> None:
    """Abandon a preview: it can no longer be confirmed and its working text is dropped now."""
    with transaction.atomic():
        request = _get_request(user=user, request_id=request_id, lock=True)
        if request.status == DeletionStatus.PREVIEWED:
            _expire(request)


@transaction.atomic
def forget_preview(
    *, user, mode: str, query: str = "", message_ids=None, threshold=None, depth=None, conversation_id=None
) -> DeletionRequest:
    """Plan a deletion and store it as a preview. Nothing is deleted."""
    # The user's stale previews lose their working text now rather than at the next start-up.
    DeletionRequest.objects.filter(owner=user, status=DeletionStatus.PREVIEWED, expires_at__lte=timezone.now()).update(
        status=DeletionStatus.EXPIRED, working={}
    )
    query, threshold = _validate(
        mode=mode, query=query, message_ids=message_ids, threshold=threshold, depth=depth,
        conversation_id=conversation_id,
    )
    if mode == "natural":
        query = forget_request_target(query) if forget_request_target(query) is not None else query
        if query.lower() in _VAGUE:
            raise ApplicationError("Say what to forget, e.g. 'forget that I live in Lisbon'.", code="vague_request")
    query_vector = _query_vector(query) if mode in ("semantic", "natural") else None
    matched = match(
        user=user, mode=mode, query=query, message_ids=message_ids, threshold=threshold,
        conversation_id=conversation_id, query_vector=query_vector,
    )
    depth = None if depth is None else int(depth)
    started = time.monotonic()
    the_plan = plan(user=user, matched=matched, depth=depth)
    the_plan["conversation"] = int(conversation_id) if mode == "conversation" else None
    the_plan["plan_ms"] = round((time.monotonic() - started) * 1000, 1)
    return DeletionRequest.objects.create(
        id=uuid.uuid4(),
        owner=user,
        mode=mode,
        depth=depth,
        threshold=threshold,
        expires_at=timezone.now() + timedelta(minutes=settings.DELLM_FORGET_PREVIEW_MINUTES),
        plan=the_plan,
        working={**_working_set(mode=mode, query=query, matched=matched, query_vector=query_vector), "target": query},
    )


# ---------------------------------------------------------------------------------------
# Audit: pseudonymous references
# ---------------------------------------------------------------------------------------


def _audit_key() -> bytes:
    key = settings.DELLM_AUDIT_KEY or hashlib.sha256(("dellm-audit:" + settings.SECRET_KEY).encode()).hexdigest()
    return key.encode()


def pseudonym(kind: str, value) -> str:
    """A keyed hash that lets an auditor link entries without learning ids or content."""
    return hmac.new(_audit_key(), f"{kind}:{value}".encode(), hashlib.sha256).hexdigest()[:20]


# ---------------------------------------------------------------------------------------
# Confirm and execute
# ---------------------------------------------------------------------------------------


def _get_request(*, user, request_id, lock: bool = False) -> DeletionRequest:
    try:
        request_uuid = uuid.UUID(str(request_id))
    except ValueError:
        raise NotFound("Forget request not found.") from None
    queryset = DeletionRequest.objects.filter(owner=user, pk=request_uuid)
    if lock:
        queryset = queryset.select_for_update()
    found = queryset.first()
    if found is None:
        raise NotFound("Forget request not found.")
    return found


def _expire(request: DeletionRequest) -> None:
    request.status = DeletionStatus.EXPIRED
    request.working = {}
    request.save(update_fields=["status", "working"])


def _closure(*, user, request: DeletionRequest) -> set[int]:
    """The confirmed set, as of now: Dep(M) (within the chosen depth) minus what the user keeps.
    Recomputed at execution so replies written after the preview are not missed."""
    seeds = {e["id"] for e in request.plan.get("matched", [])}
    members = set(dep_explained(user=user, seeds=seeds, max_depth=request.depth))
    return members - set(request.kept)


def forget_confirm(*, user, request_id, keep=None) -> dict:
    """Execute a previewed deletion and return its manifest. Idempotent: confirming again
    returns the same manifest; an interrupted execution is resumed."""
    expired = False
    with transaction.atomic():
        request = _get_request(user=user, request_id=request_id, lock=True)
        if request.status == DeletionStatus.COMPLETED:
            return request.manifest
        if request.status == DeletionStatus.EXPIRED or (
            request.status == DeletionStatus.PREVIEWED and request.expires_at <= timezone.now()
        ):
            _expire(request)  # committed: the preview's working text goes now
            expired = True
        elif request.status == DeletionStatus.PREVIEWED:
            keep = [int(k) for k in (keep or [])]
            unknown = set(keep) - _plan_ids(request.plan)
            if unknown:
                raise ApplicationError(f"keep lists items that are not in this preview: {sorted(unknown)}.", code="invalid")
            request.kept = sorted(set(keep))
            request.target_ids = sorted(_closure(user=user, request=request))
            request.status = DeletionStatus.EXECUTING
            request.confirmed_at = timezone.now()
            request.save(update_fields=["kept", "target_ids", "status", "confirmed_at"])
            AuditRecord.objects.create(
                request_id=request.pk,
                requester_ref=pseudonym("user", user.pk),
                requester_username=user.get_username(),
                mode=request.mode,
                relaxation={"depth": request.depth, "kept": len(request.kept), "threshold": request.threshold},
                status=DeletionStatus.EXECUTING,
                requested_at=request.created_at,
                planned_count=len(request.target_ids),
                item_refs=[pseudonym("node", pk) for pk in request.target_ids],
            )
    if expired:
        raise ApplicationError("This preview has expired; ask again to get a fresh one.", code="expired", status=410)
    # The request and its audit record are committed: from here a crash leaves a resumable job.
    return _run(request.pk)


def _run(request_pk) -> dict:
    _execute(request_pk)
    return _verify(request_pk)


def _lock_closure(*, user, request: DeletionRequest) -> set[int]:
    """Lock every row to delete, growing the set until no reply committed meanwhile is missed."""
    locked: set[int] = set()
    target = (set(request.target_ids) | _closure(user=user, request=request)) - set(request.kept)
    while True:
        fresh = sorted(target - locked)
        # Locks in id order, like the reply writer, so the two never deadlock.
        locked |= set(Node.objects.select_for_update().filter(pk__in=fresh, owner=user).order_by("pk").values_list("pk", flat=True))
        target = (_closure(user=user, request=request) | (set(request.target_ids) & locked)) - set(request.kept)
        if target <= locked:
            return target


def _wipe(*, ids: set[int]) -> dict:
    """Remove the nodes, their vectors and every edge touching them. Returns counts per store."""
    kinds = dict(Node.objects.filter(pk__in=ids).values_list("pk", "kind"))
    counts = {
        "messages": sum(1 for k in kinds.values() if k == NodeKind.MESSAGE),
        "summaries": sum(1 for k in kinds.values() if k == NodeKind.SUMMARY),
        "facts": sum(1 for k in kinds.values() if k == NodeKind.FACT),
    }
    counts["edges"] = Edge.objects.filter(Q(src_id__in=ids) | Q(dst_id__in=ids)).delete()[0]
    counts["embeddings"] = Embedding.objects.filter(node_id__in=ids).delete()[0]
    _delete_nodes(ids=ids)
    return counts


def _delete_nodes(*, ids: set[int]) -> None:
    Node.objects.filter(pk__in=ids).delete()


def _retitle(*, conversations: dict[int, set[str]]) -> None:
    """A conversation titled after a deleted message takes the title of its first surviving one."""
    from chat.models import Conversation, Role
    from chat.services import TITLE_LENGTH

    for conversation in Conversation.objects.filter(pk__in=conversations):
        if conversation.title and conversation.title in conversations[conversation.pk]:
            first = conversation.messages.filter(role=Role.USER).order_by("pk").first()
            conversation.title = first.content[:TITLE_LENGTH] if first else ""
            conversation.save(update_fields=["title"])


def _execute(request_pk) -> None:
    from chat.models import Conversation, Message
    from chat.services import TITLE_LENGTH

    started = time.monotonic()
    with transaction.atomic():
        request = DeletionRequest.objects.select_for_update().get(pk=request_pk)
        if request.status != DeletionStatus.EXECUTING:
            return
        user = request.owner
        ids = _lock_closure(user=user, request=request) if user is not None else set()
        titles: dict[int, set[str]] = {}
        for conversation_id, content in Message.objects.filter(pk__in=ids).values_list("conversation_id", "content"):
            titles.setdefault(conversation_id, set()).add(content[:TITLE_LENGTH])
        derived = _derived_to_rebuild(
            ids=ids, matched={e["id"] for e in request.plan.get("matched", []) if e["reason"] in ("id", "account")}
        )
        counts = _wipe(ids=ids)
        counts["conversations"] = 0
        conversation_id = request.plan.get("conversation")
        if request.mode == "conversation" and conversation_id:
            counts["conversations"] = Conversation.objects.filter(pk=conversation_id, owner=user).delete()[0] and 1
        _retitle(conversations=titles)
        request.target_ids = sorted(ids)
        request.status = DeletionStatus.VERIFYING
        request.manifest = {
            "deleted": counts,
            "deleted_ids": sorted(ids),
            "rebuilt": [{k: v for k, v in d.items() if k not in ("sources", "conversation")} for d in derived],
            "timings": {"wipe_ms": round((time.monotonic() - started) * 1000, 1)},
        }
        request.save(update_fields=["target_ids", "status", "manifest"])
        AuditRecord.objects.filter(request_id=request.pk).update(
            deleted=counts, item_refs=[pseudonym("node", pk) for pk in sorted(ids)], status=DeletionStatus.VERIFYING
        )
        transaction.on_commit(lambda: _after_wipe(request_pk=request.pk, derived=derived))


def _derived_to_rebuild(*, ids: set[int], matched: set[int]) -> list[dict]:
    """Derived records in the confirmed set. An active one is rebuilt from its surviving sources
    (a summary that merely mentions the forgotten text still summarises the rest); one the user
    named by id (erase) or one already superseded is just dropped."""
    from memory.models import DerivedStatus, Fact, Summary

    out = []
    records = list(Fact.objects.filter(pk__in=ids)) + list(Summary.objects.filter(pk__in=ids))
    sources = context_ids(node_ids=[r.pk for r in records])
    for record in records:
        if record.pk in matched:
            status = "erased"
        elif record.status != DerivedStatus.ACTIVE:
            status = "dropped"
        else:
            status = "pending"
        if getattr(record, "rectified", False) and status == "pending":
            status, reason = "dropped", "written by the user; not re-derived"
        else:
            reason = None
        out.append({
            "id": record.pk, "kind": record.kind, "status": status, "version": record.version,
            **({"reason": reason} if reason else {}),
            "sources": [s for s in sources[record.pk] if s not in ids],
            "conversation": getattr(record, "conversation_id", None),
        })
    return out


def _after_wipe(*, request_pk, derived: list[dict]) -> None:
    """After the wipe commits: rebuild what was derived from the deleted items, reclaim disk."""
    from memory.tasks import derived_rebuild_task, vacuum_after_forget

    for record in derived:
        if record["status"] == "pending":
            derived_rebuild_task.delay(
                str(request_pk), record["kind"], record["id"], record["sources"], record["conversation"], record["version"]
            )
    vacuum_after_forget.delay()


def rebuild_finished(*, request_pk, old_id: int, entry: dict) -> None:
    """Record a rebuild's outcome on the manifest; once none is pending, check the rebuilt
    records for the deleted content and drop the request's working text."""
    with transaction.atomic():
        request = DeletionRequest.objects.select_for_update().filter(pk=request_pk).first()
        if request is None:
            return
        rebuilt = request.manifest.get("rebuilt", [])
        for item in rebuilt:
            if item["id"] == old_id:
                item.update(entry)
        pending = any(item["status"] == "pending" for item in rebuilt)
        if request.status == DeletionStatus.COMPLETED and not pending:
            new_ids = {i for item in rebuilt for i in ([item["new_id"]] if "new_id" in item else item.get("new_ids", []))}
            if request.owner is not None and new_ids:
                scan = verification_scan(
                    user=request.owner, terms=request.working.get("terms", []), vectors=request.working.get("vectors", []),
                    only=new_ids,
                )
                request.manifest["verification"]["rebuilt_residual_hits"] = scan["residual_hits"]
                request.manifest["verification"]["residual_hits"] += scan["residual_hits"]
            _finish_rebuilds(request)
        request.save(update_fields=["manifest", "working"])


def _finish_rebuilds(request: DeletionRequest) -> None:
    now = timezone.now()
    request.manifest["rebuilds_completed_at"] = now.isoformat()
    if request.confirmed_at:
        request.manifest.setdefault("timings", {})["time_to_completion_s"] = round((now - request.confirmed_at).total_seconds(), 3)
    request.working = {}


# ---------------------------------------------------------------------------------------
# Verification: scan what survives for the deleted content
# ---------------------------------------------------------------------------------------


def verification_scan(
    *, user, terms: list[str], vectors: list[list[float]], exclude: set[int] = frozenset(), only: set[int] | None = None
) -> dict:
    """Keyword (full-text and substring) and semantic scan of the user's surviving stores
    (or of the ``only`` items, e.g. records rebuilt after the deletion)."""
    from chat.models import Conversation

    nodes = Node.objects.for_user(user).exclude(pk__in=exclude)
    embeddings = Embedding.objects.filter(owner=user).exclude(node_id__in=exclude)
    if only is not None:
        nodes, embeddings = nodes.filter(pk__in=only), embeddings.filter(node_id__in=only)
    hits: set[int] = set()
    for term in terms:
        term = term.strip()
        if not term:
            continue
        query = SearchQuery(term, config="english", search_type="plain")
        hits |= set(
            nodes.annotate(search=SearchVector("content", config="english")).filter(search=query).values_list("pk", flat=True)
        )
        hits |= set(nodes.filter(content__icontains=term).values_list("pk", flat=True))
    semantic: set[int] = set()
    limit = 1.0 - settings.DELLM_FORGET_VERIFY_SIMILARITY
    for vector in vectors:
        semantic |= set(
            embeddings.annotate(distance=CosineDistance("vector", vector))
            .filter(distance__lte=limit)
            .values_list("node_id", flat=True)
        )
    titles = 0
    for term in terms if only is None else []:
        if term.strip():
            titles += Conversation.objects.for_user(user).filter(title__icontains=term.strip()).count()
    return {
        "keyword_hits": sorted(hits),
        "semantic_hits": sorted(semantic),
        "title_hits": titles,
        "residual_hits": len(hits | semantic) + titles,
    }


def _verify(request_pk) -> dict:
    started = time.monotonic()
    with transaction.atomic():
        request = DeletionRequest.objects.select_for_update().get(pk=request_pk)
        if request.status == DeletionStatus.COMPLETED:
            return request.manifest
        if request.status != DeletionStatus.VERIFYING:
            raise ApplicationError("This request has not been executed.", code="not_executed", status=409)
        user = request.owner
        deleted_ids = set(request.target_ids)
        kept = set(request.kept)
        scan = (
            verification_scan(user=user, terms=request.working.get("terms", []), vectors=request.working.get("vectors", []), exclude=kept)
            if user is not None
            else {"keyword_hits": [], "semantic_hits": [], "title_hits": 0, "residual_hits": 0}
        )
        dangling_edges = Edge.objects.filter(Q(src_id__in=deleted_ids) | Q(dst_id__in=deleted_ids)).count()
        still_there = Node.objects.filter(pk__in=deleted_ids).count()
        verify_ms = round((time.monotonic() - started) * 1000, 1)
        completed = timezone.now()
        manifest = {
            "request_id": str(request.pk),
            "status": DeletionStatus.COMPLETED.value,
            "requested_at": request.created_at.isoformat(),
            "confirmed_at": request.confirmed_at.isoformat() if request.confirmed_at else None,
            "completed_at": completed.isoformat(),
            "mode": request.mode,
            "depth": request.depth,
            "threshold": request.threshold,
            "strict": request.depth is None and not kept,
            "kept": sorted(kept),
            "matched": [e["id"] for e in request.plan.get("matched", [])],
            **request.manifest,
            "verification": {
                "checked_stores": CHECKED_STORES,
                "residual_hits": scan["residual_hits"] + dangling_edges + still_there,
                "residual_ids": sorted(set(scan["keyword_hits"]) | set(scan["semantic_hits"])),
                "method": (
                    "keyword: Postgres full-text and case-insensitive substring search of every surviving item and "
                    "conversation title for the request's words (or the matched texts); semantic: cosine similarity "
                    f">= {settings.DELLM_FORGET_VERIFY_SIMILARITY} of every surviving embedding to the matched items; "
                    "plus: no deleted id left in the items or the edge table. Kept items are not scanned."
                ),
            },
        }
        manifest["timings"] = {
            "plan_ms": request.plan.get("plan_ms"),
            **manifest.get("timings", {}),
            "verify_ms": verify_ms,
            "total_s": round((completed - (request.confirmed_at or completed)).total_seconds(), 3),
        }
        request.manifest = manifest
        request.status = DeletionStatus.COMPLETED
        request.completed_at = completed
        if not any(item["status"] == "pending" for item in manifest.get("rebuilt", [])):
            # The target text and vectors go with the content they described (kept only while
            # a rebuild is still to be checked).
            _finish_rebuilds(request)
        request.save(update_fields=["manifest", "status", "completed_at", "working"])
        AuditRecord.objects.filter(request_id=request.pk).update(
            status=DeletionStatus.COMPLETED, completed_at=completed, residual_hits=manifest["verification"]["residual_hits"]
        )
    return manifest


# ---------------------------------------------------------------------------------------
# Resuming interrupted requests, expiring old previews
# ---------------------------------------------------------------------------------------


def forget_resume() -> dict:
    """Finish every request interrupted mid-way and expire stale previews (dropping their
    working text). Run by ``manage.py forget_resume``, at start-up and by the worker."""
    resumed = []
    for request_pk in DeletionRequest.objects.filter(
        status__in=[DeletionStatus.EXECUTING, DeletionStatus.VERIFYING]
    ).values_list("pk", flat=True):
        _run(request_pk)
        resumed.append(str(request_pk))
    expired = 0
    for request in DeletionRequest.objects.filter(status=DeletionStatus.PREVIEWED, expires_at__lte=timezone.now()):
        _expire(request)
        expired += 1
    return {"resumed": resumed, "expired": expired}
