"""A deletion's rebuilds run as one task: their new records' vectors computed in the background while the
rebuilds go on and stored together, their outcomes written to the manifest at once; a rebuild that fails is
queued again alone."""

import threading

import numpy as np
import pytest
from celery.exceptions import Retry
from django.db import connection
from django.test.utils import CaptureQueriesContext

from chat import services
from dellm_site.ai.embedding import get_embedder
from memory.embeddings import embeddings_store
from memory.models import DerivedStatus, Embedding, Node, Summary, TaskRun
from provenance import tasks
from provenance.forgetting import execution
from provenance.forgetting import services as forget
from provenance.models import DeletionRequest
from tests.conftest import say

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def two_summaries(user, settings):
    """Two conversations with a summary each; the first message of each is what will be forgotten."""
    settings.DELLM_SUMMARY_EVERY = 3
    first = []
    for lines in (
        ("I live in Lisbon.", "I have a tortoise called Sheldon.", "I work as a nurse."),
        ("I was born in Oslo.", "I play the cello.", "I drive a red van."),
    ):
        conversation = services.conversation_create(user=user)
        first.append(say(user, conversation, lines[0]).user_message.pk)
        for line in lines[1:]:
            say(user, conversation, line)
    assert Summary.objects.filter(owner=user, status=DerivedStatus.ACTIVE).count() == 2
    return first


@pytest.fixture
def embed_calls(monkeypatch):
    """Every embedder call's texts and the thread that made it, in order."""
    embedder = get_embedder()
    calls: list[tuple[list[str], str]] = []
    real = embedder.embed

    def spy(texts):
        calls.append((list(texts), threading.current_thread().name))
        return real(texts)

    monkeypatch.setattr(embedder, "embed", spy)
    return calls


def test_rebuilds_embed_their_records_in_the_background_once_each(user, two_summaries, embed_calls):
    old = set(Summary.objects.filter(owner=user, status=DerivedStatus.ACTIVE).values_list("pk", flat=True))
    embedded_one_by_one = TaskRun.objects.filter(kind="embed_node").count()
    preview = forget.forget_preview(user=user, mode="ids", message_ids=two_summaries)
    embed_calls.clear()
    manifest = forget.forget_confirm(user=user, request_id=preview.pk)

    rebuilt = [r for r in manifest["rebuilt"] if r["kind"] == "summary"]
    assert {r["id"] for r in rebuilt} == old and {r["status"] for r in rebuilt} == {"done"}
    new = {pk for r in rebuilt for pk in r["new_ids"]}
    contents = dict(Node.objects.filter(pk__in=new).values_list("pk", "content"))
    assert len(contents) == 2 and "Lisbon" not in " ".join(contents.values())
    # Each rebuilt summary embedded once, by the background thread, and by no task of its own.
    for content in contents.values():
        made = [thread for texts, thread in embed_calls if content in texts]
        assert made == [made[0]] and made[0].startswith("embed-ahead")
    assert TaskRun.objects.filter(kind="embed_node").count() == embedded_one_by_one
    assert TaskRun.objects.filter(kind="derived_rebuilds_task", status="succeeded").count() == 1
    for pk, content in contents.items():
        stored = np.asarray(Embedding.objects.get(node_id=pk).vector)
        assert np.allclose(stored, get_embedder().embed_one(content), atol=1e-5)
    assert manifest["verification"]["residual_hits"] == 0 and manifest["rebuilds_completed_at"]
    assert DeletionRequest.objects.get(pk=preview.pk).working == {}


def test_a_failing_rebuild_is_queued_alone_and_the_others_are_recorded(user, two_summaries, monkeypatch):
    from memory.rebuild import derived_rebuild

    preview = forget.forget_preview(user=user, mode="ids", message_ids=two_summaries)
    doomed = min(e["id"] for e in preview.plan["derived"] if e["kind"] == "summary")

    def flaky(**kwargs):
        if kwargs["old_id"] == doomed:
            raise RuntimeError("the model is unavailable")
        return derived_rebuild(**kwargs)

    monkeypatch.setattr(tasks, "derived_rebuild", flaky)
    with pytest.raises(Retry):  # in-process tasks: the lone task's first retry surfaces here
        forget.forget_confirm(user=user, request_id=preview.pk)
    rebuilt = {r["id"]: r for r in DeletionRequest.objects.get(pk=preview.pk).manifest["rebuilt"]}
    assert rebuilt[doomed]["status"] == "pending" and rebuilt[doomed]["retry"]
    (other,) = (r for pk, r in rebuilt.items() if pk != doomed and r["kind"] == "summary")
    assert other["status"] == "done" and Embedding.objects.filter(node_id=other["new_ids"][0]).exists()
    # Run again alone with the real rebuild, it completes; the interrupted verification is resumed.
    monkeypatch.setattr(tasks, "derived_rebuild", derived_rebuild)
    execution.rebuild_retry(request_pk=preview.pk, old_id=doomed)
    forget.forget_resume(request_ids=[preview.pk])
    request = DeletionRequest.objects.get(pk=preview.pk)
    assert request.status == "completed"
    assert {r["status"] for r in request.manifest["rebuilt"] if r["kind"] == "summary"} == {"done"}
    assert request.manifest["verification"]["residual_hits"] == 0


def test_embeddings_store_embeds_many_at_once_like_one_by_one(user, embed_calls):
    conversation = services.conversation_create(user=user)
    ids = [say(user, conversation, text).user_message.pk for text in ("I like figs.", "My sister is called Ana.")]
    gone = say(user, conversation, "I own a kayak.").user_message.pk
    Embedding.objects.filter(node_id__in=[*ids, gone]).delete()
    Node.objects.filter(pk=gone).delete()
    embed_calls.clear()
    assert embeddings_store(node_ids=[*ids, gone], owner_id=user.pk) == sorted(ids)
    assert len(embed_calls) == 1
    # Again, one vector given: updated, not duplicated; only the other text embedded.
    first = Node.objects.get(pk=ids[0]).content
    embed_calls.clear()
    known = {first: get_embedder().embed_one(first)}
    assert embeddings_store(node_ids=ids, owner_id=user.pk, known=known) == sorted(ids)
    assert [texts for texts, _ in embed_calls][1:] == [[Node.objects.get(pk=ids[1]).content]]
    assert Embedding.objects.filter(node_id__in=ids).count() == 2
    for node_id in ids:
        stored = np.asarray(Embedding.objects.get(node_id=node_id).vector)
        alone = get_embedder().embed_one(Node.objects.get(pk=node_id).content)
        assert np.allclose(stored, alone, atol=1e-5)
    assert embeddings_store(node_ids=ids, owner_id=user.pk + 1000) == []  # another owner's: nothing


def test_a_rebuilt_record_the_verification_already_found_is_counted_once(user, settings):
    """In-process, the rebuilds are recorded (and their records checked) after the verification, which found
    the rebuilt summary already: it holds what a surviving message says again."""
    settings.DELLM_SUMMARY_EVERY = 3
    conversation = services.conversation_create(user=user)
    first = say(user, conversation, "I live in Lisbon.").user_message.pk
    say(user, conversation, "I have a tortoise called Sheldon.")
    again = say(user, conversation, "I live in Lisbon.").user_message.pk
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[first])
    with CaptureQueriesContext(connection) as queries:
        manifest = forget.forget_confirm(user=user, request_id=preview.pk)
    # The residue's tokens were weighed once, by the verification; the rebuilt records' check reused them.
    assert sum("LIMIT t.cap + 1" in q["sql"] for q in queries.captured_queries) == 1
    (summary,) = (r for r in manifest["rebuilt"] if r["kind"] == "summary")
    rebuilt = summary["new_ids"][0]
    assert "Lisbon" in Node.objects.get(pk=rebuilt).content and Embedding.objects.filter(node_id=rebuilt).exists()
    found = manifest["verification"]
    assert {again, rebuilt} <= set(found["residual_ids"])
    assert found["rebuilt_residual_hits"] == 0 and found["residual_hits"] == len(found["residual_ids"])
    assert manifest["rebuilds_completed_at"] and DeletionRequest.objects.get(pk=preview.pk).working == {}


def test_a_vector_computed_ahead_that_failed_is_embedded_when_stored(user, embed_calls):
    from concurrent.futures import Future

    from memory.embeddings import embeddings_flush

    conversation = services.conversation_create(user=user)
    pk = say(user, conversation, "I collect old maps.").user_message.pk
    content = Node.objects.get(pk=pk).content
    Embedding.objects.filter(node_id=pk).delete()
    failed: Future = Future()
    failed.set_exception(RuntimeError("the embedder thread died"))
    embed_calls.clear()
    embeddings_flush([(pk, user.pk, (content, failed))])
    assert [texts for texts, _ in embed_calls] == [[content]]
    assert np.allclose(Embedding.objects.get(node_id=pk).vector, get_embedder().embed_one(content), atol=1e-5)
