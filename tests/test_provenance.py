"""Dep(M) and explanation paths over recorded edges (the paper's Fig. 3/7 worked example)."""

import pytest

from chat.models import Conversation, Message, Role
from memory.graph import context_ids, edges_record
from memory.models import Edge
from provenance.selectors import dep_explained, dep_ids, node_influence

pytestmark = pytest.mark.django_db


def _messages(user, n):
    conversation = Conversation.objects.create(owner=user)
    return [
        Message.objects.create(
            conversation=conversation, owner=user, role=Role.USER if i % 2 else Role.ASSISTANT, content=f"m{i}"
        )
        for i in range(1, n + 1)
    ]


@pytest.fixture
def fig7(user):
    """context(m2)={m1}, context(m4)={m1,m3}, context(m6)={m5}, context(m8)={m1,m7}."""
    m = {i: msg for i, msg in enumerate(_messages(user, 8), start=1)}
    edges_record(context_ids=[m[1].pk], dst_id=m[2].pk)
    edges_record(context_ids=[m[1].pk, m[3].pk], dst_id=m[4].pk)
    edges_record(context_ids=[m[5].pk], dst_id=m[6].pk)
    edges_record(context_ids=[m[1].pk, m[7].pk], dst_id=m[8].pk)
    return m


def test_paper_fig7_dep_of_m1(user, fig7):
    m = fig7
    assert dep_ids(user=user, seeds=[m[1].pk]) == {m[1].pk, m[2].pk, m[4].pk, m[8].pk}


def test_dep_of_a_set_is_the_union(user, fig7):
    m = fig7
    assert dep_ids(user=user, seeds=[m[3].pk, m[5].pk]) == {m[3].pk, m[4].pk, m[5].pk, m[6].pk}


def test_edges_equal_context_exactly(user, fig7):
    m = fig7
    ctx = context_ids(node_ids=[m[4].pk, m[8].pk, m[1].pk])
    assert ctx == {m[4].pk: [m[1].pk, m[3].pk], m[8].pk: [m[1].pk, m[7].pk], m[1].pk: []}
    assert Edge.objects.count() == 6


def test_transitive_paths_are_shortest_and_depth_limited(user):
    a, b, c, d = _messages(user, 4)
    edges_record(context_ids=[a.pk], dst_id=b.pk)
    edges_record(context_ids=[b.pk], dst_id=c.pk)
    edges_record(context_ids=[c.pk, a.pk], dst_id=d.pk)  # d is reachable directly and through b, c
    explained = dep_explained(user=user, seeds=[a.pk])
    assert explained[c.pk].path == [a.pk, b.pk, c.pk] and explained[c.pk].depth == 2
    assert explained[d.pk].path == [a.pk, d.pk] and explained[d.pk].depth == 1
    limited = dep_explained(user=user, seeds=[a.pk], max_depth=1)
    assert set(limited) == {a.pk, b.pk, d.pk}
    assert [e.id for e in node_influence(user=user, node_id=a.pk)] == [b.pk, d.pk, c.pk]


def test_dep_never_crosses_to_another_user(user, other_user):
    (mine,) = _messages(user, 1)
    (theirs,) = _messages(other_user, 1)
    # Such an edge can't be produced by the chat (contexts are per user); the traversal still refuses it.
    Edge.objects.create(src=mine, dst=theirs)
    assert dep_ids(user=user, seeds=[mine.pk]) == {mine.pk}
    assert dep_ids(user=other_user, seeds=[mine.pk]) == set()


def test_duplicate_and_self_context_items_are_recorded_once(user):
    a, b = _messages(user, 2)
    edges_record(context_ids=[a.pk, a.pk, b.pk], dst_id=b.pk)
    assert list(Edge.objects.values_list("src_id", "dst_id")) == [(a.pk, b.pk)]
