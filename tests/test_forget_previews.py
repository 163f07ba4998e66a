"""A preview holds the user's words only while it can be confirmed: every end empties it, expired ones
are swept without a restart, and a deletion ends the user's other open previews."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from chat import services
from chat.models import Message
from dellm_site.celery import app
from provenance.forgetting import services as forget
from provenance.models import DeletionRequest
from provenance.tasks import previews_expire_task
from tests.conftest import say

pytestmark = pytest.mark.django_db(transaction=True)

LOCKER = "I live in Quarzwick and my locker code is 7391."


def _related_preview(user) -> DeletionRequest:
    conversation = services.conversation_create(user=user)
    for text in ("I have a tortoise called Sheldon.", "My pet sleeps under the radiator all winter."):
        say(user, conversation, text)
    preview = forget.forget_preview(user=user, mode="natural", query="forget that I have a tortoise called Sheldon")
    assert preview.plan["related"] and "Sheldon" in str(preview.plan) and preview.working
    return preview


def test_a_deletion_empties_the_users_other_open_previews(user, other_user):
    conversation = services.conversation_create(user=user)
    locker = say(user, conversation, LOCKER)
    say(user, conversation, "I have a tortoise called Sheldon.")
    holding = forget.forget_preview(user=user, mode="ids", message_ids=[locker.user_message.pk])
    assert LOCKER in holding.working["terms"] and holding.working["vectors"]
    worded = forget.forget_preview(user=user, mode="exact", query="locker code is 7391")
    unrelated = forget.forget_preview(user=user, mode="keyword", query="tortoise")
    theirs_conversation = services.conversation_create(user=other_user)
    say(other_user, theirs_conversation, LOCKER)
    theirs = forget.forget_preview(user=other_user, mode="keyword", query="Quarzwick")

    deleting = forget.forget_preview(user=user, mode="keyword", query="Quarzwick")
    forget.forget_confirm(user=user, request_id=deleting.pk)

    for request in (holding, worded, unrelated):
        request.refresh_from_db()
        assert request.status == "expired" and request.working == {}
    theirs.refresh_from_db()  # another user's preview is theirs to keep
    assert theirs.status == "previewed" and theirs.working["terms"] == ["Quarzwick"]
    assert not Message.objects.filter(owner=user, content__contains="7391").exists()
    mine = DeletionRequest.objects.filter(owner=user)
    assert not mine.filter(working__icontains="7391").exists() and not mine.filter(plan__icontains="7391").exists()


def test_every_end_of_a_preview_drops_its_words(api, user):
    cancelled = _related_preview(user)
    api.post(f"/api/forget/{cancelled.pk}/cancel/", {}, format="json")
    expired = forget.forget_preview(user=user, mode="natural", query="forget that I have a tortoise called Sheldon")
    DeletionRequest.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert api.post(f"/api/forget/{expired.pk}/confirm/", {}, format="json").status_code == 410
    for request in (cancelled, expired):
        request.refresh_from_db()
        assert request.status == "expired" and request.working == {}
        assert "Sheldon" not in str(request.plan) and "radiator" not in str(request.plan)

    confirmed = forget.forget_preview(user=user, mode="natural", query="forget that I have a tortoise called Sheldon")
    assert confirmed.plan["related"]
    forget.forget_confirm(user=user, request_id=confirmed.pk)
    confirmed.refresh_from_db()
    assert confirmed.status == "completed" and confirmed.working == {}
    assert "Sheldon" not in str(confirmed.plan) and "Sheldon" not in str(confirmed.manifest)


def test_expired_previews_are_swept_without_a_restart(user, other_user):
    stale = _related_preview(user)
    fresh = forget.forget_preview(user=user, mode="keyword", query="radiator")
    DeletionRequest.objects.filter(pk=stale.pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    # With workers: the beat schedule names the sweep task, which the worker knows.
    entry = settings.CELERY_BEAT_SCHEDULE["forget-previews-expire"]
    assert entry["task"] == previews_expire_task.name and entry["schedule"] <= 60
    app.loader.import_default_modules()
    assert entry["task"] in app.tasks
    assert previews_expire_task.delay().get() == 1
    stale.refresh_from_db()
    assert stale.status == "expired" and stale.working == {} and "Sheldon" not in str(stale.plan)
    fresh.refresh_from_db()
    assert fresh.status == "previewed" and fresh.working


def test_without_workers_any_users_forget_action_sweeps(user, other_user):
    stale = _related_preview(user)
    DeletionRequest.objects.filter(pk=stale.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    forget.forget_preview(user=other_user, mode="keyword", query="anything")  # someone else's preview
    stale.refresh_from_db()
    assert stale.status == "expired" and stale.working == {}

    again = _related_preview(user)
    DeletionRequest.objects.filter(pk=again.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    call_command("forget_resume")
    again.refresh_from_db()
    assert again.status == "expired" and again.working == {} and "Sheldon" not in str(again.plan)


def test_with_workers_a_forget_action_sweeps_only_its_users_previews(user, other_user, settings):
    settings.DELLM_FORGET_SWEEP_ON_REQUEST = False  # the beat sweeps everyone's (above)
    theirs = _related_preview(user)
    mine_conversation = services.conversation_create(user=other_user)
    say(other_user, mine_conversation, "I have a tortoise called Sheldon.")
    mine = forget.forget_preview(user=other_user, mode="keyword", query="Sheldon")
    stale = timezone.now() - timedelta(seconds=1)
    DeletionRequest.objects.filter(pk__in=[theirs.pk, mine.pk]).update(expires_at=stale)

    forget.forget_preview(user=other_user, mode="keyword", query="anything")
    mine.refresh_from_db()
    assert mine.status == "expired" and mine.working == {}
    theirs.refresh_from_db()  # left to the beat's sweep
    assert theirs.status == "previewed" and theirs.working
    assert previews_expire_task.delay().get() == 1
    theirs.refresh_from_db()
    assert theirs.status == "expired" and theirs.working == {}
