"""Context construction: top-k above a threshold, the user's own informative items only, hybrid ranking,
one slot per group of near-duplicates, and edges = context = what the LLM was given."""

import math
import re

import numpy as np
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from chat import services, turns
from chat.models import Conversation, Message, Role
from dellm_site.ai.embedding import get_embedder
from memory.embeddings import embedding_store
from memory.graph import edges_record
from memory.models import Edge, Embedding, Fact, Node, Summary
from memory.retrieval import context_retrieve, nearest_within, vector_plan

pytestmark = pytest.mark.django_db(transaction=True)

DIM = 384


def unit(similarity: float) -> np.ndarray:
    """A vector whose cosine similarity to e0 is exactly ``similarity``."""
    v = np.zeros(DIM, dtype=np.float32)
    v[0], v[1] = similarity, math.sqrt(max(0.0, 1 - similarity**2))
    return v


E0 = unit(1.0)


def store(user, content, similarity, conversation=None, role=Role.USER):
    conversation = conversation or Conversation.objects.create(owner=user)
    message = Message.objects.create(conversation=conversation, owner=user, role=role, content=content)
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


def test_a_small_history_is_scanned_exactly_a_large_one_walks_the_index_and_both_rank_alike(
    user, other_user, settings
):
    conversation = Conversation.objects.create(owner=user)
    for similarity in [0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.3, 0.26, 0.24]:
        store(user, f"item {similarity}", similarity, conversation)
    store(other_user, "theirs", 0.99)
    sheldon = store(user, "My tortoise is called Sheldon.", 0.3, conversation)
    settings.DELLM_RETRIEVAL_EXACT_MAX_ITEMS = 10
    assert vector_plan(owner_id=user.pk) == "exact" and vector_plan(owner_id=other_user.pk) == "exact"
    exact = [(r.node.pk, round(r.score, 4)) for r in context_retrieve(user=user, query_vector=E0, text="Sheldon?")]
    assert sheldon.pk in dict(exact) and len(exact) == 5
    settings.DELLM_RETRIEVAL_EXACT_MAX_ITEMS = 9  # ten items: more than the exact plan takes
    assert vector_plan(owner_id=user.pk) == "index" and vector_plan(owner_id=other_user.pk) == "exact"
    indexed = [(r.node.pk, round(r.score, 4)) for r in context_retrieve(user=user, query_vector=E0, text="Sheldon?")]
    assert indexed == exact

    def near():
        found = nearest_within(owner_id=user.pk, vectors=[E0, unit(0.95)], max_distance=0.42)
        return {pk: round(1 - d, 4) for pk, d in found.items()}

    by_index = near()
    settings.DELLM_RETRIEVAL_EXACT_MAX_ITEMS = 10
    assert near() == by_index
    # Similarity >= 0.58 to either vector (54.5 degrees): to E0 down to 0.6, to the other down to 0.3.
    assert len(by_index) == 8 and by_index[sheldon.pk] == round(math.cos(math.acos(0.3) - math.acos(0.95)), 4)


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
    facts = [
        "I live in Lisbon.",
        "I have a tortoise called Sheldon.",
        "My sister lives in Porto.",
        "I work as a nurse.",
        "I moved to Lisbon in 2019.",
        "I like jazz.",
        "Lisbon is hilly where I live.",
    ]
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
    assert Node.objects.filter(pk__in=retrieved, informative=True).count() == len(retrieved)
    # The best-scoring informative item is kept, or one saying the same thing in its place.
    informative = set(Node.objects.filter(owner=user, informative=True).values_list("pk", flat=True))
    best = max((i for i in scores if i in informative), key=scores.get)
    assert best in retrieved or "Lisbon" in Node.objects.get(pk=best).content
    assert "Lisbon" in reply.content


def test_items_that_hold_no_information_take_no_slot(user):
    """Questions, acknowledgements and "nothing found" replies never compete, however similar."""
    conversation = Conversation.objects.create(owner=user)
    store(user, "Where do I live?", 1.0, conversation)
    store(user, "Noted, I will remember that.", 0.99, conversation, role=Role.ASSISTANT)
    store(user, "I don't have anything in my memory about that.", 0.98, conversation, role=Role.ASSISTANT)
    lisbon = store(user, "I live in Lisbon.", 0.5, conversation)
    assert [r.node.pk for r in context_retrieve(user=user, query_vector=E0)] == [lisbon.pk]


def test_near_duplicates_share_one_slot_which_the_best_takes(user):
    conversation = Conversation.objects.create(owner=user)
    lisbon = store(user, "I live in Lisbon.", 0.9, conversation)
    again = store(user, "i live in Lisbon!", 0.8, conversation)
    fact = Fact.objects.create(owner=user, content="Resides in the Portuguese capital.")
    edges_record(context_ids=[lisbon.pk], dst_id=fact.pk)
    embedding_store(node_id=fact.pk, vector=unit(0.95))
    nurse = store(user, "I work as a nurse.", 0.6, conversation)
    got = [r.node.pk for r in context_retrieve(user=user, query_vector=E0)]
    assert got == [fact.pk, again.pk, nurse.pk]  # the fact took its source's slot; the repeat is no copy of it
    Fact.objects.filter(pk=fact.pk).update(retrievable=False)
    got = [r.node.pk for r in context_retrieve(user=user, query_vector=E0)]
    assert got == [lisbon.pk, nurse.pk]  # "I live in Lisbon." and "i live in Lisbon!" are one group


def test_rare_words_and_names_are_found_when_the_embedding_ranks_them_low(user):
    conversation = Conversation.objects.create(owner=user)
    hobbies = [
        "I enjoy baking bread.",
        "I go hiking on weekends.",
        "I play chess online.",
        "I collect vinyl records.",
        "I paint watercolours.",
        "I swim in the sea.",
    ]
    for similarity, text in zip([0.9, 0.85, 0.8, 0.75, 0.7, 0.65], hobbies, strict=True):
        store(user, text, similarity, conversation)
    sheldon = store(user, "My tortoise is called Sheldon.", 0.3, conversation)
    by_vector = context_retrieve(user=user, query_vector=E0)
    assert sheldon.pk not in [r.node.pk for r in by_vector]
    hybrid = context_retrieve(user=user, query_vector=E0, text="How old can Sheldon get?")
    assert len(hybrid) == 5 and sheldon.pk in [r.node.pk for r in hybrid]
    # Words never bring in an item below the similarity threshold.
    Embedding.objects.filter(node_id=sheldon.pk).update(vector=unit(0.1).tolist())
    hybrid = context_retrieve(user=user, query_vector=E0, text="How old can Sheldon get?")
    assert sheldon.pk not in [r.node.pk for r in hybrid]


def test_the_word_ranking_reads_one_users_competing_holders_of_a_word_from_its_own_index_entry(user, other_user):
    """node_owner_words holds "<owner>:<word>" per word of each competing item: a word's entry lists only that
    user's items that may enter a context (not everyone's, nor the user's questions), and both the count of a
    word's holders and the items matched are read from it."""
    store(user, "My tortoise Sheldon eats lettuce.", 0.3)
    store(user, "Does Sheldon like dandelions?", 0.3)  # a question: not informative, so not in the index
    store(other_user, "Sheldon is my cat.", 0.3)
    with connection.cursor() as cursor:
        cursor.execute("SELECT memory_owner_words(%s, %s)", [user.pk, "My tortoise Sheldon eats lettuce."])
        assert cursor.fetchone()[0] == [f"{user.pk}:{word}" for word in ("eat", "lettuc", "sheldon", "tortois")]
    with CaptureQueriesContext(connection) as captured:
        got = context_retrieve(user=user, query_vector=E0, text="What does Sheldon eat?")
    assert [r.node.content for r in got] == ["My tortoise Sheldon eats lettuce."]
    query = next(q["sql"] for q in captured.captured_queries if "frequency AS" in q["sql"])
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        # On a few rows, once autovacuum has analysed the table, Postgres 18 may find reading the kinds through the
        # (owner, kind, created_at) btree by skip scan cheaper; on a table this small which wins depends on when
        # autovacuum last ran. Without that btree (dropped here, and back when the block rolls back), the query
        # either reads the words' index or scans the table.
        cursor.execute("DROP INDEX memory_node_owner_i_c23fda_idx")
        cursor.execute(f"EXPLAIN {query}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
        transaction.set_rollback(True)
    assert plan.count("Bitmap Index Scan on node_owner_words") == 2, plan
    assert "node_owner_fts" not in plan


def test_a_summary_or_a_reply_yields_to_the_items_it_was_built_from(user):
    conversation = Conversation.objects.create(owner=user)
    lisbon = store(user, "I live in Lisbon.", 0.5, conversation)
    nurse = store(user, "I work as a nurse.", 0.1, conversation)
    summary = Summary.objects.create(
        owner=user,
        conversation=conversation,
        content="The user said: I live in Lisbon. I work as a nurse.",
        source_count=2,
    )
    edges_record(context_ids=[lisbon.pk, nurse.pk], dst_id=summary.pk)
    embedding_store(node_id=summary.pk, vector=unit(0.9))
    question = store(user, "Where do I live and work?", 0.2, conversation)
    reply = store(user, "From what you told me: \u201cI live in Lisbon.\u201d", 0.95, conversation, role=Role.ASSISTANT)
    edges_record(context_ids=[question.pk, lisbon.pk], dst_id=reply.pk)
    assert [r.node.pk for r in context_retrieve(user=user, query_vector=E0)] == [lisbon.pk]
    # Without its sources among the candidates, a summary competes like any item.
    Embedding.objects.filter(node_id=lisbon.pk).update(vector=unit(0.1).tolist())
    assert [r.node.pk for r in context_retrieve(user=user, query_vector=E0)] == [reply.pk, summary.pk]


def test_a_message_that_only_states_something_gets_the_items_about_the_same_thing(user, settings):
    conversation = Conversation.objects.create(owner=user)
    items = [
        store(user, text, s, conversation)
        for text, s in [
            ("I live in Lisbon.", 0.9),
            ("I like Lisbon trams.", 0.7),
            ("My flat has a balcony.", 0.65),
            ("I cycle to work.", 0.5),
            ("I work as a nurse.", 0.3),
        ]
    ]
    stated = context_retrieve(user=user, query_vector=E0, text="I moved to Porto last month.")
    assert [r.node.pk for r in stated] == [items[0].pk, items[1].pk]  # top 2, at 0.6 or more
    asked = context_retrieve(user=user, query_vector=E0, text="Where should I move next?")
    assert [r.node.pk for r in asked] == [i.pk for i in items]
    settings.DELLM_CONTEXT_STATEMENT_TOP_K, settings.DELLM_CONTEXT_STATEMENT_MIN_SIMILARITY = 5, 0.25
    assert len(context_retrieve(user=user, query_vector=E0, text="I moved to Porto last month.")) == 5


def test_the_llm_is_given_exactly_the_context_and_every_item_gets_its_edge(user, openai_stub, settings):
    """Through the OpenAI-compatible stub, which records the prompt: its past items are, in order, the
    reply's context (minus the message itself), its edges and what the influence panel shows."""
    settings.DELLM_LLM = {
        "BACKEND": "dellm_site.ai.openai.OpenAILLM",
        "OPTIONS": {
            "model": "stub-model",
            "api_key": openai_stub.api_key,
            "base_url": openai_stub.base_url,
            "max_retries": 0,
        },
    }
    history = services.conversation_create(user=user)
    for text in [
        "I live in Lisbon.",
        "What is the weather like in Lisbon?",
        "I have a tortoise called Sheldon.",
        "I moved to Lisbon in 2019.",
    ]:
        turns.message_post(user=user, conversation_id=history.pk, content=text)
    asked = services.conversation_create(user=user)
    result = turns.message_post(user=user, conversation_id=asked.pk, content="Which city do I live in, Lisbon?")
    prompt = openai_stub.chat_requests[-1]["messages"][-1]["content"]
    given = re.findall(r"^\[\d+\] (.*)$", prompt, flags=re.MULTILINE)
    contents = dict(Node.objects.filter(pk__in=result.context).values_list("pk", "content"))
    assert given and given == [contents[pk] for pk in result.context[1:]]
    assert "What is the weather like in Lisbon?" not in given
    edges = list(Edge.objects.filter(dst=result.reply).order_by("pk").values_list("src_id", flat=True))
    assert edges == result.context
    client = APIClient()
    client.force_authenticate(user=user)
    assert client.get(f"/api/messages/{result.reply.pk}/influence/").json()["context"] == result.context


def test_words_found_too_common_to_rank_by_are_not_counted_again_for_a_while(user, other_user, monkeypatch):
    from memory import retrieval

    monkeypatch.setattr(retrieval, "COMMON_WORDS_MIN_ITEMS", 1)
    conversation = Conversation.objects.create(owner=user)
    for day in range(8):
        store(user, f"I went sailing on weekend {day}.", 0.5 + day / 100, conversation)
    sheldon = store(user, "My tortoise Sheldon sails too.", 0.3, conversation)
    text = "Who went sailing with Sheldon?"
    first = [r.node.pk for r in context_retrieve(user=user, query_vector=E0, text=text)]
    assert sheldon.pk in first
    known = retrieval._known_common(user.pk)
    assert "sail" in known and "sheldon" not in known  # eight holders of nine items is common; one is rare
    assert retrieval._known_common(other_user.pk) == []
    with CaptureQueriesContext(connection) as captured:
        again = [r.node.pk for r in context_retrieve(user=user, query_vector=E0, text=text)]
    assert again == first
    query = next(q["sql"] for q in captured.captured_queries if "frequency AS" in q["sql"])
    passed = re.search(r"lexeme <> ALL\('\{([^}]*)\}'::text\[\]\)", query).group(1).split(",")
    assert "sail" in passed and "sheldon" not in passed  # the known common words' holders are not counted again
    # Without a remembered verdict (it expired) the word is counted again, with the same result.
    monkeypatch.setattr(retrieval, "COMMON_WORDS_TTL_S", 0.0)
    retrieval._common_words.clear()
    assert [r.node.pk for r in context_retrieve(user=user, query_vector=E0, text=text)] == first
    assert retrieval._known_common(user.pk) == []


def test_a_context_walk_of_the_index_is_bounded_and_a_scan_for_everything_near_a_vector_is_not(user, settings):
    for similarity in (0.9, 0.8, 0.7):
        store(user, f"item {similarity}", similarity)
    settings.DELLM_RETRIEVAL_EXACT_MAX_ITEMS = 0  # the index plan, as for a heavy user
    settings.DELLM_RETRIEVAL_MAX_SCAN_TUPLES = 1234
    with CaptureQueriesContext(connection) as captured:
        got = context_retrieve(user=user, query_vector=E0, text="Which items?")
    assert len(got) == 3
    assert any("hnsw.max_scan_tuples" in q["sql"] and "'1234'" in q["sql"] for q in captured.captured_queries)
    with CaptureQueriesContext(connection) as captured:
        assert len(nearest_within(owner_id=user.pk, vectors=[E0], max_distance=0.5)) == 3
    assert not any("max_scan_tuples" in q["sql"] for q in captured.captured_queries)
