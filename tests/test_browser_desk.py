"""End-to-end browser test of the deletion review desk: a deletion reviewer signs in to the admin, finds the
desk from the index, sees deletions of every outcome (completed, with residual hits, stuck, with a failed
rebuild) and a stale preview in the attention list, resolves them with the desk's buttons, reads a record,
opens the monthly summary, downloads an export that verifies offline, and cannot open a message."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Group

from chat.models import Message
from provenance.forgetting.audit import chain_key
from provenance.roles import REVIEWER_GROUP
from tests import browser as tb
from tests.conftest import ROOT
from tests.desk_world import deletions_of_every_outcome

pytestmark = pytest.mark.browser
PASSWORD = "a-Long-review-passphrase-42"


def row(page, kind: str, request_id: str = ""):
    selector = f'tr.attention-item[data-kind="{kind}"]'
    return page.locator(selector + (f'[data-request="{request_id}"]' if request_id else ""))


def test_a_reviewer_walks_the_desk(live_app, chromium, make_user, user, tmp_path):
    from playwright.sync_api import expect

    base = live_app

    def setup():
        reviewer = make_user("rita", PASSWORD)
        reviewer.is_staff = True
        reviewer.password = make_password(PASSWORD, hasher="pbkdf2_sha256")  # one the web process checks
        reviewer.save()
        reviewer.groups.add(Group.objects.get(name=REVIEWER_GROUP))
        ids = deletions_of_every_outcome(user)
        message = Message.objects.filter(owner=user).first()
        return ids, message.pk, message.conversation_id, message.content

    ids, message_id, conversation_id, content = tb.in_thread(setup)
    with tb.browser_page(chromium) as (page, seen), tb.artifacts_on_failure(page, seen, "test_browser_desk"):
        page.goto(f"{base}/admin/login/?next=/admin/")
        page.locator("#id_username").fill("rita")
        page.locator("#id_password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        expect(page.locator("#site-name")).to_contain_text("DeLLM")
        page.get_by_role("link", name="Deletion review desk").click()
        expect(page).to_have_url(f"{base}/admin/desk/")

        expect(page.locator("#chain-state")).to_contain_text("Intact")
        expect(page.locator("figure.desk-chart svg")).to_be_visible()
        for kind in ("stuck", "residual hits", "rebuild failed", "preview expired"):
            expect(row(page, kind, ids[kind]).first).to_be_visible()
        expect(row(page, "task failed").first).to_be_visible()
        expect(page.locator(f'tr.attention-item[data-request="{ids["completed"]}"]')).to_have_count(0)
        assert content not in page.content() and user.username not in page.content()

        # Resolve: expire the stale preview, resume the stuck deletion, retry the failed rebuilds.
        row(page, "preview expired", ids["preview expired"]).get_by_role("button", name="Resume").click()
        expect(page.locator(".messagelist")).to_contain_text("Resumed 0 deletion(s), expired 1 preview(s)")
        expect(row(page, "preview expired")).to_have_count(0)
        expect(row(page, "stuck", ids["stuck"])).to_be_visible()
        row(page, "stuck", ids["stuck"]).get_by_role("button", name="Resume").click()
        expect(page.locator(".messagelist")).to_contain_text("Resumed 1 deletion(s)")
        expect(row(page, "stuck")).to_have_count(0)
        while row(page, "rebuild failed").count():
            row(page, "rebuild failed").first.get_by_role("button", name="Retry rebuild").click()
            expect(page.locator(".messagelist")).to_contain_text("Rebuild queued again")
        # The residue is still there: checking again keeps it on the list, saying so.
        row(page, "residual hits", ids["residual hits"]).get_by_role("button", name="Re-run verification").click()
        expect(page.locator(".messagelist")).to_contain_text("residual hit(s)")
        expect(row(page, "residual hits", ids["residual hits"])).to_be_visible()

        # The record, as tables with plain labels.
        row(page, "residual hits", ids["residual hits"]).get_by_role("link", name=ids["residual hits"]).click()
        expect(page.locator("table.record-table").first).to_contain_text("Residual hits")
        expect(page.locator("body")).not_to_contain_text(user.username)

        page.goto(f"{base}/admin/desk/monthly/")
        for outcome in ("completed", "residual hits", "rebuild failed"):
            expect(page.locator("#monthly-outcomes")).to_contain_text(outcome)
        expect(page.locator("#monthly-entries")).to_contain_text(ids["stuck"])

        page.goto(f"{base}/admin/desk/")
        with page.expect_download() as download:
            page.get_by_role("button", name="Download").click()
        export = tmp_path / "audit.json"
        download.value.save_as(export)
        key = tmp_path / "chain.key"
        key.write_text(tb.in_thread(lambda: chain_key().hex()))
        checked = subprocess.run(
            [sys.executable, "-I", str(ROOT / "provenance/forgetting/chain.py"), str(export), "--key-file", str(key)],
            capture_output=True, text=True, timeout=60,
        )
        assert checked.returncode == 0 and "chain intact" in checked.stdout, checked.stdout + checked.stderr

        # No message is readable to the reviewer.
        for url in (f"/c/{conversation_id}/", f"/api/messages/{message_id}/influence/", "/admin/chat/message/"):
            response = page.goto(base + url)
            assert response.status in (403, 404), (url, response.status)
            assert content not in page.content()
