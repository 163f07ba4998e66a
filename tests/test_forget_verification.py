"""Verification scans what a deletion could have left, found through the indexes (the words' full-text hits,
the deleted vectors' nearest items), and finds what a scan of every surviving item finds; the full scan runs
on demand."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chat import services
from provenance.forgetting import services as forget
from provenance.forgetting.verification import verification_scan
from tests.conftest import say

pytestmark = pytest.mark.django_db(transaction=True)

LOCKER = "My locker code is 7391 at Brindlemoor gym."


def _store_with_a_planted_residue(user):
    for text in ("I grow tomatoes on the balcony.", "My sister lives in Porto.", "I swim on Tuesdays."):
        say(user, services.conversation_create(user=user), text)
    deleted = say(user, services.conversation_create(user=user), LOCKER)
    # Said again elsewhere, outside Dep(deleted): it survives the deletion and holds the whole text.
    planted = say(user, services.conversation_create(user=user), "Reminder to self: " + LOCKER.lower())
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[deleted.user_message.pk])
    return preview, planted.user_message.pk


def test_the_scoped_scan_finds_the_planted_residue_that_the_full_scan_finds(user, settings):
    preview, planted = _store_with_a_planted_residue(user)
    terms, vectors = preview.working["terms"], preview.working["vectors"]
    manifest = forget.forget_confirm(user=user, request_id=preview.pk)
    assert planted in manifest["verification"]["residual_ids"]
    assert "found through the indexes" in manifest["verification"]["method"]

    with CaptureQueriesContext(connection) as queries:
        scoped = verification_scan(user=user, terms=terms, vectors=vectors)
    full = verification_scan(user=user, terms=terms, vectors=vectors, full=True)
    assert planted in scoped["keyword_hits"] and planted in scoped["semantic_hits"]
    assert scoped == full
    # The substring and full-text checks (one query for every term) read only the candidates the GIN index
    # names, never the whole store.
    checks = [
        q["sql"] for q in queries.captured_queries
        if "memory_node" in q["sql"] and ("LIKE" in q["sql"] or "plainto_tsquery" in q["sql"])
    ]
    assert len(checks) == 1 and "array_to_tsvector(memory_owner_words(n.owner_id, n.content)) @@" in checks[0]
    # The user's own words (no other user's entry is read); only the text's last word may go on in a longer one.
    query = checks[0].replace("''", "'")  # the tsquery as an SQL literal: its quotes doubled
    assert f"'{user.pk}:brindlemoor')" in query and f"'{user.pk}:gym':*" in query
    # A history large enough for the HNSW plan finds the same.
    settings.DELLM_RETRIEVAL_EXACT_MAX_ITEMS = 0
    assert verification_scan(user=user, terms=terms, vectors=vectors) == full


def test_a_text_held_inside_longer_words_is_found_by_its_words_starts(user):
    say(user, services.conversation_create(user=user), "Brindlemoor is where I train.")
    kept = say(user, services.conversation_create(user=user), "The Brindlemoorish gyms open early.")
    scan = verification_scan(user=user, terms=["Brindlemoor"], vectors=[])
    assert kept.user_message.pk in scan["keyword_hits"]  # a substring hit: the word is the start of a longer one
    assert scan == verification_scan(user=user, terms=["Brindlemoor"], vectors=[], full=True)


def test_only_a_texts_last_word_may_go_on_and_only_the_users_own_words_are_read(user, other_user):
    mine = say(user, services.conversation_create(user=user), "Note: my locker code is 7391 at Brindlemoor gym.")
    say(user, services.conversation_create(user=user), "The locker codes at Brindle are 7391s.")
    theirs = say(other_user, services.conversation_create(user=other_user), "My locker code is 7391 at Brindle.")
    terms = ["locker code is 7391 at Brindle"]
    scan = verification_scan(user=user, terms=terms, vectors=[])
    # "Brindle" is the start of "Brindlemoor"; "code" is not "codes" as a substring of the text, nor "7391" "7391s".
    assert scan["keyword_hits"] == [mine.user_message.pk]
    assert scan == verification_scan(user=user, terms=terms, vectors=[], full=True)
    assert theirs.user_message.pk not in scan["keyword_hits"]


def test_a_confirmation_can_ask_for_the_full_scan(api, user):
    preview, planted = _store_with_a_planted_residue(user)
    response = api.post(f"/api/forget/{preview.pk}/confirm/", {"full_scan": True}, format="json")
    assert response.status_code == 200, response.content
    verification = response.json()["verification"]
    assert "every surviving item" in verification["method"]
    assert verification["residual_hits"] >= 1
