"""Context construction: top-k above a threshold, the user's own items only, edges = context."""

import math

import numpy as np
import pytest

from chat import services, turns
from chat.models import Conversation, Message, Role
from dellm_site.ai.embedding import get_embedder
from memory.embeddings import embedding_store
from memory.models import Edge, Embedding
from memory.retrieval import context_retrieve

pytestmark = pytest.mark.django_db(transaction=True)

DIM = 384


def unit(similarity: float) -> np.ndarray:
    """A vector whose cosine similarity to e0 is exactly ``similarity``."""
    v = np.zeros(DIM, dtype=np.float32)
    v[0], v[1] = similarity, math.sqrt(max(0.0, 1 - similarity**2))
    return v


E0 = unit(1.0)


def store(user, content, similarity, conversation=None):
    conversation = conversation or Conversation.objects.create(owner=user)
    message = Message.objects.create(conversation=conversation, owner=user, role=Role.USER, content=content)
    embedding_store(node_id=message.pk, vector=unit(similarity))
    return message


def test_top_k_and_threshold_are_honoured(user):
    sims = [0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.3, 0.26, 0.24, 0.1]
    stored = {s: store(user, f"item {s}", s) for s in sims}
    got = context_retrieve(user=user, query_vector=E0)
    assert [round(r.score, 2) for r in got] == [0.95, 0.9, 0.8, 0.7, 0.6]
    got = context_retrieve(user=user, query_vector=E0, top_k=20)
    assert {r.node.pk for r in got} == {stored[s].pk for s in sims if s >= 0.25}
    got = context_retrieve(user=user, query_vector=E0, top_k=20, min_similarity=0.65)
    assert [round(r.score, 2) for r in got] == [0.95, 0.9, 0.8, 0.7]


def test_only_the_users_own_retrievable_items(user, other_user):
    mine = store(user, "mine", 0.5)
    store(other_user, "theirs", 0.99)
    hidden = store(user, "hidden", 0.98)
    hidden.retrievable = False
    hidden.save()
    got = context_retrieve(user=user, query_vector=E0)
    assert [r.node.pk for r in got] == [mine.pk]


def test_settings_control_defaults(user, settings):
    for s in (0.9, 0.8, 0.7):
        store(user, f"x{s}", s)
    settings.DELLM_CONTEXT_TOP_K = 2
    assert len(context_retrieve(user=user, query_vector=E0)) == 2
    settings.DELLM_CONTEXT_TOP_K = 5
    settings.DELLM_CONTEXT_MIN_SIMILARITY = 0.85
    assert len(context_retrieve(user=user, query_vector=E0)) == 1


def test_posted_reply_edges_equal_its_context(user, other_user):
    """Through the real embedder: the reply's edges are exactly the user message plus the retrieved items."""
    conversation = services.conversation_create(user=user)
    facts = ["I live in Lisbon.", "I have a tortoise called Sheldon.", "My sister lives in Porto.",
             "I work as a nurse.", "I moved to Lisbon in 2019.", "I like jazz.", "Lisbon is hilly where I live."]
    for text in facts:
        turns.message_post(user=user, conversation_id=conversation.pk, content=text)
    # Another user's identical sentence must never enter this user's context.
    other_conversation = services.conversation_create(user=other_user)
    turns.message_post(user=other_user, conversation_id=other_conversation.pk, content="I live in Lisbon.")

    question = services.conversation_create(user=user)
    user_message, reply, context = turns.message_post(
        user=user, conversation_id=question.pk, content="Where do I live?"
    )
    assert context[0] == user_message.pk
    retrieved = context[1:]
    assert 1 <= len(retrieved) <= 5
    assert set(Message.objects.filter(pk__in=retrieved).values_list("owner_id", flat=True)) == {user.pk}
    edges = list(Edge.objects.filter(dst=reply).order_by("pk").values_list("src_id", flat=True))
    assert edges == context
    # Every retrieved item passes the threshold, and nothing left out scores higher than what was kept.
    q = get_embedder().embed_one("Where do I live?")
    scores = {
        e.node_id: float(np.dot(q, np.asarray(e.vector)))
        for e in Embedding.objects.filter(owner=user).exclude(node__in=[user_message, reply])
    }
    assert all(scores[i] >= 0.25 for i in retrieved)
    left_out = [s for i, s in scores.items() if i not in retrieved]
    assert not left_out or max(left_out) <= min(scores[i] for i in retrieved) + 1e-6
    assert "Lisbon" in reply.content
