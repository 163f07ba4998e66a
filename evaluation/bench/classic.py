"""The benchmarks of one user's 10,000-message history (the first ones): Dep traversal against a Python
walk of the whole edge list, context retrieval, forget preview and confirm (with the possible-residue scan),
and summary rebuilds after a deletion. Their names in bench.json: dep_traversal, context_retrieve,
forget_preview, forget_confirm, forget_verify_residue, summary_rebuild_1000_msgs_max*.
"""

from __future__ import annotations

import functools
import math
import random
import statistics
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connection, transaction
from django.test.utils import override_settings

from chat.models import Conversation, Message, Role
from dellm_site.ai.embedding import get_embedder, get_wide_embedder
from memory.embeddings import wide_store
from memory.models import Edge, Embedding, Summary, TaskRun
from memory.retrieval import context_retrieve
from memory.summaries import summary_refresh
from provenance.forgetting import services as forget
from provenance.forgetting.categories import kinds
from provenance.forgetting.spelling import english_load
from provenance.models import DeletionRequest
from provenance.selectors import dep_ids

TOPICS = [
    "cooking", "football", "jazz", "gardening", "chess", "hiking", "photography", "astronomy", "sailing", "poetry"
]
SECRETS = [
    "I live in Lisbon.",
    "My dentist is Doctor Amelia Sousa.",
    "My bank PIN is 7391.",
    "I was diagnosed with hypothyroidism.",
    "My ex is called Jordan Whitaker.",
    "My passport number is X4482913.",
    "My daughter goes to Riverside Primary.",
]

# Context retrieval is timed on questions of every shape: a common word held by half the history
# ("enjoy", "friend"), a name, a number, and a statement (which gets the smaller statement context).
RETRIEVAL_QUERIES = [
    "Where do I live?",
    "What do I enjoy doing with my friends?",
    "Who is Doctor Amelia Sousa?",
    "What is my bank PIN 7391 for?",
    "I enjoy chess on day 12 with friend number 44.",
]


# Requests in words of several shapes (a statement, a category, a value, two targets, no readable target).
PREVIEW_REQUESTS = [
    "Forget that I live in Lisbon",
    "please delete where I work from your memory",
    "I'd rather you didn't know anything about my sister",
    "erase my salary and my phone number",
    "the Lisbon thing, don't keep it",
    # a list: one target an item, each resolved on its own
    "Please forget these:\n- where I live\n- my salary\n- what I said about my sister",
]


def _timed(fn: Callable[[], object], repeat: int) -> tuple[float, list[float]]:
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - started) * 1000)
    return statistics.median(runs), runs


def _dep_python(user: AbstractBaseUser, seeds: Iterable[int]) -> set[int]:
    """Baseline: load the user's whole edge list into Python and walk it."""
    children = defaultdict(list)
    for src, dst in Edge.objects.filter(src__owner=user).values_list("src_id", "dst_id"):
        children[src].append(dst)
    seen, queue = set(seeds), deque(seeds)
    while queue:
        for child in children[queue.popleft()]:
            if child not in seen:
                seen.add(child)
                queue.append(child)
    return seen


def classic_measure(*, messages: int, repeat: int, stdout) -> tuple[dict, dict]:
    """Build the history, run every measurement; returns (results, the history's params)."""
    rng = random.Random(7)
    user = _history(messages=messages, rng=rng, stdout=stdout)
    results = {}
    params = {
        "messages": Message.objects.filter(owner=user).count(),
        "edges": Edge.objects.filter(dst__owner=user).count(),
        "repeat": repeat,
    }

    secret_ids = list(
        Message.objects.filter(owner=user, content__in=SECRETS, role=Role.USER).values_list("pk", flat=True)
    )
    seeds = secret_ids[:1]
    cte_ms, _ = _timed(lambda: dep_ids(user=user, seeds=seeds), repeat)
    py_ms, _ = _timed(lambda: _dep_python(user, seeds), repeat)
    assert dep_ids(user=user, seeds=seeds) == _dep_python(user, seeds)
    results["dep_traversal"] = {
        "value": round(cte_ms, 2),
        "unit": "ms",
        "baseline": round(py_ms, 2),
        "ratio": round(py_ms / cte_ms, 2),
        "params": {
            **params,
            "baseline": "whole edge list loaded into Python, BFS",
            "dep_size": len(dep_ids(user=user, seeds=seeds)),
        },
    }

    runs = []
    for text in RETRIEVAL_QUERIES:
        retrieve = functools.partial(
            context_retrieve, user=user, query_vector=get_embedder().embed_one(text), text=text
        )
        runs += _timed(retrieve, 4 * repeat)[1]
    results["context_retrieve"] = {
        "value": round(statistics.quantiles(runs, n=20)[-1], 2),
        "unit": "ms",
        "params": {
            **params,
            "measures": "p95 over every run of every query (hybrid ranking, one SQL query)",
            "median_ms": round(statistics.median(runs), 2),
            "queries": RETRIEVAL_QUERIES,
            "runs": len(runs),
            "top_k": settings.DELLM_CONTEXT_TOP_K,
        },
    }

    preview_runs = []
    kinds()  # loaded by a server's warm-up at start (dellm_site.warmup), before its first preview
    english_load()  # so is the word list a mistyped target is read against
    if get_wide_embedder() is not None:  # so is the resolver's second reading
        get_wide_embedder().embed_one("warm up")
    for query in PREVIEW_REQUESTS * max(1, -(-max(20, repeat) // len(PREVIEW_REQUESTS))):
        preview_runs += _timed(lambda q=query: forget.forget_preview(user=user, mode="natural", query=q), 1)[1]
    preview_runs.sort()
    results["forget_preview"] = {
        "value": round(statistics.median(preview_runs), 2),
        "p95": round(preview_runs[max(0, math.ceil(0.95 * len(preview_runs)) - 1)], 2),
        "unit": "ms",
        "params": {**params, "mode": "natural", "runs": len(preview_runs), "requests": PREVIEW_REQUESTS},
    }

    confirm_runs, sizes, residue_runs, residue_found = [], [], [], []
    for secret in SECRETS[:repeat]:
        request = forget.forget_preview(user=user, mode="keyword", query=secret.rstrip("."))
        started = time.perf_counter()
        manifest = forget.forget_confirm(user=user, request_id=request.pk)
        confirm_runs.append((time.perf_counter() - started) * 1000)
        sizes.append(sum(v for k, v in manifest["deleted"].items() if k in ("messages", "summaries", "facts")))
        assert manifest["verification"]["residual_hits"] == 0, manifest["verification"]
        residue_runs.append(manifest["timings"]["residue_ms"])
        residue_found.append(len(manifest["verification"]["possible_residue"]))
    results["forget_confirm"] = {
        "value": round(statistics.median(confirm_runs), 2),
        "unit": "ms",
        "params": {
            **params,
            "mode": "keyword",
            "deleted_items_per_run": sizes,
            "runs_ms": [round(r, 1) for r in confirm_runs],
        },
    }

    # The possible-residue scan of every confirm (part of forget_confirm above): tokens and vectors.
    results["forget_verify_residue"] = {
        "value": round(statistics.median(residue_runs), 2),
        "unit": "ms",
        "params": {**params, "runs_ms": residue_runs, "possible_residue_per_run": residue_found},
    }

    for max_sources in (settings.DELLM_SUMMARY_MAX_SOURCES, 1000):
        results[f"summary_rebuild_1000_msgs_max{max_sources}"] = _rebuild_bench(
            repeat=repeat, max_sources=max_sources, turns=min(500, messages // 2)
        )

    return results, params


def _rebuild_bench(*, repeat: int, max_sources: int, turns: int = 500) -> dict:
    """A 1,000-message conversation with a summary; forget one source; time until the summary
    is rebuilt from what is left (the rebuild runs in-process here, as without REDIS_URL)."""
    User = get_user_model()
    User.objects.filter(username="bench-summary").delete()
    user = User.objects.create_user(username="bench-summary", password="bench-password-123")
    conversation = Conversation.objects.create(owner=user, title="long conversation")
    embedder = get_embedder()
    texts = []
    for i in range(turns):
        verb = random.Random(i).choice(["like", "own", "visited", "cooked", "read"])
        texts.append(f"I {verb} {random.Random(i + 1).choice(TOPICS)} number {i}.")
    vectors = embedder.embed(texts)
    ack = embedder.embed_one("Noted, I will remember that.").tolist()
    user_ids = []
    with transaction.atomic():
        for text, vector in zip(texts, vectors, strict=True):
            message = Message.objects.create(conversation=conversation, owner=user, role=Role.USER, content=text)
            reply = Message.objects.create(
                conversation=conversation, owner=user, role=Role.ASSISTANT, content="Noted, I will remember that."
            )
            Edge.objects.create(src=message, dst=reply)
            Embedding.objects.bulk_create(
                [
                    Embedding(node=message, owner=user, vector=vector.tolist(), backend=embedder.name),
                    Embedding(node=reply, owner=user, vector=ack, backend=embedder.name),
                ]
            )
            user_ids.append(message.pk)
    runs, task_runs = [], []
    with override_settings(DELLM_SUMMARY_MAX_SOURCES=max_sources):
        summary_refresh(conversation_id=conversation.pk)
        for i in range(repeat):
            source = user_ids[-1 - i]  # a recent message: it is among the summary's sources
            request = forget.forget_preview(user=user, mode="ids", message_ids=[source])
            started = time.perf_counter()
            manifest = forget.forget_confirm(user=user, request_id=request.pk)
            runs.append((time.perf_counter() - started) * 1000)
            rebuilt = [r["status"] for r in manifest["rebuilt"] if r["kind"] == "summary"]
            assert rebuilt == ["done"], manifest["rebuilt"]
            task = TaskRun.objects.filter(kind="derived_rebuilds_task").order_by("-started_at").first()
            task_runs.append(task.duration_ms)
    active = Summary.objects.get(conversation=conversation, status="active")
    return {
        "value": round(statistics.median(runs), 2),
        "unit": "ms",
        "params": {
            "conversation_messages": 2 * turns,
            "summary_max_sources": max_sources,
            "repeat": repeat,
            "measures": "confirm to manifest, rebuild included (in-process tasks)",
            "rebuild_task_ms": task_runs,
            "final_summary_version": active.version,
            "runs_ms": [round(r, 1) for r in runs],
        },
    }


def _history(*, messages: int, rng: random.Random, stdout) -> AbstractBaseUser:
    """A user with ``messages`` messages in 50 conversations: statements and replies whose
    contexts follow the topic of the question (as retrieval would), with a few secrets."""
    User = get_user_model()
    User.objects.filter(username="bench").delete()
    DeletionRequest.objects.filter(owner__isnull=True).delete()
    user = User.objects.create_user(username="bench", password="bench-password-123")
    conversations = [Conversation.objects.create(owner=user, title=f"bench {i}") for i in range(50)]
    texts: list[str | None] = []
    for i in range(messages // 2):
        if i in {7 * k + 3 for k in range(len(SECRETS))} and (i - 3) // 7 < len(SECRETS):
            texts.append(SECRETS[(i - 3) // 7])
        else:
            topic = rng.choice(TOPICS)
            texts.append(f"I enjoy {topic} on day {i}, especially with friend number {rng.randint(1, 500)}.")
        texts.append(None)  # the reply, filled below
    embedder = get_embedder()
    user_texts = [t for t in texts if t is not None]
    stdout.write(f"embedding {len(user_texts)} messages...")
    vectors = embedder.embed(user_texts)
    with transaction.atomic():
        by_topic: dict[str, list[int]] = defaultdict(list)
        secret_nodes: list[int] = []
        edges, embeddings, reply_vectors = [], [], {}
        for i, text in enumerate(user_texts):
            conversation = conversations[i % len(conversations)]
            message = Message.objects.create(conversation=conversation, owner=user, role=Role.USER, content=text)
            topic = next((t for t in TOPICS if t in text), "secret")
            pool = by_topic[topic] + (secret_nodes if rng.random() < 0.02 else [])
            context = rng.sample(pool, min(len(pool), rng.randint(0, 4)))
            reply_text = f"Noted about {topic}." if topic != "secret" else "Noted, I will remember that."
            reply = Message.objects.create(
                conversation=conversation, owner=user, role=Role.ASSISTANT, content=reply_text
            )
            edges += [Edge(src_id=c, dst_id=reply.pk) for c in [message.pk, *context]]
            embeddings.append(
                Embedding(node_id=message.pk, owner=user, vector=vectors[i].tolist(), backend=embedder.name)
            )
            if reply_text not in reply_vectors:
                reply_vectors[reply_text] = embedder.embed_one(reply_text).tolist()
            embeddings.append(
                Embedding(node_id=reply.pk, owner=user, vector=reply_vectors[reply_text], backend=embedder.name)
            )
            if topic == "secret":
                secret_nodes.append(message.pk)
            else:
                by_topic[topic] += [message.pk, reply.pk]
        Edge.objects.bulk_create(edges, batch_size=5000)
        Embedding.objects.bulk_create(embeddings, batch_size=1000)
    if get_wide_embedder() is not None:
        # The statements' second reading, as the embedding workers would have written it (the forget resolver's).
        stdout.write(f"second reading of {len(user_texts)} messages...")
        wide_store(node_ids=list(Message.objects.filter(owner=user, role=Role.USER).values_list("pk", flat=True)))
    with connection.cursor() as cursor:
        # The steady state autovacuum keeps: visibility known (index-only scans read no table rows), statistics.
        cursor.execute("VACUUM ANALYZE")
    return user
