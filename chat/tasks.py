"""Celery tasks of the chat app: thin wrappers over its services."""

from __future__ import annotations

from celery import shared_task


@shared_task
def temporary_conversations_expire_task() -> int:
    """Discard the temporary chats idle past their time (Celery beat runs it every 10 minutes)."""
    from .temporary import temporary_conversations_expire

    return temporary_conversations_expire()
