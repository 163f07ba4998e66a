"""The admin: forget requests and the audit log are viewable, filterable, read-only, and never show
content, the request's words, or raw node ids."""

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model

from chat import services, turns
from chat.models import Conversation, Message
from memory.models import Node
from provenance.forgetting import audit
from provenance.forgetting import services as forget
from provenance.models import AuditRecord, DeletionRequest

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "hypothyroidism"
PENDING = "tortoise called Sheldon"


@pytest.fixture
def world(user):
    """One completed deletion (of SECRET) and one preview never confirmed (of PENDING)."""
    conversation = services.conversation_create(user=user)
    said = turns.message_post(user=user, conversation_id=conversation.pk, content=f"My diagnosis is {SECRET}.")
    turns.message_post(user=user, conversation_id=conversation.pk, content=f"I have a {PENDING}.")
    done = forget.forget_preview(user=user, mode="keyword", query=SECRET)
    manifest = forget.forget_confirm(user=user, request_id=done.pk)
    assert manifest["status"] == "completed" and said.user_message.pk in manifest["deleted_ids"]
    pending = forget.forget_preview(user=user, mode="exact", query=PENDING)
    assert pending.working["target"] == PENDING and pending.plan["matched"]
    return {"done": DeletionRequest.objects.get(pk=done.pk), "pending": pending, "manifest": manifest}


@pytest.fixture
def admin_client(client, db):
    superuser = get_user_model().objects.create_superuser("root", "root@example.com", "a-root-passphrase-1")
    client.force_login(superuser)
    return client


def page(client, url, status=200):
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code)
    return response.content.decode()


def assert_no_content(html: str):
    lowered = html.lower()
    for needle in (SECRET, "diagnosis", "sheldon", "tortoise"):
        assert needle not in lowered, f"{needle!r} is shown"


def test_deletion_requests_are_listed_filtered_and_shown_without_content(admin_client, world):
    done, pending = world["done"], world["pending"]
    base = "/admin/provenance/deletionrequest/"
    listing = page(admin_client, base)
    assert str(done.pk) in listing and str(pending.pk) in listing
    assert_no_content(listing)
    completed = page(admin_client, base + "?status__exact=completed")
    assert str(done.pk) in completed and str(pending.pk) not in completed
    by_mode = page(admin_client, base + "?mode__exact=exact")
    assert str(pending.pk) in by_mode and str(done.pk) not in by_mode
    assert str(done.pk) in page(admin_client, base + f"?q={done.pk}")
    assert str(pending.pk) not in page(admin_client, base + f"?q={done.pk}")

    detail = page(admin_client, f"{base}{done.pk}/change/")
    assert_no_content(detail)
    assert "working" not in detail.lower()
    # The manifest is there, with every node id replaced by its keyed pseudonym.
    for node_id in world["manifest"]["deleted_ids"]:
        assert audit.pseudonym("node", node_id) in detail
    # As labelled tables, not raw JSON.
    assert "Residual hits" in detail and "Deleted items" in detail and "{&quot;" not in detail
    preview = page(admin_client, f"{base}{pending.pk}/change/")
    assert_no_content(preview)
    assert "working" not in preview.lower()
    assert f"{len(pending.plan['matched'])} matched" in preview


def test_audit_records_are_listed_searched_and_shown(admin_client, world, user):
    audit = AuditRecord.objects.get(request_id=world["done"].pk)
    base = "/admin/provenance/auditrecord/"
    listing = page(admin_client, base)
    assert str(audit.request_id) in listing and audit.requester_ref in listing
    assert_no_content(listing)
    assert audit.requester_ref in page(admin_client, base + "?status__exact=completed&mode__exact=keyword")
    assert audit.requester_ref not in page(admin_client, base + "?status__exact=executing")
    assert audit.requester_ref in page(admin_client, base + f"?q={user.username}")
    assert audit.requester_ref in page(admin_client, base + f"?q={audit.requester_ref[:8]}")
    assert "No audit records" not in page(admin_client, base + f"?q={audit.requester_ref}")
    detail = page(admin_client, f"{base}{audit.pk}/change/")
    assert_no_content(detail)
    for field in ("requester_ref", "relaxation", "planned_count", "item_refs", "residual_hits"):
        assert field.replace("_", " ") in detail.lower(), field
    assert audit.item_refs[0] in detail


def test_nothing_can_be_added_changed_or_deleted(admin_client, world):
    done = world["done"]
    audit = AuditRecord.objects.get(request_id=done.pk)
    for base, pk in (("/admin/provenance/deletionrequest/", done.pk), ("/admin/provenance/auditrecord/", audit.pk)):
        assert admin_client.get(base + "add/").status_code == 403
        assert admin_client.post(base + "add/", {}).status_code == 403
        assert admin_client.get(f"{base}{pk}/delete/").status_code == 403
        assert admin_client.post(f"{base}{pk}/delete/", {"post": "yes"}).status_code == 403
        change = admin_client.post(f"{base}{pk}/change/", {"status": "expired"})
        assert change.status_code == 403
        listing = page(admin_client, base)
        assert "delete_selected" not in listing and f'href="{base}add/"' not in listing
    assert DeletionRequest.objects.filter(pk=done.pk, status="completed").exists()
    assert AuditRecord.objects.filter(pk=audit.pk, status="completed").exists()


def test_messages_are_not_deletable_through_the_admin(admin_client):
    # Deleting a message there would skip Dep(M) and the audit log, so the chat models stay out.
    for model in (Conversation, Message, Node):
        assert not admin.site.is_registered(model)
    index = page(admin_client, "/admin/")
    assert "Deletion requests" in index and "Audit records" in index


def test_only_staff_see_the_admin(client, user):
    client.force_login(user)
    response = client.get("/admin/provenance/deletionrequest/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
