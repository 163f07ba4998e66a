"""Time the vector ranking of context retrieval under each plan, and the whole retrieval query, on the full-scale
benchmark dataset (``manage.py dellm_bench --scale full`` loads it into ``<name>_scale_full``).

    DELLM_DB_NAME=dellm_bench_scale_full python scripts/retrieval_scale_plans.py --sizes 1000 10000 100000

For each history size of the scaling curve and each plan (``exact``, ``index``): the vector ranking alone (the
``nearest`` part of ``memory.retrieval``'s query) and the whole query, p50 / p95 / max ms over ``--queries`` queries
about topics the user's history holds, each run twice and timed the second time. Read-only.
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

from evaluation.bench.scale import SPECS, username  # noqa: E402
from evaluation.bench.scale_bench import queries_for, queries_make  # noqa: E402
from memory import retrieval  # noqa: E402


def _params(owner_id: int, query) -> dict:
    return {
        "text": query.text, "owner": owner_id, "kinds": list(settings.DELLM_CONTEXT_KINDS), "exclude": [],
        "vector": retrieval.vector_literal(query.vector), "max_distance": 1 - settings.DELLM_CONTEXT_MIN_SIMILARITY,
        "pool": settings.DELLM_CONTEXT_TOP_K * retrieval.POOL_PER_SLOT, "rrf_k": retrieval.RRF_K,
        "rare_share": retrieval.RARE_SHARE, "rare_floor": retrieval.RARE_FLOOR, "rare_max": retrieval.RARE_MAX,
        "corpus": retrieval.CORPUS_MAX, "widen": retrieval.INDEX_WIDEN,
    }


def _ms(sql: str, plan: str, params: dict) -> float:
    with transaction.atomic(), connection.cursor() as cursor:
        retrieval.query_settings(cursor, plan)
        started = time.perf_counter()
        cursor.execute(sql, params)
        cursor.fetchall()
        return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SPECS["full"].curve))
    parser.add_argument("--queries", type=int, default=30)
    args = parser.parse_args()
    spec = SPECS["full"]
    pool = queries_make(spec, 10, per_topic=True)
    for size in args.sizes:
        user = get_user_model().objects.get(username=username(spec, size=size))
        queries = queries_for(user, pool, args.queries, random.Random(size))
        for plan in ("exact", "index"):
            vector_sql = "WITH " + retrieval._NEAREST_SQL[plan].rstrip().rstrip(",") + " SELECT * FROM nearest"
            for part, sql in (("vector ranking", vector_sql), ("whole query", retrieval._context_sql(plan))):
                times = []
                for query in queries:
                    _ms(sql, plan, _params(user.pk, query))  # warm
                    times.append(_ms(sql, plan, _params(user.pk, query)))
                times.sort()
                p95 = times[max(0, round(0.95 * len(times)) - 1)]
                print(f"{size:>7} items  {plan:<5}  {part:<14}  p50 {statistics.median(times):6.1f}  "
                      f"p95 {p95:6.1f}  max {times[-1]:6.1f} ms")


if __name__ == "__main__":
    main()
