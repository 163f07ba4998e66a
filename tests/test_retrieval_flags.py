"""The embedding row's copy of what retrieval filters on (its node's owner, kind, and retrievable AND informative)
stays right on every write path, and the two vector plans (exact scan, partial HNSW index) return the same."""

import pytest
from django.db import connection

from chat.models import Conversation, Message, Role
from memory.embeddings import embedding_store
from memory.models import DerivedStatus, Embedding, Fact, Node
from memory.retrieval import context_retrieve, nearest_within, vector_plan
from tests.test_context import E0, unit

pytestmark = pytest.mark.django_db(transaction=True)



def message(user, content, similarity=0.9, role=Role.USER, conversation=None):
    conversation = conversation or Conversation.objects.create(owner=user)
    stored = Message.objects.create(conversation=conversation, owner=user, role=role, content=content)
    embedding_store(node_id=stored.pk, vector=unit(similarity))
    return stored


def copied(node) -> tuple[int, str, bool]:
    """The embedding row's owner, kind and flag, as the database holds them."""
    return Embedding.objects.filter(node_id=node.pk).values_list("owner_id", "kind", "retrievable").get()


def test_a_stored_item_s_embedding_carries_its_owner_kind_and_flag(user):
    said = message(user, "My tortoise is called Sheldon.")
    asked = message(user, "What is my tortoise called?")
    acknowledged = message(user, "Noted, I will remember that.", role=Role.ASSISTANT)
    assert said.informative and not asked.informative and not acknowledged.informative
    assert copied(said) == (user.pk, "message", True)
    assert copied(asked) == (user.pk, "message", False)
    assert copied(acknowledged) == (user.pk, "message", False)
    fact = Fact.objects.create(owner=user, content="The user's tortoise is called Sheldon.")
    embedding_store(node_id=fact.pk, vector=unit(0.8))
    assert copied(fact) == (user.pk, "fact", True)


def test_the_flag_follows_every_change_of_the_node(user):
    said = message(user, "I keep bees in Ghent.")
    embedding_store(node_id=said.pk, vector=unit(0.5))  # re-embedded: a new vector, the same flags
    assert copied(said) == (user.pk, "message", True)
    Node.objects.filter(pk=said.pk).update(informative=False)  # an ORM update, not a save()
    assert copied(said)[2] is False
    Node.objects.filter(pk=said.pk).update(informative=True)
    assert copied(said)[2] is True
    said.retrievable = False  # hidden by a save()
    said.save()
    assert copied(said)[2] is False
    fact = Fact.objects.create(owner=user, content="The user keeps bees in Ghent.")
    embedding_store(node_id=fact.pk, vector=unit(0.8))
    fact.status = DerivedStatus.SUPERSEDED
    fact.save()
    assert copied(fact) == (user.pk, "fact", False)
    Node.objects.filter(pk=said.pk).delete()
    assert not Embedding.objects.filter(node_id=said.pk).exists()


def test_the_flag_cannot_be_written_apart_from_the_node(user, other_user):
    asked = message(user, "Who did I go sailing with?")
    Embedding.objects.filter(node_id=asked.pk).update(retrievable=True, kind="fact", owner_id=other_user.pk)
    assert copied(asked) == (user.pk, "message", False)
    said = Message.objects.create(
        conversation=Conversation.objects.create(owner=user), owner=user, role=Role.USER, content="I sail in Porto."
    )
    Embedding.objects.bulk_create(
        [Embedding(node=said, owner=user, vector=unit(0.4).tolist(), backend="test", kind="", retrievable=False)]
    )
    assert copied(said) == (user.pk, "message", True)


def test_non_retrievable_vectors_stay_out_of_the_hnsw_index(user):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "JOIN pg_am a ON a.oid = c.relam WHERE i.indrelid = 'memory_embedding'::regclass AND a.amname = 'hnsw'"
        )
        (definition,) = cursor.fetchone()
    assert definition.endswith("WHERE retrievable")


def test_both_plans_return_the_same_context_and_neighbours(user, other_user, settings):
    conversation = Conversation.objects.create(owner=user)
    said = [
        "My tortoise is called Sheldon.", "I keep bees in Ghent.", "I sail with Nadia in Porto.",
        "My road bike cost 900 euros.", "I bake sourdough on Sundays.", "Priya taught me chess.",
        "I swim in the lake at dawn.",
    ]
    for similarity, content in zip([0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.3], said, strict=True):
        message(user, content, similarity, conversation=conversation)
    asked = message(user, "Where do I keep my kayak?", 0.99, conversation=conversation)
    noted = message(user, "Noted, I will remember that.", 0.98, role=Role.ASSISTANT, conversation=conversation)
    hidden = message(user, "My kayak is in Lyon.", 0.97, conversation=conversation)
    hidden.retrievable = False
    hidden.save()
    message(other_user, "I keep item 0.96 in Cork.", 0.96)

    def both() -> tuple[list, dict]:
        context = [(r.node.pk, round(r.score, 4)) for r in context_retrieve(user=user, query_vector=E0, text="item?")]
        near = nearest_within(owner_id=user.pk, vectors=[E0], max_distance=0.35)
        return context, {pk: round(d, 4) for pk, d in near.items()}

    settings.DELLM_RETRIEVAL_EXACT_MAX_ITEMS = 100
    assert vector_plan(owner_id=user.pk) == "exact"
    exact = both()
    settings.DELLM_RETRIEVAL_EXACT_MAX_ITEMS = 1
    assert vector_plan(owner_id=user.pk) == "index"
    assert both() == exact
    context, near = exact
    assert len(context) == 5 and not {asked.pk, noted.pk, hidden.pk} & {pk for pk, _ in context}
    # Every vector within the distance, retrievable or not (what forgetting's checks need).
    assert {asked.pk, noted.pk, hidden.pk} <= set(near) and len(near) == 7
