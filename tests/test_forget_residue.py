"""Verification after a deletion reports *possible residue*: surviving items that share a distinctive part of
what was deleted (a number, a name, rare words) or come close in meaning, apart from the hard residual hits."""

import re

import pytest

from chat import services
from chat.models import Conversation, Message, Role
from dellm_site.ai.embedding import get_embedder
from memory.models import Embedding, Node
from provenance.forgetting import services as forget
from provenance.models import DeletionRequest
from tests.conftest import rows_containing, say

pytestmark = pytest.mark.django_db(transaction=True)

LOCKER = "My locker code is 4826 at Brindlemoor gym."


def _forget(api, conversation, text: str) -> dict:
    """A request in words through the chat API, confirmed as previewed; returns the manifest."""
    response = api.post(f"/api/conversations/{conversation.pk}/messages/", {"content": text}, format="json")
    preview = response.json()["forget_preview"]
    return api.post(f"/api/forget/{preview['request_id']}/confirm/", {}, format="json").json()


def test_partial_mentions_are_reported_and_a_follow_up_removes_them(api, user, client):
    c1 = services.conversation_create(user=user)
    say(user, c1, LOCKER)
    c2 = services.conversation_create(user=user)
    note = say(user, c2, "Note to self: 4826 is the number.")
    c3 = services.conversation_create(user=user)
    asked = say(user, c3, "What do you know about Brindlemoor?")

    manifest = _forget(api, c3, "Forget that my locker code is 4826 at Brindlemoor gym.")
    verification = manifest["verification"]
    assert manifest["status"] == "completed" and verification["residual_hits"] == 0
    residue = {e["id"]: e for e in verification["possible_residue"]}
    assert set(residue) == {note.user_message.pk, asked.user_message.pk}
    assert residue[note.user_message.pk]["why"] == ["a number of the deleted text"]
    assert residue[note.user_message.pk]["tokens"] == ["4826"]
    assert residue[asked.user_message.pk]["why"] == ["a name of the deleted text"]
    assert residue[asked.user_message.pk]["tokens"] == ["Brindlemoor"]
    assert residue[asked.user_message.pk]["conversation"] == c3.pk
    assert set(verification["possible_residue_titles"]) == {c2.pk, c3.pk}
    assert "possible residue" in verification["method"].lower()
    # The stored manifest holds where the tokens are, not the tokens (nor any other deleted words).
    stored = DeletionRequest.objects.get(pk=manifest["request_id"]).manifest
    # (as a word of its own: the manifest's hashes are runs of hex digits that may hold "4826" by chance)
    assert not re.search(r"(?<![0-9a-z])4826(?![0-9a-z])", str(stored)) and "Brindlemoor" not in str(stored)
    assert stored["verification"]["possible_residue"][0]["spans"]

    # The deletion's page lists them by id and offers them as a follow-up.
    client.force_login(user)
    page = client.get(f"/forget/history/{manifest['request_id']}/").content.decode()
    assert 'id="possible-residue"' in page and f'data-id="{note.user_message.pk}"' in page
    assert "data-residue-ids=" in page and "4826" not in page

    # The follow-up, through the API: a preview of exactly those items, then confirm.
    preview = api.post("/api/forget/preview/", {"mode": "ids", "message_ids": sorted(residue)}, format="json").json()
    assert {e["id"] for e in preview["matched"]} == set(residue)
    follow_up = api.post(f"/api/forget/{preview['request_id']}/confirm/", {}, format="json").json()
    assert follow_up["status"] == "completed" and follow_up["verification"]["residual_hits"] == 0
    assert not Node.objects.filter(pk__in=residue).exists()
    assert not Node.objects.filter(owner=user, content__contains="4826").exists()
    assert not Node.objects.filter(owner=user, content__icontains="Brindlemoor").exists()
    assert not Conversation.objects.filter(owner=user, title__icontains="Brindlemoor").exists()
    # The first manifest now lists them as forgotten, without an excerpt.
    again = api.get(f"/api/forget/{manifest['request_id']}/").json()
    assert all(e["excerpt"] is None and e["tokens"] == [] for e in again["verification"]["possible_residue"])
    # Nothing of it is left in any text column, and /v1 has nothing to quote.
    hits = {k: v for k, v in rows_containing("4826", whole_word=True).items()}
    assert hits == {}, hits
    answer = api.post(
        "/v1/chat/completions",
        {"model": "dellm", "messages": [{"role": "user", "content": "What is the number?"}]},
        format="json",
        HTTP_AUTHORIZATION=f"Bearer {user.token}",
    ).json()
    assert "4826" not in answer["choices"][0]["message"]["content"]


FILLER = [
    "I am going to the market this morning to buy bread and apples.",
    "The weather is nice today, I might go for a walk in the park.",
    "I had coffee with a friend and we talked about work.",
    "I need to remember to call my mother this weekend.",
    "I watched a film last night and it was quite good.",
    "My favourite season is autumn because of the colours.",
    "I am tired after a long day at the office.",
    "We cooked pasta for dinner and it was delicious.",
    "I am reading a book about history at the moment.",
    "The train was late again this morning.",
]


def _store(user, count: int) -> Conversation:
    """A store of ``count`` everyday messages with their vectors, enough for document frequency to mean something."""
    conversation = Conversation.objects.create(owner=user, title="Everyday")
    texts = [f"{FILLER[i % len(FILLER)]} Day {i // len(FILLER) + 1}." for i in range(count)]
    messages = [Message.objects.create(conversation=conversation, role=Role.USER, content=t) for t in texts]
    embedder = get_embedder()
    Embedding.objects.bulk_create(
        Embedding(node=m, owner=user, vector=v.tolist(), backend=embedder.name)
        for m, v in zip(messages, embedder.embed(texts), strict=True)
    )
    return conversation


def test_a_deletion_with_nothing_related_reports_no_residue_but_rare_words_are_caught(api, user):
    everyday = _store(user, 120)
    c1 = services.conversation_create(user=user)
    say(user, c1, "I am allergic to shellfish and penicillin.")
    say(user, c1, "I am going to learn the cello next year.")
    c2 = services.conversation_create(user=user)
    rare = say(user, c2, "Shellfish and penicillin are both off the menu for me.")

    # The cello shares only everyday words ("I am going to", "year") with what survives: no alarm.
    manifest = _forget(api, everyday, "Forget that I am going to learn the cello next year.")
    assert manifest["deleted"]["messages"] >= 1
    assert manifest["verification"]["possible_residue"] == []
    assert manifest["verification"]["possible_residue_titles"] == []

    # Two words that are rare in this store, shared with the deleted text, are reported.
    manifest = _forget(api, everyday, "Forget that I am allergic to shellfish and penicillin.")
    residue = {e["id"]: e for e in manifest["verification"]["possible_residue"]}
    assert rare.user_message.pk in residue, manifest["verification"]
    assert "2 rare words of the deleted text" in residue[rare.user_message.pk]["why"]
    assert not set(residue) & set(Message.objects.filter(conversation=everyday).values_list("pk", flat=True))
    assert manifest["timings"]["residue_ms"] >= 0


def test_kept_items_and_hard_hits_are_not_reported_as_residue(user):
    c1 = services.conversation_create(user=user)
    said = say(user, c1, LOCKER)
    c2 = services.conversation_create(user=user)
    asked = say(user, c2, "What is my locker code?")
    assert "4826" in asked.reply.content
    note = say(user, c2, "Note to self: 4826 is the number.")
    c3 = services.conversation_create(user=user)
    copy = say(user, c3, LOCKER)
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[said.user_message.pk])
    assert asked.reply.pk in {e["id"] for e in preview.plan["tainted"]}
    manifest = forget.forget_confirm(user=user, request_id=preview.pk, keep=[asked.reply.pk])
    verification = manifest["verification"]
    # The copy is a hard hit (the whole text survives); the kept reply is the user's choice; the note is residue.
    assert copy.user_message.pk in verification["residual_ids"]
    residue = [e["id"] for e in verification["possible_residue"]]
    assert note.user_message.pk in residue
    assert copy.user_message.pk not in residue and asked.reply.pk not in residue


def test_document_frequencies_are_counted_only_as_far_as_the_limits(user, monkeypatch):
    """A token counts while it is held by at most its limit of items (a name or number: COMMON_MIN here; a word:
    one item); the counts stop just past the limit, and decide exactly as full counts would."""
    from memory.models import Fact
    from provenance.forgetting import residue

    monkeypatch.setattr(residue, "COMMON_MIN", 3)
    monkeypatch.setattr(residue, "COMMON_SHARE", 0.0)
    monkeypatch.setattr(residue, "RARE_MIN_ITEMS", 1)
    monkeypatch.setattr(residue, "RARE_SHARE", 0.0)
    texts = [*["Zebulon likes tea."] * 6, *["Marlow owns a kayak."] * 3, "Quillon plays the violin."]
    for text in texts:
        Fact.objects.create(owner=user, content=text, derivation={}, version=1)
    tokens = {"specific": ["absent", "marlow", "quillon", "zebulon"], "words": ["kayak", "violin"]}
    found = residue._distinctive(user=user, tokens=tokens, exclude=[], total=len(texts))
    assert found == {"marlow": "name", "quillon": "name", "violin": "rare word"}
