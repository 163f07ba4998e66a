"""Celery tasks of provenance: thin wrappers over the forget service."""

from celery import shared_task
from celery.signals import worker_ready

from . import forget


@shared_task
def forget_resume_task() -> dict:
    """Finish interrupted deletions and expire stale previews."""
    return forget.forget_resume()


@worker_ready.connect
def _resume_on_worker_start(sender=None, **kwargs):
    # A worker (re)starting after a crash finishes what was interrupted before taking new work.
    forget_resume_task.delay()
