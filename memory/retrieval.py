"""Context construction: which stored items the LLM is given for a new message.

The paper's rules hold: the user's own retrievable items only, a top-k and a similarity threshold, no
recency window; the context is exactly what the LLM is given, and every item of it gets its edge.
Within them, the k slots go to the items most likely to hold what the message needs:

1. Only items that hold information compete (``Node.informative``, decided once when an item is
   stored by ``memory.information``): questions, acknowledgements and "nothing found" replies never
   take a slot.
2. Hybrid ranking, in one SQL query: the vector ranking (cosine similarity, pgvector) and a word
   ranking (BM25 over Postgres full text, on the message's words that few of the user's items hold:
   names, numbers, rare words) are fused by reciprocal rank fusion. Every item kept still passes the
   similarity threshold.
3. Diversity: near-duplicates share one slot, which goes to the best-ranked of them: items with the
   same or almost the same words, and a fact and the message it was extracted from (not a correction
   the user wrote). An item built from several others (a summary from the messages it summarises, a
   reply from its context) says nothing about the user that they don't, and they are all still
   there: it yields to any of them that is a candidate, so a new reply depends on the specific
   items, not on everything behind them.
4. A message that only states something ("I have a tortoise.") needs little context: the few items
   about the same thing (DELLM_CONTEXT_STATEMENT_TOP_K above DELLM_CONTEXT_STATEMENT_MIN_SIMILARITY),
   enough to notice a change or a repeat. Questions and requests get the full top-k.

Every item given to the LLM gets its edge, so the smaller and more specific the context, the fewer
replies a later deletion takes with it that never used the forgotten item.

How the query runs does not change what it returns (beyond the HNSW index's approximation): with many users
the owner filter decides the cost, so the vector ranking takes a plan per user by the size of their history
(``vector_plan``: every vector compared for a small one, read from the owner index that includes them; the HNSW
index with an iterative scan for a large one), and the word ranking finds the user's items holding a word through
an index of owner-prefixed words of the items that may enter a context (``node_owner_words``: one entry per user and
word; a word found too common to rank by in a large store is not counted again for a while). The embedding row
carries what the ranking filters on (owner, kind, and retrievable AND informative, kept by
triggers), so the vector ranking never reads memory_node, and the HNSW index holds only the vectors that may enter a
context.
``scripts/retrieval_plans.py`` measures the plans; README, "Retrieval at scale", has the numbers.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from django.conf import settings
from django.db import connection, transaction

from dellm_site.ai.embedding import get_embedder

from .information import only_states
from .models import Node, NodeKind

if TYPE_CHECKING:
    from dellm_site.types import User

# Reciprocal rank fusion's constant (Cormack et al., 2009): 1 / (RRF_K + rank) per ranking.
RRF_K = 60
# Candidates taken from each ranking before fusion and the near-duplicate step, per context slot.
POOL_PER_SLOT = 4
# A word held by more of the user's items than this share (or this many, in a small store; or more than
# RARE_MAX, in a large one) is too common to rank by: the word ranking uses only the rarer ones. The cap
# bounds what counting a word's holders costs at 100,000 items (scripts/retrieval_plans.py).
RARE_SHARE = 0.1
RARE_FLOOR = 3
RARE_MAX = 100
# A word too common to rank by stays so while the store grows (it only gains holders): once a query finds one in a
# store of at least COMMON_WORDS_MIN_ITEMS (where the limit is RARE_MAX, whatever the size), the user's later queries
# skip counting its holders (a common word's whole index entry read, about a millisecond a word at 100,000 items)
# for COMMON_WORDS_TTL_S, in this process. A deletion may make one rare again: it is counted again once the entry
# expires (this changes only how the user's surviving items are ranked). At most COMMON_WORDS_USERS users are kept.
COMMON_WORDS_MIN_ITEMS = 5000
COMMON_WORDS_TTL_S = 300.0
COMMON_WORDS_USERS = 10000
# The store's size in BM25's idf is counted up to this many items (counting all of a large store's items costs
# more than the rest of the query; past it, a word's weight depends on how many items hold it, not on the size).
CORPUS_MAX = 10000
# The index plan takes this many times the pool from the HNSW index before ranking by exact distance: recall@5
# against an exact scan rose from 0.90 to 0.955 for a user with 1% of the vectors (scripts/retrieval_plans.py).
INDEX_WIDEN = 5
# Two items whose sets of words (stemmed, without stop words) overlap this much say the same thing.
NEAR_DUPLICATE_OVERLAP = 0.6

# One query: both rankings over the user's informative, retrievable items, fused; the threshold applies to
# every item. The vector ranking follows the user's plan (below). The word ranking is BM25 (k1 = 1.2,
# b = 0.75) over the query's rare words: those held by at most RARE_SHARE of the user's items (and by at
# least one); a word most items hold adds almost nothing to BM25 and would cost a scan of them. The user's
# items holding a word are found through the GIN index of owner-prefixed words (node_owner_words: _OWNER_WORDS is
# the indexed expression, "<owner>:<word>" per word of an item), so one entry of the index lists exactly the user's
# items holding the word (no intersection with every item of the user's); lengths are compared with the matched
# items' mean.
_DOCUMENT = "to_tsvector('english'::regconfig, COALESCE(n.content, ''::text))"
_OWNER_WORDS = "memory_owner_words(n.owner_id, n.content)"
# For other scans of one user's items by their words, of every kind (verification, the residue scan, the target
# resolver): ``n`` holds the words of ``%(query)s``, a tsquery of the user's owner-prefixed lexemes (``owner_term``,
# or in SQL ``owner_term_sql``), through the GIN index node_owner_lexemes (the same words as a tsvector, over every
# item): a word, or a prefix ('42:lisb':*), reads only the user's entries, never another user's.
OWNED_WORDS_MATCH = f"array_to_tsvector({_OWNER_WORDS}) @@ %(query)s::tsquery"


def owner_term(owner_id: int, lexeme: str, *, prefix: bool = False) -> str:
    """``lexeme`` (as to_tsvector stores it, or a word as written) of the user's, as a term of a tsquery for
    OWNED_WORDS_MATCH; ``prefix``: matching every stored word that starts with it."""
    quoted = "'" + f"{owner_id}:{lexeme}".replace("\\", "\\\\").replace("'", "''") + "'"
    return quoted + (":*" if prefix else "")


def owned_holding(query_sql: str, columns: str = "n.id") -> str:
    """A subquery of the items whose owner-prefixed words match the tsquery ``query_sql`` (SQL), with ``columns``
    and ``owner_id``, for the caller to filter by owner: read through node_owner_lexemes alone. OFFSET 0 keeps the
    caller's owner filter out of the scan, where the planner would intersect the words' entries with every one of
    the owner's items from the owner index (100,000 of them for a heavy user, for every word looked up: 4 ms a
    word, where the word alone costs 1); the owner-prefixed words already keep to the owner's items."""
    match = OWNED_WORDS_MATCH.replace("%(query)s", query_sql)
    return f"(SELECT {columns}, n.owner_id FROM memory_node n WHERE {match} OFFSET 0)"


def owner_term_sql(lexeme_sql: str) -> str:
    """The SQL of a tsquery of one owner-prefixed lexeme (``lexeme_sql``, an SQL text expression), for
    OWNED_WORDS_MATCH: of ``%(owner)s``'s."""
    return f"quote_literal(%(owner)s::text || ':' || {lexeme_sql})"


# The user's items that compete, where the owner-prefixed word already keeps to the user's items (so the planner
# does not intersect the word's entries with all of the user's rows from the owner index).
_COMPETING_OWNED = """n.retrievable AND n.informative AND n.kind = ANY(%(kinds)s::text[])
      AND NOT (n.id = ANY(%(exclude)s::bigint[]))"""
# The user's vectors that compete, without a join to memory_node: the embedding row carries its node's owner, kind
# and ``retrievable AND informative`` (memory.models.Embedding, kept by triggers). The index plan's HNSW index and
# the exact plan's owner index are both partial on ``e.retrievable`` (so it is in every such query, literally).
_VECTORS_COMPETING = """e.owner_id = %(owner)s AND e.retrievable AND e.kind = ANY(%(kinds)s::text[])
      AND NOT (e.node_id = ANY(%(exclude)s::bigint[]))"""
# The vector ranking, by the user's plan (``vector_plan``): ``exact`` computes the distance of every one of the
# user's competing vectors, read by an index-only scan of the owner index that includes them, as one minus their
# inner product with the message's (every stored vector has unit length, ``Embedder``'s contract, so that is the
# cosine distance: half the arithmetic of ``<=>``, which also divides by both norms); ordered by it, the query
# cannot use the shared HNSW index (built for ``<=>``), which would walk other users' vectors to find this user's;
# ``index`` walks the HNSW index with an iterative scan (filtering by owner as it goes; relaxed order), takes
# INDEX_WIDEN times the pool from it and ranks them again by exact distance (the index's approximate order loses
# some of the nearest otherwise).
_NEAREST_SQL = {
    "exact": f"""
nearest AS (
    SELECT e.node_id AS id, 1 + (e.vector <#> %(vector)s::vector) AS distance FROM memory_embedding e
    WHERE {_VECTORS_COMPETING}
    ORDER BY distance, id LIMIT %(pool)s
),""",
    "index": f"""
wide AS MATERIALIZED (
    SELECT e.node_id AS id, e.vector <=> %(vector)s::vector AS distance FROM memory_embedding e
    WHERE {_VECTORS_COMPETING}
    ORDER BY e.vector <=> %(vector)s::vector
    LIMIT %(pool)s * %(widen)s
),
nearest AS (SELECT id, distance FROM wide ORDER BY distance, id LIMIT %(pool)s),""",
}
_CONTEXT_SQL = """
WITH {nearest}
by_vector AS (
    SELECT id, row_number() OVER (ORDER BY distance, id) AS rank FROM nearest WHERE distance <= %(max_distance)s
),
corpus AS (SELECT %(corpus)s::bigint AS items),
rare_limit AS (
    SELECT least(greatest(%(rare_floor)s, items * %(rare_share)s), %(rare_max)s) AS most FROM corpus
),
frequency AS MATERIALIZED (
    SELECT lexeme, (
        SELECT count(*) FROM (
            SELECT FROM memory_node n
            WHERE {owner_words} @> ARRAY[%(owner)s::text || ':' || lexeme] AND {competing_owned}
            LIMIT (SELECT most + 1 FROM rare_limit)
        ) holding
    ) AS df
    FROM unnest(tsvector_to_array(to_tsvector('english', %(text)s))) AS lexeme
    WHERE lexeme <> ALL(%(common)s::text[])
),
rare AS (
    SELECT f.lexeme, ln(1 + (c.items - f.df + 0.5) / (f.df + 0.5)) AS idf
    FROM frequency f, corpus c, rare_limit l
    WHERE f.df BETWEEN 1 AND l.most
),
matched AS MATERIALIZED (
    SELECT n.id, length(n.content) AS size, {document} AS doc FROM memory_node n
    WHERE {owner_words} && (SELECT array_agg(%(owner)s::text || ':' || lexeme) FROM rare)
      AND {competing_owned}
),
by_words AS (
    SELECT m.id, row_number() OVER (
        ORDER BY sum(r.idf * t.tf * 2.2 / (t.tf + 1.2 * (0.25 + 0.75 * m.size / a.size))) DESC, m.id
    ) AS rank
    FROM matched m
    CROSS JOIN LATERAL (SELECT lexeme, coalesce(array_length(positions, 1), 1) AS tf FROM unnest(m.doc)) t
    JOIN rare r USING (lexeme), (SELECT avg(size) AS size FROM matched) a
    GROUP BY m.id ORDER BY rank LIMIT %(pool)s
),
fused AS (
    SELECT id, sum(1.0 / (%(rrf_k)s + rank)) AS fused
    FROM (SELECT id, rank FROM by_vector UNION ALL SELECT id, rank FROM by_words) ranks GROUP BY id
)
SELECT n.*, 1 - (e.vector <=> %(vector)s::vector) AS similarity, f.fused,
       tsvector_to_array({document}) AS words,
       ARRAY(SELECT src_id FROM provenance_edge WHERE dst_id = n.id) AS sources,
       coalesce(fact.rectified, false) AS rectified,
       (SELECT array_agg(q.lexeme) FROM frequency q, rare_limit l WHERE q.df > l.most) AS common_words
FROM fused f JOIN memory_node n ON n.id = f.id JOIN memory_embedding e ON e.node_id = f.id
     LEFT JOIN memory_fact fact ON fact.node_ptr_id = n.id
WHERE e.vector <=> %(vector)s::vector <= %(max_distance)s
ORDER BY f.fused DESC, similarity DESC, n.id
"""

# How many items the user has, counted no further than needed (an index-only scan of at most that many entries of
# the owner index): once for both the plan and BM25's store size.
_ITEMS_UP_TO_SQL = "SELECT count(*) FROM (SELECT FROM memory_node WHERE owner_id = %s LIMIT %s) mine"
# Settings for the query's transaction: no parallel workers (starting them costs more than these queries take);
# for the index plan, pgvector's iterative scan (>= 0.8: keep scanning until enough of the user's rows passed
# the filter; relaxed order, ranked again by exact distance), a wider candidate list for recall, and no sort
# where the index can give the order (else the planner sorts a mid-sized history's rows read through the owner
# index, which is what this plan is chosen to avoid; the query's other sorts have no alternative and stay).
_QUERY_SETTINGS_SQL = "SELECT set_config('max_parallel_workers_per_gather', '0', true)"
_CONTEXT_SCAN_LIMIT_SQL = "SELECT set_config('hnsw.max_scan_tuples', %s, true)"
_INDEX_SCAN_SQL = (
    "SELECT set_config('max_parallel_workers_per_gather', '0', true), "
    "set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', %s, true), "
    "set_config('enable_sort', 'off', true)"
)


def vector_plan(*, owner_id: int) -> str:
    """How to rank the user's vectors: ``exact`` (every one of their retrievable rows, an index-only scan of the
    owner index that includes the vectors) for a history of at most DELLM_RETRIEVAL_EXACT_MAX_ITEMS items, else
    ``index`` (the shared HNSW index of retrievable vectors, with an iterative scan). An exact scan costs a distance
    per item (and an index page per few); the index walk costs about pool x (retrievable vectors / the user's)
    rows, each a heap read, so small histories are scanned and large ones walked (scripts/retrieval_plans.py)."""
    return _plan_for(_items_up_to(owner_id, settings.DELLM_RETRIEVAL_EXACT_MAX_ITEMS + 1))


def _items_up_to(owner_id: int, limit: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute(_ITEMS_UP_TO_SQL, [owner_id, limit])
        return cursor.fetchone()[0]


def _plan_for(items: int) -> str:
    return "exact" if items <= settings.DELLM_RETRIEVAL_EXACT_MAX_ITEMS else "index"


def index_scan_settings(cursor) -> None:
    """Configure the HNSW scan for the current transaction (see ``vector_plan``)."""
    cursor.execute(_INDEX_SCAN_SQL, [str(settings.DELLM_RETRIEVAL_EF_SEARCH)])


def query_settings(cursor, plan: str) -> None:
    """Configure the current transaction for a context query under ``plan``. The index plan's walk is bounded
    (DELLM_RETRIEVAL_MAX_SCAN_TUPLES): a message about something the user never spoke of has few of their vectors
    near it, and the walk would otherwise read pgvector's default 20,000 tuples (70 ms for the benchmark's heavy
    user) to find candidates that are all far from it. Scans that must find everything near a vector
    (``nearest_within``: verification, the residue scan) keep the default."""
    if plan == "index":
        index_scan_settings(cursor)
        cursor.execute(_CONTEXT_SCAN_LIMIT_SQL, [str(settings.DELLM_RETRIEVAL_MAX_SCAN_TUPLES)])
    else:
        cursor.execute(_QUERY_SETTINGS_SQL)


def _context_sql(plan: str) -> str:
    return _CONTEXT_SQL.format(
        nearest=_NEAREST_SQL[plan],
        document=_DOCUMENT,
        competing_owned=_COMPETING_OWNED,
        owner_words=_OWNER_WORDS,
    )


_common_words: OrderedDict[int, tuple[float, frozenset[str]]] = OrderedDict()
_common_lock = threading.Lock()


def _known_common(owner_id: int) -> list[str]:
    """The words known to be too common to rank by in the user's store (see COMMON_WORDS_MIN_ITEMS)."""
    with _common_lock:
        entry = _common_words.get(owner_id)
        if entry is None or entry[0] <= time.monotonic():
            _common_words.pop(owner_id, None)
            return []
        _common_words.move_to_end(owner_id)
        return sorted(entry[1])


def _learn_common(owner_id: int, words: list[str] | None) -> None:
    if not words:
        return
    with _common_lock:
        expires, known = _common_words.get(owner_id, (time.monotonic() + COMMON_WORDS_TTL_S, frozenset()))
        _common_words[owner_id] = (expires, known | frozenset(words))
        _common_words.move_to_end(owner_id)
        while len(_common_words) > COMMON_WORDS_USERS:
            _common_words.popitem(last=False)


@dataclass(frozen=True)
class ScoredNode:
    """One context item and its cosine similarity to the message (what the influence panel shows)."""

    node: Node
    score: float


def _extracted_from(fact: Node, source: Node) -> bool:
    """A fact extracted from ``source`` (a user's correction of it says something else)."""
    return fact.kind == NodeKind.FACT and not fact.rectified and source.pk in fact.sources


def _near_duplicates(a: Node, b: Node) -> bool:
    """The same or almost the same words, or a fact and the message it was extracted from."""
    if _extracted_from(a, b) or _extracted_from(b, a):
        return True
    words_a, words_b = set(a.words), set(b.words)
    if not words_a or not words_b:
        return a.content.strip().lower() == b.content.strip().lower()
    return len(words_a & words_b) / len(words_a | words_b) >= NEAR_DUPLICATE_OVERLAP


def context_retrieve(
    *,
    user: User,
    query_vector: np.ndarray,
    text: str = "",
    exclude_ids: set[int] | frozenset[int] = frozenset(),
    top_k: int | None = None,
    min_similarity: float | None = None,
) -> list[ScoredNode]:
    """The context of a message: at most ``top_k`` of the user's informative items at or above
    ``min_similarity`` to ``query_vector``, ranked by vector and word rank fused (``text`` is the
    message; without it only the vector ranks), one per group of near-duplicates. The default
    threshold is higher for a message that only states something (it needs the items about the
    same thing, to notice a change, not the best of everything else)."""
    statement = bool(text) and only_states(text)
    if top_k is None:
        top_k = settings.DELLM_CONTEXT_STATEMENT_TOP_K if statement else settings.DELLM_CONTEXT_TOP_K
    if min_similarity is None:
        min_similarity = (
            settings.DELLM_CONTEXT_STATEMENT_MIN_SIMILARITY if statement else settings.DELLM_CONTEXT_MIN_SIMILARITY
        )
    if top_k <= 0:
        return []
    params = {
        "text": text,
        "owner": user.pk,
        "kinds": list(settings.DELLM_CONTEXT_KINDS),
        "exclude": sorted(exclude_ids),
        "vector": vector_literal(query_vector),
        "max_distance": 1.0 - min_similarity,
        "pool": top_k * POOL_PER_SLOT,
        "rrf_k": RRF_K,
        "rare_share": RARE_SHARE,
        "rare_floor": RARE_FLOOR,
        "rare_max": RARE_MAX,
        "widen": INDEX_WIDEN,
    }
    items = _items_up_to(user.pk, max(settings.DELLM_RETRIEVAL_EXACT_MAX_ITEMS + 1, CORPUS_MAX))
    plan = _plan_for(items)
    params["corpus"] = min(items, CORPUS_MAX)
    remembers = items >= COMMON_WORDS_MIN_ITEMS
    params["common"] = _known_common(user.pk) if remembers else []
    with transaction.atomic():
        with connection.cursor() as cursor:
            query_settings(cursor, plan)
        candidates = list(Node.objects.raw(_context_sql(plan), params))
    if remembers and candidates:
        _learn_common(user.pk, candidates[0].common_words)
    present = {candidate.pk for candidate in candidates}
    chosen: list[Node] = []
    for candidate in candidates:
        if candidate.kind != NodeKind.FACT and present.intersection(candidate.sources):
            continue  # a summary or a reply yields to the items it was built from: they are the specific ones
        if not any(_near_duplicates(candidate, kept) for kept in chosen):
            chosen.append(candidate)
            if len(chosen) == top_k:
                break
    return [ScoredNode(node=node, score=float(node.similarity)) for node in chosen]


def context_for(*, user: User, text: str, exclude_ids: set[int] | frozenset[int] = frozenset()) -> list[ScoredNode]:
    """context(m) minus the user message itself: the user's stored items that best serve ``text``."""
    return context_retrieve(user=user, query_vector=get_embedder().embed_one(text), text=text, exclude_ids=exclude_ids)


# Items of the user's within a distance of any of several vectors. For a small history, every row against every
# vector at once (an index-only scan of the owner index, which includes the vectors). For a large one, the
# retrievable rows through the HNSW index (iterative scan), the nearest of each vector, taken ever further until the
# farthest one taken is beyond the distance; the others (not in the partial index: questions, acknowledgements,
# hidden items) by the same exact scan as a small history's, restricted to them. The exact scans take the cosine
# distance as one minus the inner product (stored vectors have unit length; see _NEAREST_SQL).
_WITHIN_EXACT_SQL = """
SELECT id, distance FROM (
    SELECT e.node_id AS id, (SELECT 1 + min(e.vector <#> q.v) FROM unnest(%(vectors)s::vector[]) q(v)) AS distance
    FROM memory_embedding e
    WHERE e.owner_id = %(owner)s AND e.retrievable = ANY(%(retrievable)s::boolean[])
      AND NOT (e.node_id = ANY(%(exclude)s::bigint[]))
) nearest WHERE distance <= %(distance)s
"""
_WITHIN_INDEX_SQL = """
SELECT node_id, distance FROM (
    SELECT e.node_id, e.vector <=> %(vector)s::vector AS distance FROM memory_embedding e
    WHERE e.owner_id = %(owner)s AND e.retrievable AND NOT (e.node_id = ANY(%(exclude)s::bigint[]))
    ORDER BY e.vector <=> %(vector)s::vector LIMIT %(limit)s
) nearest ORDER BY distance
"""
WITHIN_FIRST = 50
WITHIN_MAX = 3200


def vector_literal(vector) -> str:
    """A vector as pgvector's text form, for a query parameter cast to ``vector``."""
    return "[" + ",".join(f"{float(x):.7g}" for x in vector) + "]"


def _within_index(cursor, *, literal: str, params: dict, found: dict[int, float]) -> None:
    """The retrievable rows within the distance of one vector, through the HNSW index, into ``found``."""
    limit = WITHIN_FIRST
    while True:
        cursor.execute(_WITHIN_INDEX_SQL, {**params, "vector": literal, "limit": limit})
        rows = cursor.fetchall()
        for pk, distance in rows:
            if distance <= params["distance"] and distance < found.get(pk, 2.0):
                found[pk] = float(distance)
        if len(rows) < limit or rows[-1][1] > params["distance"] or limit >= WITHIN_MAX:
            return
        limit *= 2


def nearest_within(
    *, owner_id: int, vectors: list, max_distance: float, exclude: set[int] | frozenset[int] = frozenset()
) -> dict[int, float]:
    """The user's items (their vectors) within cosine ``max_distance`` of any of ``vectors``, each with its
    smallest distance: what a scan of every one of the user's vectors finds, through the plan that
    ``vector_plan`` chooses (for a large history, at most WITHIN_MAX retrievable items per vector, the nearest)."""
    if not vectors:
        return {}
    literals = [vector_literal(v) for v in vectors]
    params = {"owner": owner_id, "exclude": sorted(exclude), "distance": max_distance, "vectors": literals}
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_QUERY_SETTINGS_SQL)
        if vector_plan(owner_id=owner_id) == "exact":
            cursor.execute(_WITHIN_EXACT_SQL, {**params, "retrievable": [True, False]})
            return {pk: float(distance) for pk, distance in cursor.fetchall()}
        cursor.execute(_WITHIN_EXACT_SQL, {**params, "retrievable": [False]})
        found = {pk: float(distance) for pk, distance in cursor.fetchall()}
        index_scan_settings(cursor)
        for literal in literals:
            _within_index(cursor, literal=literal, params=params, found=found)
    return found
