"""Celery tasks of the memory app: thin wrappers over services."""

from celery import shared_task

from . import services


@shared_task(bind=True, autoretry_for=(Exception,), retry_backoff=True, retry_backoff_max=60, max_retries=5)
def embed_node(self, node_id: int) -> bool:
    """Store the embedding of one node; a node deleted meanwhile is skipped."""
    return services.embedding_store(node_id=node_id) is not None
