"""The benchmarks at scale: each a median and a p95 over many runs, each with its baseline measured in
the same run.

- Retrieval (``context_retrieve``, the chat's own context construction) for the heavy user and for many
  small users; baseline and recall reference: the same call with the vector indexes of the embedding table
  dropped inside a rolled-back transaction, so the same query runs as an exact scan of the user's items.
- Dep and explanation paths (the preview's plan) for ~100-item deletions; baseline: the plan as it was
  computed when this benchmark was written (``baseline_plan``).
- Forget preview and confirm (the real services; confirm with verification, rebuilds and the maintenance it
  triggers, all in-process as without workers) of ~100-item deletions at every history size of the
  scaling curve; baseline: the same at the smallest size (1,000 items).
- Turn overhead at every history size of the curve (``evaluation.bench.turn``: chat turns with the instant LLM).
- Context tokens per turn: the full-memory baseline (every earlier message in context) over DeLLM's.
"""

from __future__ import annotations

import random
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from dellm_site.ai.embedding import get_embedder
from memory.models import Node, TaskRun
from memory.retrieval import context_retrieve
from provenance.forgetting import planning
from provenance.forgetting import services as forget
from provenance.forgetting.matching import Match
from provenance.selectors import dep_ids

from . import scale_texts as texts
from .baseline_plan import plan_baseline
from .scale import ScaleSpec, tokens_username, username
from .timing import entry, run_ms, summary
from .turn import turn_overhead_runs


@dataclass(frozen=True)
class Query:
    text: str
    vector: object
    topic: int = -1


def queries_make(spec: ScaleSpec, count: int, *, per_topic: bool = False) -> list[Query]:
    """Fresh questions (three in four) and statements about the dataset's topics, embedded for real: ``count`` on
    random topics, or with ``per_topic`` ``count`` on each topic (in topic order)."""
    rng = random.Random(spec.seed + 99)
    made, topics = [], []
    for i in range(count * spec.topics if per_topic else count):
        topic = i // count if per_topic else rng.randrange(spec.topics)
        templates = texts.QUESTIONS if i % 4 else texts.STATEMENTS
        made.append(texts.render(rng.choice(templates), texts.TOPICS[topic], rng))
        topics.append(topic)
    vectors = get_embedder().embed(made)
    return [Query(t, v, k) for t, v, k in zip(made, vectors, topics, strict=True)]


_TOPIC_WORDS = [re.compile("|".join(rf"\b{re.escape(word)}\b" for word in topic)) for topic in texts.TOPICS]


def topics_of(user) -> list[int]:
    """The topics the user's own messages are about (each history talks about a few favourite topics): a query
    about another topic has nothing in the user's store to find, and measures no retrieval."""
    held = set()
    contents = Node.objects.for_user(user).filter(message__role="user").order_by("pk").values_list("content", flat=True)
    for content in contents[:300]:
        for topic, pattern in enumerate(_TOPIC_WORDS):
            if pattern.search(content):
                held.add(topic)
                break
    return sorted(held)


def queries_for(user, pool: list[Query], count: int, rng: random.Random) -> list[Query]:
    """``count`` of the queries of ``pool`` about the user's topics, sampled (all of them if there are fewer)."""
    held = set(topics_of(user))
    mine = [q for q in pool if q.topic in held] or pool
    return [mine[i] for i in rng.sample(range(len(mine)), count)] if count < len(mine) else mine


@contextmanager
def vector_indexes_off() -> Iterator[list[str]]:
    """Inside a transaction that is rolled back: the embedding table without its vector indexes (HNSW,
    IVFFlat), so a similarity query is an exact scan of the rows its filter selects."""
    with transaction.atomic():
        dropped = []
        with connection.cursor() as cursor:
            cursor.execute(
                """
                SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
                JOIN pg_class t ON t.oid = x.indrelid JOIN pg_am a ON a.oid = i.relam
                WHERE a.amname IN ('hnsw', 'ivfflat') AND (t.relname = 'memory_embedding' OR t.oid IN (
                    SELECT inhrelid FROM pg_inherits WHERE inhparent = 'memory_embedding'::regclass))
                ORDER BY t.relname = 'memory_embedding' DESC
                """
            )
            for (name,) in cursor.fetchall():
                try:
                    with transaction.atomic():
                        cursor.execute(f'DROP INDEX "{name}"')
                    dropped.append(name)
                except DatabaseError:
                    pass  # a partition's index, gone with its parent's
        yield dropped
        transaction.set_rollback(True)


def _ids(user, query: Query) -> list[str]:
    # The context by content: the store holds repeated texts, and which of two identical items fills a
    # slot is a tie, not a miss.
    return [s.node.content for s in context_retrieve(user=user, query_vector=query.vector, text=query.text)]


def retrieval_runs(pairs: list[tuple[object, Query]], *, passes: int) -> dict:
    """Each (user, query) retrieved ``passes`` times through the app's plan and as an exact scan; latencies
    of both and recall@5 of the app's context against the exact one."""
    for user, query in pairs[:5]:
        _ids(user, query)  # warm the caches for both
    fast, exact, recalls, empty = [], [], [], 0
    got: dict[int, list[str]] = {}
    for _ in range(passes):
        for i, (user, query) in enumerate(pairs):
            ms, got[i] = run_ms(lambda u=user, q=query: _ids(u, q))
            fast.append(ms)
    with vector_indexes_off() as dropped:
        for _ in range(passes):
            for i, (user, query) in enumerate(pairs):
                ms, reference = run_ms(lambda u=user, q=query: _ids(u, q))
                exact.append(ms)
                if reference:
                    recalls.append(len(set(got[i]) & set(reference)) / len(reference))
                else:
                    empty += 1
    return {"fast": fast, "exact": exact, "recalls": recalls, "empty": empty, "dropped": dropped}


def _users(names: list[str]) -> dict[str, object]:
    found = {u.username: u for u in get_user_model().objects.filter(username__in=names)}
    missing = set(names) - set(found)
    if missing:
        raise RuntimeError(f"the scale dataset lacks users {sorted(missing)[:3]}…")
    return found


def seed_sets(user, *, size: int, count: int, disjoint: bool, rng: random.Random) -> list[tuple[set[int], int]]:
    """``count`` sets M of the user's own messages whose Dep(M) holds about ``size`` items, with |Dep|.
    ``disjoint``: no two sets' Dep share an item (they are deleted one after the other)."""
    candidates = list(
        Node.objects.for_user(user).filter(message__role="user").order_by("pk").values_list("pk", flat=True)
    )
    rng.shuffle(candidates)
    used: set[int] = set()
    out: list[tuple[set[int], int]] = []
    seeds: set[int] = set()
    dep: set[int] = set()
    for pk in candidates:
        if len(out) == count:
            break
        if pk in used or pk in dep:
            continue
        mine = dep_ids(user=user, seeds=[pk])
        if len(mine) > size or (disjoint and mine & used):
            continue
        seeds.add(pk)
        dep |= mine
        if len(dep) >= size:
            out.append((seeds, len(dep)))
            if disjoint:
                used |= dep
            seeds, dep = set(), set()
    return out


def _preview(user, seeds: set[int]):
    return forget.forget_preview(user=user, mode="ids", message_ids=sorted(seeds))


def forget_runs(user, *, size: int, previews: int, confirms: int, rng: random.Random) -> dict:
    """Preview (``previews`` sets) and confirm (``confirms`` disjoint sets, each previewed first, untimed)
    ~100-item deletions; the confirms' manifests' sizes and timings."""
    preview_sets = seed_sets(user, size=size, count=previews, disjoint=False, rng=rng)
    confirm_sets = seed_sets(user, size=size, count=confirms, disjoint=True, rng=rng)
    _preview(user, preview_sets[0][0])  # warm
    preview_ms = [run_ms(lambda s=seeds: _preview(user, s))[0] for seeds, _ in preview_sets]
    confirm_ms, deleted, timings = [], [], []
    for seeds, _ in confirm_sets:
        request = _preview(user, seeds)
        since = timezone.now()
        ms, manifest = run_ms(lambda r=request: forget.forget_confirm(user=user, request_id=r.pk))
        confirm_ms.append(ms)
        deleted.append(sum(manifest["deleted"].get(k, 0) for k in ("messages", "summaries", "facts")))
        # Where the time went: the manifest's own timings and the in-process tasks the confirm ran.
        tasks: dict[str, float] = defaultdict(float)
        for kind, duration in TaskRun.objects.filter(started_at__gte=since).values_list("kind", "duration_ms"):
            tasks[f"{kind}_ms"] += duration or 0
        tasks["rebuilds"] = sum(1 for r in manifest.get("rebuilt", []) if r.get("status") != "erased")
        timings.append({**manifest.get("timings", {}), **{k: round(v, 1) for k, v in tasks.items()}})
    return {
        "preview": preview_ms,
        "confirm": confirm_ms,
        "preview_dep_sizes": [n for _, n in preview_sets],
        "deleted_per_confirm": deleted,
        "confirm_timings": timings,
    }


def dep_plan_runs(user, *, sets: list[tuple[set[int], int]]) -> tuple[list[float], list[float]]:
    """The preview's plan (Dep, paths, derived) by the app's code and by the frozen baseline, alternately."""
    ours, baseline = [], []
    for seeds, _ in sets[:2]:  # warm both
        planning.plan(user=user, matched={pk: Match(reason="id") for pk in seeds}, depth=None)
        plan_baseline(owner=user.pk, seeds=seeds)
    for i, (seeds, _) in enumerate(sets):
        matched = {pk: Match(reason="id") for pk in seeds}
        if i % 2:  # alternate which goes first
            ms_theirs, frozen = run_ms(lambda s=seeds: plan_baseline(owner=user.pk, seeds=s))
        ms, plan = run_ms(lambda m=matched: planning.plan(user=user, matched=m, depth=None))
        if not i % 2:
            ms_theirs, frozen = run_ms(lambda s=seeds: plan_baseline(owner=user.pk, seeds=s))
        ours.append(ms)
        baseline.append(ms_theirs)
        assert planning.plan_ids(plan) == planning.plan_ids(frozen), "the plan differs from the baseline's"
    return ours, baseline


def _tokenizer() -> Callable[[str], int]:
    """Tokens of a text by the local model's tokenizer; words with an embedder that has none."""
    count = getattr(get_embedder(), "count_tokens", None)
    return count if count is not None else (lambda text: len(text.split()))


def _items_block(contents: list[str]) -> str:
    # The context as the prompt shows it (dellm_site.ai.prompts.Prompt.render).
    return "\n".join(f"[{i}] {text}" for i, text in enumerate(contents, start=1))


def context_tokens(user, queries: list[Query]) -> dict:
    """Context tokens per turn: DeLLM's retrieved context vs. full memory's every earlier message."""
    count = _tokenizer()
    history = list(Node.objects.for_user(user).filter(kind="message").order_by("created_at", "pk")
                   .values_list("content", flat=True))
    full = count(_items_block(history))
    ours = [count(_items_block([s.node.content for s in context_retrieve(
        user=user, query_vector=q.vector, text=q.text)])) for q in queries]
    mean = statistics.mean(ours)
    return {"full": full, "dellm": ours, "mean": mean, "messages": len(history)}


def scale_measure(*, spec: ScaleSpec, quick: bool, stdout, only_retrieval: bool = False) -> dict:
    """Every scale benchmark on the current database (which holds ``spec``'s dataset); ``only_retrieval``: the
    retrieval ones (the scaling curve's retrieval, the heavy user, many users, recall) and no other.

    Each user is asked about the topics their history holds (``queries_for``): on any other topic the exact
    context is empty and the query measures no retrieval."""
    rng = random.Random(spec.seed + 7)
    say = stdout.write
    names = [username(spec, size=size) for size in spec.curve]
    curve_users = _users(names)
    heavy = curve_users[names[-1]]
    small_names = [username(spec, index=i) for i in rng.sample(range(spec.small_users), min(spec.small_users, 200))]
    small_users = list(_users(small_names).values())
    queries = queries_make(spec, 60)
    topical = queries_make(spec, 3 if quick else 10, per_topic=True)
    pick = random.Random(spec.seed + 11)  # not ``rng``: the deletion benchmarks' sets stay what they were
    results: dict = {}
    passes = 1 if quick else 2
    previews, confirms = (6, 2) if quick else (20, 5)  # at the heavy user; fewer at the other sizes

    curve: dict = {"items": [], "retrieval_p95_ms": [], "preview_p95_ms": [], "confirm_p50_ms": [],
                   "turn_overhead_p50_ms": [], "retrieval_exact_p95_ms": []}
    at: dict = {}
    for size in spec.curve:
        user = curve_users[username(spec, size=size)]
        items = Node.objects.for_user(user).count()
        say(f"  history of {items} items: retrieval{'' if only_retrieval else ', preview, confirm'}...")
        retrieval = retrieval_runs([(user, q) for q in queries_for(user, topical, 30, pick)], passes=passes)
        curve["items"].append(items)
        curve["retrieval_p95_ms"].append(summary(retrieval["fast"])["p95"])
        curve["retrieval_exact_p95_ms"].append(summary(retrieval["exact"])["p95"])
        at[size] = {"retrieval": retrieval, "items": items}
        if only_retrieval:
            continue
        # Confirms are the slow part: all runs at the heavy user, three at the smallest (the baseline), one between.
        runs = confirms if size == spec.heavy_items else (min(3, confirms) if size == spec.curve[0] else 1)
        deletion = forget_runs(user, size=spec.deletion_items, confirms=runs, rng=rng,
                               previews=previews if size == spec.heavy_items else previews // 2)
        at[size]["deletion"] = deletion
        curve["preview_p95_ms"].append(summary(deletion["preview"])["p95"])
        curve["confirm_p50_ms"].append(summary(deletion["confirm"])["p50"])
        curve["turn_overhead_p50_ms"].append(summary(turn_overhead_runs(user=user, runs=20))["p50"])
    results["scaling_curve"] = {
        "value": len(spec.curve), "unit": "sizes",
        "params": {**curve, "turn_overhead": "measured"},
    }

    heavy_at, small_at = at[spec.heavy_items], at[spec.curve[0]]
    heavy_queries = queries_for(heavy, topical, 60, pick)
    retrieval = retrieval_runs([(heavy, q) for q in heavy_queries], passes=passes)
    results["retrieval_heavy_user_p95_ms"] = entry(
        retrieval["fast"], stat="p95", baseline=retrieval["exact"],
        baseline_is="exact scan of the user's items (vector indexes dropped in a rolled-back transaction)",
        params={"items": heavy_at["items"], "queries": len(heavy_queries), "passes": passes,
                "recall_at_5": round(statistics.mean(retrieval["recalls"]), 4) if retrieval["recalls"] else None,
                "indexes_dropped_for_baseline": retrieval["dropped"]},
    )
    many = retrieval_runs([(u, queries_for(u, topical, 1, pick)[0]) for u in small_users], passes=passes)
    results["retrieval_many_users_p95_ms"] = entry(
        many["fast"], stat="p95", baseline=many["exact"],
        baseline_is="exact scan of the user's items (vector indexes dropped in a rolled-back transaction)",
        params={"users": len(small_users), "items_per_user": spec.small_items, "passes": passes,
                "recall_at_5": round(statistics.mean(many["recalls"]), 4) if many["recalls"] else None},
    )
    recalls = retrieval["recalls"] + many["recalls"]
    results["retrieval_recall_at_5"] = {
        "value": round(statistics.mean(recalls), 4) if recalls else None, "unit": "fraction",
        "params": {"measures": "mean over queries of |context ∩ exact context| / |exact context|, exact = same "
                   "call without vector indexes", "queries": len(recalls),
                   "queries_with_empty_exact_context": retrieval["empty"] + many["empty"],
                   "heavy_user": results["retrieval_heavy_user_p95_ms"]["params"]["recall_at_5"],
                   "many_users": results["retrieval_many_users_p95_ms"]["params"]["recall_at_5"],
                   "queries_are": "about topics the user's history holds (one per small user, 60 at the heavy one)"},
    }
    if only_retrieval:
        return results

    sets = seed_sets(heavy, size=spec.deletion_items, count=20 if not quick else 6, disjoint=False, rng=rng)
    ours, frozen = dep_plan_runs(heavy, sets=sets)
    results["dep_plan_p95_ms"] = entry(
        ours, stat="p95", baseline=frozen, baseline_is="the plan's code as of the scale benchmark (baseline_plan)",
        params={"items": heavy_at["items"], "dep_sizes": [n for _, n in sets], "seeds": [len(s) for s, _ in sets]},
    )

    deletion_params = {"items": heavy_at["items"], "baseline_items": small_at["items"], "mode": "ids",
                       "deletion_items": spec.deletion_items,
                       "baseline": f"the same size of deletion in a {small_at['items']}-item history"}
    results["forget_preview_p95_ms"] = entry(
        heavy_at["deletion"]["preview"], stat="p95", baseline=small_at["deletion"]["preview"],
        params={**deletion_params, "dep_sizes": heavy_at["deletion"]["preview_dep_sizes"]},
    )
    results["forget_confirm_p50_ms"] = entry(
        heavy_at["deletion"]["confirm"], stat="p50", baseline=small_at["deletion"]["confirm"],
        params={**deletion_params, "deleted_per_confirm": heavy_at["deletion"]["deleted_per_confirm"],
                "measures": "confirm to manifest: wipe, verification, rebuilds, VACUUM (in-process tasks)",
                "manifest_timings": heavy_at["deletion"]["confirm_timings"]},
    )

    tokens_user = _users([tokens_username(spec)])[tokens_username(spec)]
    tokens = context_tokens(tokens_user, queries[:30])
    results["context_tokens_ratio_full_memory_1k"] = {
        "value": round(tokens["full"] / tokens["mean"], 1) if tokens["mean"] else None, "unit": "x",
        "baseline": tokens["full"],
        "params": {"messages": tokens["messages"], "full_memory_tokens_per_turn": tokens["full"],
                   "dellm_tokens_per_turn_mean": round(tokens["mean"], 1),
                   "dellm_tokens_per_turn_p95": summary(tokens["dellm"])["p95"], "turns": len(tokens["dellm"]),
                   "tokenizer": "the embedder's (WordPiece for all-MiniLM-L6-v2)",
                   "counts": "the context items as the prompt lists them"},
    }
    return results
