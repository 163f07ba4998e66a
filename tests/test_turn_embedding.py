"""A chat turn embeds its question once: the vector that recognises and retrieves is the one stored with the
question (in the turn's transaction, no task to embed it again) and the one the local LLM ranks sentences by."""

from __future__ import annotations

import numpy as np
import pytest

from chat import turns
from chat.models import Conversation
from dellm_site.ai import local
from dellm_site.ai.embedding import get_embedder
from dellm_site.ai.prompts import Prompt
from memory.models import Embedding

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def embed_tasks(monkeypatch):
    """The node ids a worker is asked to embed."""
    sent: list[int] = []
    monkeypatch.setattr(turns.embed_node, "delay", lambda node_id, owner_id=None: sent.append(node_id))
    return sent


def test_the_question_is_stored_with_the_vector_the_turn_computed(user, embed_tasks):
    conversation = Conversation.objects.create(owner=user)
    question, reply, _ = turns.message_post(user=user, conversation_id=conversation.pk, content="I keep bees.")
    stored = Embedding.objects.get(node_id=question.pk)
    assert stored.owner_id == user.pk and stored.backend == get_embedder().name
    expected = get_embedder().embed_one("I keep bees.")
    assert float(np.dot(np.asarray(stored.vector), expected)) >= 0.9999
    # The reply (and any fact) goes to a worker to be embedded; the question is not embedded a second time.
    assert reply.pk in embed_tasks and question.pk not in embed_tasks


def test_a_temporary_chat_still_stores_no_embedding(user, embed_tasks):
    conversation = Conversation.objects.create(owner=user, temporary=True)
    question, reply, _ = turns.message_post(user=user, conversation_id=conversation.pk, content="I keep bees.")
    assert not Embedding.objects.filter(node_id__in=[question.pk, reply.pk]).exists()
    assert embed_tasks == []


def test_the_local_llm_ranks_by_the_question_vector_it_is_given(monkeypatch):
    embedder = get_embedder()
    seen: list[str] = []

    class Counting:
        dimensions = embedder.dimensions

        def embed(self, texts):
            seen.extend(texts)
            return embedder.embed(texts)

    monkeypatch.setattr(local, "get_embedder", lambda: Counting())
    llm = local.LocalLLM()
    context = ["I live in Lisbon.", "My cat is called Tom."]
    vector = embedder.embed_one("Where do I live?")
    given = llm.answer(Prompt(question="Where do I live?", context=context, question_vector=vector))
    assert "Where do I live?" not in seen
    seen.clear()
    assert llm.answer(Prompt(question="Where do I live?", context=context)) == given
    assert "Where do I live?" in seen
    assert "Lisbon" in given


def test_with_workers_the_turn_does_not_look_for_facts_they_have_not_extracted_yet(user, monkeypatch):
    looked: list[int] = []

    def facts_of_message(*, message_id, owner=None):
        looked.append(message_id)
        return []

    monkeypatch.setattr(turns, "facts_of_message", facts_of_message)
    monkeypatch.setattr(turns.facts_extract_task, "delay", lambda *args: None)
    monkeypatch.setattr(turns.embed_node, "delay", lambda *args: None)
    conversation = Conversation.objects.create(owner=user)
    conf = turns.facts_extract_task.app.conf
    eager = conf.task_always_eager
    try:
        conf.task_always_eager = False  # tasks go to workers
        result = turns.message_post(user=user, conversation_id=conversation.pk, content="I live in Lisbon.")
        assert result.memory_updated == [] and looked == []
        conf.task_always_eager = True  # tasks run in the turn
        result = turns.message_post(user=user, conversation_id=conversation.pk, content="I keep bees.")
        assert looked == [result.user_message.pk]
    finally:
        conf.task_always_eager = eager
