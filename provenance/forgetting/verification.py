"""Verification: after the wipe, scan what survives for the deleted content, and complete the request (its
manifest, the audit record) with what the scan found.

The scan reads only what could hold the deleted content, found through the indexes: for each of the
request's words (or matched texts), the items holding every one of its words (the GIN index of the user's
words, each word stemmed or as written, the last one also as the start of a longer word: every item that
contains the text, and more), and the items nearest to the deleted vectors (``memory.retrieval.nearest_within``, by the
user's retrieval plan). On those it runs the checks of the full scan. The full scan (every item of the
user's against every word and vector) runs on demand: ``full_scan`` at confirmation, or
DELLM_FORGET_VERIFY_FULL_SCAN for every deletion. What only the full scan can find: a text held inside a
longer word (not at its start), and a word of stop words only ("it")."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from dellm_site.ai.text import is_question
from dellm_site.errors import ApplicationError
from dellm_site.types import RequestId
from memory.models import Edge, Node
from memory.retrieval import OWNED_WORDS_MATCH, nearest_within, owner_term, vector_literal

from ..manifest import Manifest, Verification
from ..models import DeletionRequest, DeletionStatus
from .audit import audit_completed, audit_rechecked
from .hooks import residue_count
from .residue import residue_find

if TYPE_CHECKING:
    from dellm_site.types import User

CHECKED_STORES = ["messages", "embeddings", "edges", "summaries", "facts", "conversation_titles"]
SCOPES = {
    "scoped": "the items that hold every word of it or lie nearest to a deleted vector, found through the indexes",
    "full": "every surviving item",
}
METHOD = (
    "keyword: Postgres full-text and case-insensitive substring search of {scope} and every "
    "conversation title for the request's words (or the matched texts); semantic: cosine similarity "
    ">= {similarity} of {scope}'s embeddings (but a question's) to the matched items; "
    "plus: no deleted id left in the items or the edge table. Kept items are not scanned. "
    "Possible residue (reported apart, not counted as hits): surviving items holding a number or a name of the "
    "deleted text, or two words of it that are rare in your store, or within cosine similarity {residue} of it."
)


# Each word of the request's texts as written (lower-cased) and as the stemmer stores it, and whether it is the
# text's last word.
_TERM_WORDS_SQL = """
SELECT t.i, w.lexeme, tsvector_to_array(to_tsvector('english', w.lexeme)),
       w.positions[array_upper(w.positions, 1)] = max(w.positions[array_upper(w.positions, 1)]) OVER (PARTITION BY t.i)
FROM unnest(%(terms)s::text[]) WITH ORDINALITY t(term, i)
CROSS JOIN LATERAL unnest(to_tsvector('simple', t.term)) w
"""
# The user's surviving items (with ``ids``, only those; ``{scope}``: those the GIN index of the user's words
# node_owner_lexemes names as able to hold the terms) that hold one of the terms: by full-text search, as
# Django's SearchVector/SearchQuery(plain) would, or as a case-insensitive substring (``patterns``: each
# term escaped for LIKE, as ``icontains`` would). One pass: each item's words are computed once, not per term.
_HITS_SQL = """
SELECT n.id FROM memory_node n
WHERE n.owner_id = %(owner)s AND NOT (n.id = ANY(%(exclude)s::bigint[]))
  AND (%(ids)s::bigint[] IS NULL OR n.id = ANY(%(ids)s::bigint[])){scope}
  AND (
    to_tsvector('english'::regconfig, COALESCE(n.content, '')) @@ ANY(ARRAY(
      SELECT plainto_tsquery('english'::regconfig, t) FROM unnest(%(terms)s::text[]) t
    ))
    OR UPPER(n.content::text) LIKE ANY(ARRAY(SELECT UPPER(p) FROM unnest(%(patterns)s::text[]) p))
  )
"""


# The user's surviving items (with ``ids``, only those) within ``distance`` of any of the deleted vectors (cast
# to vectors once, not per row; the cosine distance as one minus the inner product: stored vectors have unit length).
_WITHIN_SQL = """
SELECT id FROM (
    SELECT e.node_id AS id,
           (SELECT 1 + min(e.vector <#> q.v) FROM unnest(%(vectors)s::text[]::vector[]) q(v)) AS distance
    FROM memory_embedding e
    WHERE e.owner_id = %(owner)s AND NOT (e.node_id = ANY(%(exclude)s::bigint[]))
      AND (%(ids)s::bigint[] IS NULL OR e.node_id = ANY(%(ids)s::bigint[]))
) nearest WHERE distance <= %(distance)s
"""


def _holding_query(owner_id: int, terms: list[str]) -> str:
    """A tsquery (of the user's owner-prefixed words) for their items that may contain any of ``terms``: each of
    a term's words (stop words aside), stemmed or as written, and its last word also as the start of a longer
    stored word. An item containing the term holds them all: within it, a word of the term is followed by what
    follows it in the term (and parsed as the term's is), but its last one may go on ("Lisb" in "Lisbon").
    Prefixes are few on purpose: each one reads every stored word it starts (a quarter of a second a deletion
    at 100,000 items when every word was one)."""
    words: dict[int, list[str]] = {}
    with connection.cursor() as cursor:
        cursor.execute(_TERM_WORDS_SQL, {"terms": terms})
        for i, word, stems, last in cursor.fetchall():
            if stems:  # a stop word is not indexed: it cannot narrow the search
                forms = " | ".join(owner_term(owner_id, x, prefix=last) for x in sorted({*stems, word}))
                words.setdefault(i, []).append(f"({forms})")
    return " | ".join("(" + " & ".join(clauses) + ")" for _, clauses in sorted(words.items()))


def _within(*, user: User, vectors: list[list[float]], distance: float, exclude, only: set[int] | None) -> set[int]:
    """The surviving items (or the ``only`` ones) within cosine ``distance`` of any of ``vectors``: every one of
    their vectors against every deleted one, in one query."""
    if not vectors:
        return set()
    params = {
        "owner": user.pk,
        "exclude": sorted(exclude),
        "ids": None if only is None else sorted(only),
        "vectors": [vector_literal(vector) for vector in vectors],
        "distance": distance,
    }
    with connection.cursor() as cursor:
        cursor.execute(_WITHIN_SQL, params)
        return {row[0] for row in cursor.fetchall()}


def _keyword_hits(*, user: User, terms: list[str], exclude, only: set[int] | None, scoped: bool) -> set[int]:
    """The surviving items holding one of ``terms`` (full-text or substring), in one query: the ``only`` ones,
    or with ``scoped`` those the indexes name as able to hold them (none where every term is stop words)."""
    query = _holding_query(user.pk, terms) if scoped and terms else ""
    if not terms or (scoped and not query):
        return set()
    params = {
        "owner": user.pk,
        "exclude": sorted(exclude),
        "ids": None if only is None else sorted(only),
        "query": query,
        "terms": terms,
        "patterns": [f"%{connection.ops.prep_for_like_query(t)}%" for t in terms],
    }
    with connection.cursor() as cursor:
        cursor.execute(_HITS_SQL.format(scope=f" AND {OWNED_WORDS_MATCH}" if scoped else ""), params)
        return {row[0] for row in cursor.fetchall()}


def vectors_near(*, user: User, vectors: list[list[float]], exclude: set[int] | frozenset[int]) -> dict[int, float]:
    """The user's items within the farther of the verification's and the residue's distances of the deleted
    vectors (through the indexes), with their distances: what both scoped scans look for, found once."""
    distance = 1.0 - min(settings.DELLM_FORGET_VERIFY_SIMILARITY, settings.DELLM_FORGET_RESIDUE_SIMILARITY)
    return nearest_within(owner_id=user.pk, vectors=vectors, max_distance=distance, exclude=set(exclude))


def verification_scan(
    *,
    user: User,
    terms: list[str],
    vectors: list[list[float]],
    exclude: set[int] | frozenset[int] = frozenset(),
    only: set[int] | None = None,
    full: bool = False,
    near: dict[int, float] | None = None,
) -> dict:
    """Keyword (full-text and substring) and semantic scan of the user's surviving stores (or of the ``only``
    items, e.g. records rebuilt after the deletion): of the items the indexes name as able to hold the deleted
    content, or with ``full``, of every item (see the module's docstring). ``near``: the scoped scan's items
    near the vectors (``vectors_near``), when the caller has them already."""
    terms = [t.strip() for t in terms if t.strip()]
    scoped = only is None and not full
    hits = _keyword_hits(user=user, terms=terms, exclude=exclude, only=only, scoped=scoped)
    semantic: set[int] = set()
    limit = 1.0 - settings.DELLM_FORGET_VERIFY_SIMILARITY
    if scoped:
        if near is None:
            near = nearest_within(owner_id=user.pk, vectors=vectors, max_distance=limit, exclude=set(exclude))
        semantic = {pk for pk, distance in near.items() if distance <= limit}
    else:
        semantic = _within(user=user, vectors=vectors, distance=limit, exclude=exclude, only=only)
    # A question holds no statement of the user's: near in meaning, it is possible residue, not a hit.
    near = Node.objects.filter(pk__in=semantic).values_list("pk", "content")
    semantic -= {pk for pk, text in near if is_question(text)}
    titles = residue_count(user=user, terms=terms) if only is None else 0
    return {
        "keyword_hits": sorted(hits),
        "semantic_hits": sorted(semantic),
        "title_hits": titles,
        "residual_hits": len(hits | semantic) + titles,
    }


def rebuilds_finish(request: DeletionRequest, manifest: Manifest) -> None:
    """Every rebuild is done: note when, and drop the request's working text and vectors."""
    now = timezone.now()
    manifest.rebuilds_completed_at = now.isoformat()
    if request.confirmed_at:
        manifest.timings["time_to_completion_s"] = round((now - request.confirmed_at).total_seconds(), 3)
    request.working = {}


def verify(
    request_pk: RequestId, *, owner_id: int | None = None, full_scan: bool | None = None, progress=None
) -> dict:
    """Scan what survives a wiped request, complete its manifest and audit record; returns the manifest.
    ``full_scan`` scans every surviving item rather than what the indexes name (default:
    DELLM_FORGET_VERIFY_FULL_SCAN). ``owner_id``: the request's owner, where known (the request is then read
    by it)."""
    full = settings.DELLM_FORGET_VERIFY_FULL_SCAN if full_scan is None else full_scan
    if progress is not None:
        progress("verifying")
    started = time.monotonic()
    with transaction.atomic():
        requests = DeletionRequest.objects.filter(pk=request_pk)
        if owner_id is not None:
            requests = requests.filter(owner_id=owner_id)
        request = requests.select_for_update().get()
        if request.status == DeletionStatus.COMPLETED:
            return request.manifest
        if request.status != DeletionStatus.VERIFYING:
            raise ApplicationError("This request has not been executed.", code="not_executed", status=409)
        user = request.owner
        deleted_ids = set(request.target_ids)
        kept = set(request.kept)
        vectors = request.working.get("vectors", [])
        near = vectors_near(user=user, vectors=vectors, exclude=kept) if user is not None and not full else None
        scan = (
            verification_scan(
                user=user, terms=request.working.get("terms", []), vectors=vectors, exclude=kept, full=full,
                near=near,
            )
            if user is not None
            else {"keyword_hits": [], "semantic_hits": [], "title_hits": 0, "residual_hits": 0}
        )
        hard = set(scan["keyword_hits"]) | set(scan["semantic_hits"])
        residue_started = time.monotonic()
        residue = (
            residue_find(
                user=user, tokens=request.working.get("residue", {}), vectors=vectors, exclude=kept, full=full,
                near=near,
            )
            if user is not None
            else {"items": [], "more": 0, "titles": []}
        )
        residue_ms = round((time.monotonic() - residue_started) * 1000, 1)
        if user is not None:  # for the check of records rebuilt after this (dropped with the words)
            request.working["distinctive"] = residue["distinctive"]
        edges = Edge.objects.filter(Q(src_id__in=deleted_ids) | Q(dst_id__in=deleted_ids))
        nodes = Node.objects.filter(pk__in=deleted_ids)
        if user is not None:  # the deleted ids were the user's: what is left of them is too
            edges, nodes = edges.filter(owner=user), nodes.filter(owner=user)
        dangling_edges = edges.count()
        still_there = nodes.count()
        verify_ms = round((time.monotonic() - started) * 1000, 1)
        completed = timezone.now()
        manifest = Manifest.from_dict(request.manifest)
        manifest.request_id = str(request.pk)
        manifest.status = DeletionStatus.COMPLETED.value
        manifest.requested_at = request.created_at.isoformat()
        manifest.confirmed_at = request.confirmed_at.isoformat() if request.confirmed_at else None
        manifest.completed_at = completed.isoformat()
        manifest.mode = request.mode
        manifest.depth = request.depth
        manifest.threshold = request.threshold
        manifest.strict = request.depth is None and not kept
        manifest.kept = sorted(kept)
        manifest.matched = [e["id"] for e in request.plan.get("matched", [])]
        manifest.verification = Verification(
            checked_stores=CHECKED_STORES,
            residual_hits=scan["residual_hits"] + dangling_edges + still_there,
            residual_ids=sorted(hard),
            method=METHOD.format(
                scope=SCOPES["full" if full else "scoped"],
                similarity=settings.DELLM_FORGET_VERIFY_SIMILARITY,
                residue=settings.DELLM_FORGET_RESIDUE_SIMILARITY,
            ),
            possible_residue=[e for e in residue["items"] if e["id"] not in hard],
            possible_residue_titles=residue["titles"],
            possible_residue_more=residue["more"] or None,
            residual_title_hits=scan["title_hits"],
        )
        manifest.timings = {
            "plan_ms": request.plan.get("plan_ms"),
            **manifest.timings,
            "verify_ms": verify_ms,
            "residue_ms": residue_ms,
            "total_s": round((completed - (request.confirmed_at or completed)).total_seconds(), 3),
        }
        request.status = DeletionStatus.COMPLETED
        request.completed_at = completed
        if not manifest.rebuilds_pending:
            # The target text and vectors go with the content they described (kept only while
            # a rebuild is still to be checked).
            rebuilds_finish(request, manifest)
        request.manifest = manifest.to_dict()
        request.save(update_fields=["manifest", "status", "completed_at", "working"])
        audit_completed(request=request, completed_at=completed, residual_hits=manifest.verification.residual_hits)
    return request.manifest


def verification_recheck(request_pk: RequestId) -> dict:
    """Check a completed request again for what can be checked without its words (dropped at completion): the
    residual items by id, the deleted ids and their edges. Title and rebuilt-record hits are carried over."""
    with transaction.atomic():
        request = DeletionRequest.objects.select_for_update().get(pk=request_pk)
        manifest = Manifest.from_dict(request.manifest)
        found = manifest.verification
        if request.status != DeletionStatus.COMPLETED or found is None:
            raise ApplicationError("Only a completed deletion can be checked again.", code="not_completed", status=409)
        deleted_ids = set(request.target_ids)
        found.residual_ids = sorted(Node.objects.filter(pk__in=found.residual_ids).values_list("pk", flat=True))
        found.residual_hits = (
            len(found.residual_ids)
            + Node.objects.filter(pk__in=deleted_ids).count()
            + Edge.objects.filter(Q(src_id__in=deleted_ids) | Q(dst_id__in=deleted_ids)).count()
            + (found.residual_title_hits or 0)
            + (found.rebuilt_residual_hits or 0)
        )
        found.rechecked_at = timezone.now().isoformat()
        request.manifest = manifest.to_dict()
        request.save(update_fields=["manifest"])
        audit_rechecked(request=request, residual_hits=found.residual_hits)
    return request.manifest
