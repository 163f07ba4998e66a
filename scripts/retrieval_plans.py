"""Measure context retrieval's candidate query plans with many users and one heavy user.

Fills the app's own tables (in the database named by DELLM_DB_NAME, which must not be the app's default
one) with synthetic users, items and vectors in a few INSERT ... SELECT statements, then times the
vector ranking under each candidate plan against an exact scan of the user's rows, and the whole
retrieval query (``memory.retrieval.context_retrieve``) as the app runs it.

    DELLM_DB_NAME=dellm_plans python scripts/retrieval_plans.py --users 10000 --items 100 --heavy 100000

Vectors: 384-d, each the sum of one of 500 random topic directions and two of 5,000 random noise
vectors (norm 0.7 each), normalised; a user draws its items from 20 topics of its own, so items of
one topic are about 0.5 similar and queries (a topic of the user's plus fresh noise) find them above
the 0.25 threshold. Words: three topic words and seven from a Zipf-like vocabulary of 20,000 per item.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dellm_site.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from memory import retrieval  # noqa: E402

PREFIX = "plans-"
TOPICS, NOISE, TOPICS_PER_USER = 500, 5000, 20
DIM = settings.DELLM_EMBEDDING_DIMENSIONS


def _sql(statement: str, params=None):
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchall() if cursor.description else None


def _random_vectors(table: str, count: int, scale: float) -> None:
    """``count`` random directions of length ``scale`` (a correlated subquery: one fresh vector per row)."""
    _sql(f"DROP TABLE IF EXISTS {table}")
    _sql(
        f"""CREATE UNLOGGED TABLE {table} AS
        SELECT i AS id, (SELECT l2_normalize(array_agg(random() - 0.5)::vector) FROM generate_series(1, {DIM})
                         WHERE i >= 0) AS v FROM generate_series(0, {count} - 1) i"""
    )
    if scale != 1.0:
        # pgvector has no scalar product: multiply element-wise by a constant vector.
        _sql(f"UPDATE {table} SET v = v * array_fill({scale}::real, ARRAY[{DIM}])::vector")


@transaction.atomic
def load(*, users: int, items: int, heavy: int, ladder: list[int]) -> None:
    """Users ``plans-0..`` with ``items`` each, ``plans-heavy`` with ``heavy``, and one user per ``ladder`` size."""
    if _sql("SELECT 1 FROM auth_user WHERE username = %s", [PREFIX + "heavy"]):
        print("already loaded")
        return
    started = time.monotonic()
    _sql("SET LOCAL maintenance_work_mem = '2GB'")
    _sql("SET CONSTRAINTS ALL IMMEDIATE")  # Django's foreign keys are deferred; an index build needs them checked
    indexes = dict(
        _sql(
            "SELECT indexname, indexdef FROM pg_indexes "
            "WHERE indexname IN ('embedding_retrievable_hnsw', 'embedding_owner_vectors', 'node_content_fts')"
        )
    )
    for name in indexes:
        _sql(f"DROP INDEX {name}")
    _random_vectors("plans_topic", TOPICS, 1.0)
    _random_vectors("plans_noise", NOISE, 0.7)
    sizes = [(f"{PREFIX}{i}", items) for i in range(users)] + [(PREFIX + "heavy", heavy)]
    sizes += [(f"{PREFIX}ladder-{n}", n) for n in ladder]
    _sql("DROP TABLE IF EXISTS plans_size")
    _sql("CREATE UNLOGGED TABLE plans_size (username text, items int)")
    with connection.cursor() as cursor:
        cursor.executemany("INSERT INTO plans_size VALUES (%s, %s)", sizes)
    _sql(
        """INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email, is_staff,
                                  is_active, date_joined)
           SELECT '!', false, username, '', '', '', false, true, now() FROM plans_size"""
    )
    # Words: three of the item's topic, seven from a vocabulary whose frequencies fall off like Zipf's.
    _sql(
        f"""INSERT INTO memory_node (owner_id, kind, content, created_at, retrievable, informative)
        SELECT u.id, 'message',
               (SELECT string_agg(CASE WHEN w <= 3 THEN 't' || t.topic || 'x' || floor(random() * 30)::int
                                       ELSE 'w' || floor(exp(random() * ln(20000)))::int END, ' ')
                FROM generate_series(1, 10) w WHERE g > 0),
               now(), true, true
        FROM plans_size s JOIN auth_user u USING (username), generate_series(1, s.items) g,
             LATERAL (SELECT (u.id * 7 + floor(random() * {TOPICS_PER_USER})::int + g * 0) % {TOPICS} AS topic) t"""
    )
    print(f"nodes loaded in {time.monotonic() - started:.0f} s")
    # The topic is the first word's; the vector is that topic plus two noise vectors, normalised.
    _sql(
        f"""INSERT INTO memory_embedding (node_id, owner_id, vector, backend, created_at)
        SELECT n.id, n.owner_id, l2_normalize(t.v + a.v + b.v), 'plans', now()
        FROM memory_node n JOIN auth_user u ON u.id = n.owner_id AND u.username LIKE '{PREFIX}%%'
        JOIN plans_topic t ON t.id = substring(n.content FROM '^t([0-9]+)x')::int
        JOIN plans_noise a ON a.id = (n.id * 7919) % {NOISE}
        JOIN plans_noise b ON b.id = (n.id * 104729 + 13) % {NOISE}"""
    )
    print(f"vectors loaded in {time.monotonic() - started:.0f} s")
    for name, definition in indexes.items():
        step = time.monotonic()
        _sql(definition)
        print(f"index {name} built in {time.monotonic() - step:.0f} s")
    _sql("ANALYZE memory_node")
    _sql("ANALYZE memory_embedding")
    print(f"loaded {sum(n for _, n in sizes)} items of {len(sizes)} users in {time.monotonic() - started:.0f} s")


def _query_vector(owner_id: int, rng: random.Random) -> str:
    topic = (owner_id * 7 + rng.randrange(TOPICS_PER_USER)) % TOPICS
    row = _sql(
        "SELECT l2_normalize(t.v + a.v + b.v)::text FROM plans_topic t, plans_noise a, plans_noise b "
        "WHERE t.id = %s AND a.id = %s AND b.id = %s",
        [topic, rng.randrange(NOISE), rng.randrange(NOISE)],
    )
    return row[0][0]


def _query_text(owner_id: int, rng: random.Random) -> str:
    topic = (owner_id * 7 + rng.randrange(TOPICS_PER_USER)) % TOPICS
    words = [f"t{topic}x{rng.randrange(30)}", f"w{int(20000 ** rng.random())}", f"w{int(20000 ** rng.random())}"]
    return "What did I say about " + " and ".join(words) + "?"


# The vector ranking of the retrieval query, alone: the user's competing items nearest to the query vector (the
# embedding row carries its node's kind and retrievable-and-informative flag; the HNSW index is partial on it).
_COMPETING = "e.retrievable AND e.kind = 'message'"
VECTOR_SQL = f"""
SELECT e.node_id, e.vector <=> %(vector)s::vector FROM memory_embedding e
WHERE e.owner_id = %(owner)s AND {_COMPETING}
ORDER BY e.vector <=> %(vector)s::vector LIMIT %(pool)s"""
# The index plan taking five times the pool from the index, ranked again by exact distance.
WIDE_SQL = f"""
SELECT node_id, distance FROM (
    SELECT e.node_id, e.vector <=> %(vector)s::vector AS distance
    FROM memory_embedding e
    WHERE e.owner_id = %(owner)s AND {_COMPETING}
    ORDER BY e.vector <=> %(vector)s::vector LIMIT %(pool)s * 5
) wide ORDER BY distance LIMIT %(pool)s"""
EXACT_SQL = f"""
WITH mine AS MATERIALIZED (
    SELECT e.node_id, e.vector <=> %(vector)s::vector AS distance FROM memory_embedding e
    WHERE e.owner_id = %(owner)s AND {_COMPETING}
)
SELECT node_id, distance FROM mine ORDER BY distance, node_id LIMIT %(pool)s"""


def _plans() -> dict[str, tuple[str, dict]]:
    """name -> (SQL, settings for the transaction)."""
    relaxed = {"hnsw.iterative_scan": "relaxed_order"}
    forced = {**relaxed, "enable_sort": "off"}  # what memory.retrieval's index plan sets
    return {
        "exact (materialized owner rows)": (EXACT_SQL, {}),
        "planner's choice, iterative off": (VECTOR_SQL, {"hnsw.iterative_scan": "off", "hnsw.ef_search": "40"}),
        "planner's choice, relaxed, ef 100": (VECTOR_SQL, {**relaxed, "hnsw.ef_search": "100"}),
        "hnsw forced, strict, ef 100": (VECTOR_SQL, {"hnsw.iterative_scan": "strict_order", "enable_sort": "off",
                                                      "hnsw.ef_search": "100"}),
        "hnsw forced, relaxed, ef 40": (VECTOR_SQL, {**forced, "hnsw.ef_search": "40"}),
        "hnsw forced, relaxed, ef 100": (VECTOR_SQL, {**forced, "hnsw.ef_search": "100"}),
        "hnsw forced, relaxed, ef 200": (VECTOR_SQL, {**forced, "hnsw.ef_search": "200"}),
        "hnsw forced, relaxed, ef 400": (VECTOR_SQL, {**forced, "hnsw.ef_search": "400"}),
        "hnsw forced, relaxed, ef 800": (VECTOR_SQL, {**forced, "hnsw.ef_search": "800"}),
        "hnsw forced, relaxed, ef 100, 5 x pool": (WIDE_SQL, {**forced, "hnsw.ef_search": "100"}),
        "hnsw forced, relaxed, ef 200, 5 x pool (the app's)": (WIDE_SQL, {**forced, "hnsw.ef_search": "200"}),
    }


def _timed(sql: str, params: dict, gucs: dict) -> tuple[float, list[int]]:
    with transaction.atomic(), connection.cursor() as cursor:
        for name, value in gucs.items():
            cursor.execute("SELECT set_config(%s, %s, true)", [name, value])
        started = time.perf_counter()
        cursor.execute(sql, params)
        rows = cursor.fetchall()
        elapsed = (time.perf_counter() - started) * 1000
        # A relaxed-order scan returns its rows nearly sorted: rank them by distance (the query's fusion does).
        return elapsed, [pk for pk, _ in sorted(rows, key=lambda row: (row[1], row[0]))]


def _p(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def measure(
    *,
    queries: int,
    small_users: int,
    plans: list[str] | None,
    seed: int,
    only: list[str] | None = None,
    context: bool = True,
) -> None:
    rng = random.Random(seed)
    users = {u.username: u for u in get_user_model().objects.filter(username__startswith=PREFIX)}
    groups = {
        "heavy": [users[PREFIX + "heavy"]],
        "many small": rng.sample([u for name, u in users.items() if name[len(PREFIX):].isdigit()], small_users),
    }
    for name in sorted(users):
        if name.startswith(PREFIX + "ladder-"):
            groups[name[len(PREFIX):]] = [users[name]]
    groups = {k: v for k, v in groups.items() if not only or k in only}
    chosen = {k: v for k, v in _plans().items() if plans is None or any(p in k for p in plans)}
    print(f"{'group':<14} {'plan':<44} {'p50 ms':>7} {'p95 ms':>7} {'recall@5':>8}")
    for group, members in groups.items():
        cases = []
        for i in range(queries):
            owner = members[i % len(members)]
            cases.append((owner, {"owner": owner.pk, "vector": _query_vector(owner.pk, rng), "pool": 20}))
        truth = [_timed(EXACT_SQL, params, {})[1][:5] for _, params in cases]
        for plan, (sql, gucs) in chosen.items():
            times, recall = [], []
            for (_, params), exact in zip(cases, truth, strict=True):
                _timed(sql, params, gucs)  # warm
                elapsed, ids = _timed(sql, params, gucs)
                times.append(elapsed)
                recall.append(len(set(ids[:5]) & set(exact)) / max(1, len(exact)))
            print(f"{group:<14} {plan:<44} {statistics.median(times):7.2f} {_p(times, 0.95):7.2f}"
                  f" {statistics.mean(recall):8.3f}")
        if not context:
            continue
        # The whole retrieval as the app runs it (vector and word ranking, fused), with a question's words,
        # under the configured per-user plan and with every user forced onto one plan; recall@5 of the
        # context against the all-exact one.
        inputs = [
            (owner, [float(x) for x in params["vector"].strip("[]").split(",")], _query_text(owner.pk, rng))
            for owner, params in cases
        ]
        configured = settings.DELLM_RETRIEVAL_EXACT_MAX_ITEMS
        reference = None
        for label, limit in (("exact", 10**9), ("index", -1), (f"per user (<= {configured}: exact)", configured)):
            settings.DELLM_RETRIEVAL_EXACT_MAX_ITEMS = limit
            times, contexts = [], []
            for owner, vector, text in inputs:
                retrieval.context_retrieve(user=owner, query_vector=vector, text=text)  # warm
                started = time.perf_counter()
                found = retrieval.context_retrieve(user=owner, query_vector=vector, text=text)
                times.append((time.perf_counter() - started) * 1000)
                contexts.append({s.node.pk for s in found})
            settings.DELLM_RETRIEVAL_EXACT_MAX_ITEMS = configured
            reference = reference or contexts
            pairs = zip(contexts, reference, strict=True)
            recall = statistics.mean(len(c & r) / len(r) if r else 1.0 for c, r in pairs)
            print(f"{group:<14} {'context_retrieve, ' + label:<44} {statistics.median(times):7.2f}"
                  f" {_p(times, 0.95):7.2f} {recall:8.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=10000)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--heavy", type=int, default=100000)
    parser.add_argument("--ladder", default="1000,3000,10000,30000", help="one more user per size")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--small-users", type=int, default=100, help="small users sampled for the many-users case")
    parser.add_argument("--plans", nargs="*", help="only plans whose names contain these")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--groups", nargs="*", help="only these groups (heavy, 'many small', ladder-N)")
    parser.add_argument("--no-context", action="store_true", help="the vector ranking's plans only")
    parser.add_argument("--skip-load", action="store_true")
    args = parser.parse_args()
    if settings.DATABASES["default"]["NAME"] in ("dellm", "dellm_bench"):
        sys.exit("Set DELLM_DB_NAME to a database of its own: this fills it with synthetic users.")
    if not args.skip_load:
        ladder = [int(n) for n in args.ladder.split(",") if n]
        load(users=args.users, items=args.items, heavy=args.heavy, ladder=ladder)
    measure(queries=args.queries, small_users=args.small_users, plans=args.plans, seed=args.seed, only=args.groups,
            context=not args.no_context)


if __name__ == "__main__":
    main()
