"""Writes of vectors: one embedding per node, from the configured embedder."""

from __future__ import annotations

import logging
import os
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
from django.db import connection, transaction

from dellm_site.ai.embedding import get_embedder, get_wide_embedder

from .models import Embedding, Node, NodeKind
from .retrieval import vector_literal

logger = logging.getLogger(__name__)


@transaction.atomic
def embedding_store(*, node_id: int, vector: np.ndarray | None = None, owner_id: int | None = None) -> Embedding | None:
    """Embed one node (idempotent). Returns None when the node no longer exists (deleted meanwhile). ``owner_id``:
    the node's owner, when the caller knows it (the reads are then the owner's only)."""
    nodes = Node.objects.select_for_update().filter(pk=node_id)
    node = (nodes if owner_id is None else nodes.filter(owner_id=owner_id)).first()
    if node is None:
        return None
    embedder = get_embedder()
    if vector is None:
        vector = embedder.embed_one(node.content)
    embedding, _ = Embedding.objects.update_or_create(
        node=node, owner_id=node.owner_id, defaults={"vector": vector.tolist(), "backend": embedder.name, "wide": None}
    )
    wide_later([node.pk] if _wide_due(node) else [])
    return embedding


def embedding_add(*, node: Node, vector: np.ndarray) -> Embedding:
    """Store the vector of a node created in the current transaction, computed by the caller from the node's own
    text with the configured embedder (a chat turn embeds its question anyway): one insert, no second embedding."""
    embedding = Embedding.objects.create(
        node=node, owner_id=node.owner_id, vector=vector.tolist(), backend=get_embedder().name
    )
    wide_later([node.pk] if _wide_due(node) else [])
    return embedding


def _wide_due(node: Node) -> bool:
    """Can a request name ``node``, so that it needs a second reading (the rows ``_WIDE_DUE_SQL`` reads)? A reply
    of the assistant's, a summary or a node kept out of retrieval is never queued; where the role is not known
    (a bare node row), the task decides."""
    return (node.kind in (NodeKind.MESSAGE, NodeKind.FACT) and node.retrievable
            and getattr(node, "role", None) != "assistant")


def text_embed(*, text: str) -> list[float]:
    """The vector of a text that is not stored (a question, a forget request), as plain floats."""
    return [float(x) for x in get_embedder().embed_one(text)]


# One thread per process that computes vectors while its caller goes on (``vector_soon``): the embedder's
# matrix products release the interpreter lock, so they overlap the caller's database round trips. It touches
# no database. Made afresh in a forked child (a parent's thread does not survive the fork).
_ahead: tuple[int, ThreadPoolExecutor] | None = None
# How long storing waits for a vector computed ahead before embedding its text itself.
AHEAD_WAIT_S = 60.0


def vector_soon(text: str) -> Future:
    """The vector of ``text``, computed in the background (``Future.result()`` waits for it)."""
    global _ahead
    if _ahead is None or _ahead[0] != os.getpid():
        _ahead = (os.getpid(), ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed-ahead"))
    return _ahead[1].submit(lambda: get_embedder().embed([text])[0])


def _ready(ahead: Future) -> np.ndarray | None:
    """A vector computed ahead, or None where that failed or takes too long (then embedded with the rest)."""
    try:
        return ahead.result(timeout=AHEAD_WAIT_S)
    except Exception:
        return None


@transaction.atomic
def embeddings_store(
    *, node_ids: list[int], owner_id: int | None = None, known: dict[str, np.ndarray] | None = None
) -> list[int]:
    """Embed many nodes in one embedder call (idempotent, like ``embedding_store``); returns the ids embedded
    (nodes deleted meanwhile are skipped). ``owner_id``: the nodes' owner, when the caller knows it. ``known``:
    vectors the configured embedder already gave for some texts (those are not embedded again)."""
    nodes = Node.objects.select_for_update().filter(pk__in=node_ids).order_by("pk")  # id order, like every writer
    if owner_id is not None:
        nodes = nodes.filter(owner_id=owner_id)
    rows = list(nodes.values_list("pk", "owner_id", "content"))
    if not rows:
        return []
    embedder = get_embedder()
    vectors = dict(known or {})
    missing = sorted({content for _, _, content in rows} - set(vectors))
    vectors.update(zip(missing, embedder.embed(missing), strict=True))
    Embedding.objects.bulk_create(
        [
            Embedding(node_id=pk, owner_id=owner, vector=vectors[content].tolist(), backend=embedder.name)
            for pk, owner, content in rows
        ],
        update_conflicts=True,
        unique_fields=["node"],
        update_fields=["vector", "backend", "wide"],
    )
    wide_later([pk for pk, _, _ in rows])
    return [pk for pk, _, _ in rows]


def embeddings_flush(collected: list[tuple[int, int | None, tuple[str, Future] | None]]) -> None:
    """Store the vectors of the nodes ``memory.facts.embeddings_deferred`` collected (each with its text and
    the vector being computed for it, where known): the rest embedded in one embedder call per owner; should
    that fail, each is queued alone (``embed_node``, retried with backoff)."""
    from .tasks import embed_node  # the task calls back into this module

    by_owner: dict[int | None, list[int]] = {}
    known: dict[str, np.ndarray] = {}
    for node_id, owner_id, ahead in collected:
        by_owner.setdefault(owner_id, []).append(node_id)
        vector = _ready(ahead[1]) if ahead is not None else None
        if vector is not None:
            known[ahead[0]] = vector
    for owner_id, node_ids in by_owner.items():
        try:
            embeddings_store(node_ids=node_ids, owner_id=owner_id, known=known)
        except Exception:
            logger.exception("embedding %d records at once failed; queued one by one", len(node_ids))
            for node_id in node_ids:
                embed_node.delay(node_id, owner_id)


# The second reading of meaning (``Embedding.wide``) is due for what a forget request can name: a user's statement
# (a message that holds information, ``retrievable`` on its embedding) or an active fact; not the assistant's
# replies, questions or summaries, which the resolver never matches.
_WIDE_DUE_SQL = """
SELECT e.node_id, n.content FROM memory_embedding e
JOIN memory_node n ON n.id = e.node_id
LEFT JOIN chat_message m ON m.node_ptr_id = e.node_id
WHERE e.node_id = ANY(%s) AND e.wide IS NULL AND e.retrievable AND e.kind IN ('message', 'fact')
  AND m.role IS DISTINCT FROM 'assistant'
ORDER BY e.node_id
"""

_WIDE_WRITE_SQL = """
UPDATE memory_embedding e SET wide = w.vector::vector
FROM unnest(%s::bigint[], %s::text[]) AS w(node_id, vector)
WHERE e.node_id = w.node_id AND e.wide IS NULL
"""


def wide_later(node_ids: list[int]) -> None:
    """Queue the second reading of these nodes for when the transaction storing their first vector commits (a
    turn never waits for it; where there are no workers it runs at the commit). Nothing where it is off."""
    if node_ids and get_wide_embedder() is not None:
        from .tasks import embed_wide  # the task calls back into this module

        ids = list(node_ids)
        transaction.on_commit(lambda: embed_wide.delay(ids))


@transaction.atomic
def wide_store(*, node_ids: list[int]) -> list[int]:
    """Store the second reading (``Embedding.wide``) of those of ``node_ids`` a request can name and that lack
    one; returns their ids. Idempotent: a node deleted meanwhile, or read already, is skipped."""
    wide = get_wide_embedder()
    if wide is None or not node_ids:
        return []
    with connection.cursor() as cursor:
        cursor.execute(_WIDE_DUE_SQL, [list(node_ids)])
        rows = cursor.fetchall()
    if not rows:
        return []
    texts = sorted({content for _, content in rows})
    vectors = dict(zip(texts, wide.embed(texts), strict=True))
    # One statement for all, and only where still without one (a first vector rewritten meanwhile cleared it).
    with connection.cursor() as cursor:
        cursor.execute(_WIDE_WRITE_SQL, [[pk for pk, _ in rows], [vector_literal(vectors[c]) for _, c in rows]])
    return [pk for pk, _ in rows]
