"""Celery tasks of the memory app: thin wrappers over its services, retried with backoff, idempotent.

Their timings and outcomes are recorded per kind in TaskRun by the project's Celery wiring."""

from __future__ import annotations

from celery import shared_task

RETRY = {"autoretry_for": (Exception,), "retry_backoff": True, "retry_backoff_max": 60, "max_retries": 5}


@shared_task(bind=True, **RETRY)
def embed_node(self, node_id: int, owner_id: int | None = None) -> bool:
    """Store the embedding of one node (of ``owner_id``'s, when given); a node deleted meanwhile is skipped."""
    from .embeddings import embedding_store

    return embedding_store(node_id=node_id, owner_id=owner_id) is not None


@shared_task(bind=True, **RETRY)
def embed_wide(self, node_ids: list[int]) -> int:
    """Store the forget resolver's second reading of these nodes (``memory.embeddings.wide_store``)."""
    from .embeddings import wide_store

    return len(wide_store(node_ids=node_ids))


@shared_task(bind=True, **RETRY)
def facts_extract_task(self, message_id: int) -> list[int]:
    """Extract the facts of one user message, after its turn."""
    from .facts import facts_extract

    return [fact.pk for fact in facts_extract(message_id=message_id)]


@shared_task(bind=True, **RETRY)
def summary_refresh_task(self, conversation_id: int) -> int | None:
    """Refresh one conversation's summary, after a turn."""
    from .summaries import summary_refresh

    result = summary_refresh(conversation_id=conversation_id)
    return result.summary.pk if result.summary else None
