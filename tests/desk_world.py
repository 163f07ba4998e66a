"""Deletions of every outcome for the review desk's tests: completed, with residual hits, stuck mid-way, with a
failed rebuild (and its failed task run), and a preview left past its time with its words."""

from __future__ import annotations

from datetime import timedelta

import pytest
from celery.exceptions import Retry
from django.db.models import F
from django.utils import timezone

from chat import services
from memory.models import Summary
from provenance import tasks
from provenance.forgetting import execution
from provenance.forgetting import services as forget
from provenance.models import DeletionRequest
from tests.conftest import say


def deletions_of_every_outcome(user) -> dict[str, str]:
    """Request ids by outcome. The server-side crash and rebuild failure are real exceptions raised where the
    pipeline would meet them (the wipe's last step, the rebuild). Summaries are made every 3 messages (default)."""
    ids = {}
    c1 = services.conversation_create(user=user)
    said = say(user, c1, "My locker code is 4471.")
    done = forget.forget_preview(user=user, mode="ids", message_ids=[said.user_message.pk])
    forget.forget_confirm(user=user, request_id=done.pk)
    ids["completed"] = str(done.pk)

    # The same sentence in two conversations; deleting one by id leaves the other, which the scan finds.
    twice = "I am allergic to penicillin."
    first = say(user, services.conversation_create(user=user), twice)
    other = services.conversation_create(user=user)
    say(user, other, "I like green tea.")  # its title, so that the residue is in a message, not a title
    say(user, other, twice)
    residual = forget.forget_preview(user=user, mode="ids", message_ids=[first.user_message.pk])
    assert forget.forget_confirm(user=user, request_id=residual.pk)["verification"]["residual_hits"] > 0
    ids["residual hits"] = str(residual.pk)

    # A summary whose rebuild fails on every attempt: the request completes with the rebuild failed.
    c3 = services.conversation_create(user=user)
    lisbon = say(user, c3, "I live in Lisbon.")
    say(user, c3, "I have a tortoise called Sheldon.")
    say(user, c3, "I work as a nurse.")
    assert Summary.objects.filter(conversation=c3).exists()
    rebuild = forget.forget_preview(user=user, mode="ids", message_ids=[lisbon.user_message.pk])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tasks, "derived_rebuild", _unavailable)
        with pytest.raises(Retry):  # in-process tasks: the first attempt's retry surfaces here
            forget.forget_confirm(user=user, request_id=rebuild.pk)
        # The last attempt a worker would make, failing too: it records the rebuild as failed.
        for record in DeletionRequest.objects.get(pk=rebuild.pk).manifest["rebuilt"]:
            retry = record["retry"]
            args = [str(rebuild.pk), record["kind"], record["id"], retry["sources"], retry["conversation"],
                    record["version"]]
            attempt = tasks.derived_rebuild_task.apply(args=args, retries=tasks.RETRY["max_retries"], throw=False)
            assert attempt.failed()
    forget.forget_resume(request_ids=[rebuild.pk])
    ids["rebuild failed"] = str(rebuild.pk)

    # A deletion interrupted mid-wipe an hour ago and never resumed.
    c4 = services.conversation_create(user=user)
    oboe = say(user, c4, "I play the oboe.")
    stuck = forget.forget_preview(user=user, mode="ids", message_ids=[oboe.user_message.pk])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(execution, "nodes_delete", _unavailable)
        with pytest.raises(RuntimeError):
            forget.forget_confirm(user=user, request_id=stuck.pk)
    an_hour_ago = timezone.now() - timedelta(hours=1)
    DeletionRequest.objects.filter(pk=stuck.pk).update(confirmed_at=an_hour_ago, created_at=an_hour_ago)
    ids["stuck"] = str(stuck.pk)

    # A preview past its time that no sweep has emptied yet.
    late = forget.forget_preview(user=user, mode="keyword", query="oboe")
    DeletionRequest.objects.filter(pk=late.pk).update(expires_at=F("created_at") - timedelta(minutes=1))
    ids["preview expired"] = str(late.pk)
    return ids


def _unavailable(**kwargs):
    raise RuntimeError("unavailable")
