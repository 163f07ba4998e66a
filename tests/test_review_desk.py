"""The deletion review desk: overview, attention list and its actions, readable records, the audit log's export
(verified offline), the monthly summary, and who may see any of it."""

import io
import json
import re
import subprocess
import sys

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command
from django.core.management.base import CommandError

from chat import services
from chat.models import Message
from provenance.forgetting import audit
from provenance.forgetting import services as forget
from provenance.models import AuditRecord, DeletionRequest
from provenance.roles import REVIEWER_GROUP
from tests.conftest import ROOT, client_for, say
from tests.desk_world import deletions_of_every_outcome

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def reviewer(make_user):
    """Staff in the deletion reviewers' group, and nothing else."""
    person = make_user("rita")
    person.is_staff = True
    person.save()
    person.groups.add(Group.objects.get(name=REVIEWER_GROUP))
    return person


@pytest.fixture
def world(user):
    """Deletions of every outcome, by request id."""
    return deletions_of_every_outcome(user)


@pytest.fixture
def desk_client(client, reviewer):
    client.force_login(reviewer)
    return client


def page(client, url, status=200) -> str:
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code)
    return response.content.decode()


def attention(client) -> set[tuple[str, str]]:
    """(kind, request id) of every row of the attention list."""
    html = page(client, "/admin/desk/")
    return set(re.findall(r'class="attention-item" data-kind="([^"]+)" data-request="([^"]*)"', html))


def test_the_desk_shows_every_outcome_and_what_needs_attention(desk_client, world, user):
    html = page(desk_client, "/admin/desk/")
    assert "DeLLM" in html and "Deletion review desk" in html
    assert "<svg" in html and "Requests per day by outcome" in html
    assert "Intact" in html and "4 entries" in html
    items = attention(desk_client)
    assert ("stuck", world["stuck"]) in items
    assert ("residual hits", world["residual hits"]) in items
    assert ("rebuild failed", world["rebuild failed"]) in items
    assert ("preview expired", world["preview expired"]) in items
    assert ("task failed", "") in items
    assert all(request != world["completed"] for _, request in items)
    for text in ("penicillin", "Lisbon", "oboe", "locker", user.username):
        assert text.lower() not in html.lower(), text
    assert 'href="/admin/desk/"' in page(desk_client, "/admin/")


def test_the_attention_list_actions_resolve_it(desk_client, world, user):
    post = lambda **data: desk_client.post("/admin/desk/action/", data)  # noqa: E731
    assert post(action="resume", request_id=world["stuck"]).status_code == 302
    assert DeletionRequest.objects.get(pk=world["stuck"]).status == "completed"

    assert post(action="resume", request_id=world["preview expired"]).status_code == 302
    late = DeletionRequest.objects.get(pk=world["preview expired"])
    assert late.status == "expired" and late.working == {}

    failed = DeletionRequest.objects.get(pk=world["rebuild failed"])
    old_ids = [r["id"] for r in failed.manifest["rebuilt"] if r["status"] == "failed"]
    for old_id in old_ids:
        post(action="rebuild", request_id=world["rebuild failed"], old_id=old_id)
    failed.refresh_from_db()
    assert {r["status"] for r in failed.manifest["rebuilt"]} <= {"done", "dropped"}

    # The residue is still there: checking again says so; once it is deleted too, the check clears.
    post(action="verify", request_id=world["residual hits"])
    residual = DeletionRequest.objects.get(pk=world["residual hits"])
    assert residual.manifest["verification"]["residual_hits"] > 0 and residual.manifest["verification"]["rechecked_at"]
    left = Message.objects.filter(owner=user, content="I am allergic to penicillin.").values_list("pk", flat=True)
    follow_up = forget.forget_preview(user=user, mode="ids", message_ids=list(left))
    forget.forget_confirm(user=user, request_id=follow_up.pk)
    post(action="verify", request_id=world["residual hits"])
    assert AuditRecord.objects.get(request_id=world["residual hits"]).residual_hits == 0

    items = {kind for kind, _ in attention(desk_client)}
    assert items == {"task failed"}
    assert audit.audit_chain_check()[1] is None  # every legitimate update resealed its entry


def test_records_are_readable_tables_without_names_or_content(desk_client, world, user):
    base = "/admin/provenance/deletionrequest/"
    detail = page(desk_client, f"{base}{world['residual hits']}/change/")
    assert "Residual hits" in detail and "Deleted, per store" in detail and "Rebuilt records" in detail
    assert "record-table" in detail and "{&quot;" not in detail and user.username not in detail
    assert audit.pseudonym("user", user.pk) in detail
    stuck = page(desk_client, base + "?outcome=stuck")
    assert world["stuck"] in stuck and world["completed"] not in stuck
    assert world["rebuild failed"] in page(desk_client, base + "?outcome=rebuild+failed")
    assert world["completed"] in page(desk_client, base + f"?q={world['completed']}")
    entries = "/admin/provenance/auditrecord/"
    found = page(desk_client, entries + f"?q={world['residual hits']}")
    assert world["residual hits"] in found and world["completed"] not in found
    record = AuditRecord.objects.get(request_id=world["completed"])
    shown = page(desk_client, f"{entries}{record.pk}/change/")
    assert record.chain_hash in shown and "Messages" in shown


def test_the_export_verifies_offline_and_fails_when_edited(desk_client, world, tmp_path):
    key = tmp_path / "chain.key"
    out = io.StringIO()
    call_command("audit_verify", "--chain-key", stdout=out)
    key.write_text(out.getvalue())
    offline = lambda path: subprocess.run(  # noqa: E731
        # Plain Python, no Django, no database: what an auditor runs.
        [sys.executable, "-I", str(ROOT / "provenance/forgetting/chain.py"), str(path), "--key-file", str(key)],
        capture_output=True, text=True, timeout=60,
    )
    exported = {}
    for fmt in ("json", "csv"):
        response = desk_client.get("/admin/desk/export/", {"format": fmt})
        assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
        exported[fmt] = tmp_path / f"audit.{fmt}"
        exported[fmt].write_bytes(response.content)
        result = offline(exported[fmt])
        assert result.returncode == 0 and "OK: 4 entries" in result.stdout, result.stdout + result.stderr
        call_command("audit_verify", "--export", str(exported[fmt]), stdout=io.StringIO())

    data = json.loads(exported["json"].read_text())
    assert all(set(e) >= {"seq", "chain_prev", "chain_hash", "seal", "requester_ref"} for e in data["entries"])
    data["entries"][1]["deleted"]["messages"] += 1
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(data))
    result = offline(edited)
    assert result.returncode == 1 and "altered: entry #2" in result.stdout
    with pytest.raises(CommandError, match="altered: entry #2"):
        call_command("audit_verify", "--export", str(edited))

    data = json.loads(exported["json"].read_text())
    del data["entries"][-1]
    data["extent"]["count"] -= 1
    edited.write_text(json.dumps(data))
    assert "removed" in offline(edited).stdout

    rows = exported["csv"].read_text().splitlines()
    exported["csv"].write_text("\n".join([rows[0], *rows[1:2], *rows[3:]]) + "\n")
    assert "removed: entry #2" in offline(exported["csv"]).stdout


def test_the_monthly_summary_prints_counts_and_entries(desk_client, world):
    html = page(desk_client, "/admin/desk/monthly/")
    assert "monthly-outcomes" in html and "@media print" in html
    for request_id in (world["completed"], world["stuck"], world["residual hits"]):
        assert request_id in html
    assert "intact" in html
    assert page(desk_client, "/admin/desk/monthly/?month=nonsense", status=400)


def test_staff_without_the_role_see_nothing_of_it(client, make_user, world):
    staff = make_user("sam")
    staff.is_staff = True
    staff.save()
    client.force_login(staff)
    for url in ("/admin/desk/", "/admin/desk/monthly/", "/admin/desk/export/"):
        assert client.get(url).status_code == 403, url
    assert client.post("/admin/desk/action/", {"action": "resume", "request_id": world["stuck"]}).status_code == 403
    assert DeletionRequest.objects.get(pk=world["stuck"]).status == "executing"
    index = page(client, "/admin/")
    assert "/admin/desk/" not in index and "Deletion requests" not in index and "Audit records" not in index
    for url in ("/admin/provenance/deletionrequest/", "/admin/provenance/auditrecord/"):
        assert client.get(url).status_code == 403, url


def test_users_who_are_not_staff_are_sent_to_sign_in(client, user):
    client.force_login(user)
    response = client.get("/admin/desk/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_a_reviewer_cannot_read_any_conversation(desk_client, reviewer, user):
    conversation = services.conversation_create(user=user)
    said = say(user, conversation, "My passport number is X1234567.")
    assert reviewer.get_all_permissions() == {
        "provenance.review_deletions", "provenance.view_deletionrequest", "provenance.view_auditrecord",
        "memory.view_taskrun",
    }
    assert set(Group.objects.get(name=REVIEWER_GROUP).permissions.all()) == set(
        Permission.objects.filter(codename__in=["review_deletions", "view_deletionrequest", "view_auditrecord",
                                                "view_taskrun"])
    )
    for url in (f"/c/{conversation.pk}/", f"/api/conversations/{conversation.pk}/messages/",
                f"/api/messages/{said.user_message.pk}/influence/", "/admin/chat/message/", "/admin/memory/node/"):
        response = desk_client.get(url)
        assert response.status_code in (403, 404), (url, response.status_code)
        assert "X1234567" not in response.content.decode(), url
    # The reviewer's own API token sees only the reviewer's own (empty) data.
    listing = client_for(reviewer).get("/api/conversations/")
    assert listing.status_code == 200 and "X1234567" not in listing.content.decode()
