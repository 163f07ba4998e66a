"""The picture of influence (server-side SVG): the right items, in the right columns, with an arrow along
every provenance edge between them; for a message and for a Forget preview; only the owner's."""

import xml.etree.ElementTree as ET

import pytest

from chat.models import Conversation, Message, Role
from memory.graph import edges_record
from provenance.forgetting import services as forget

pytestmark = pytest.mark.django_db

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def world(user):
    """Items 1-6 (1, 3 questions; the rest replies) with 1->2, 2->4, 3->4, 4->5, 2->6, 4->6."""
    conversation = Conversation.objects.create(owner=user)
    roles = {1: Role.USER, 2: Role.ASSISTANT, 3: Role.USER, 4: Role.ASSISTANT, 5: Role.ASSISTANT, 6: Role.ASSISTANT}
    m = {
        i: Message.objects.create(conversation=conversation, owner=user, role=role, content=f"item {i} <b>&")
        for i, role in roles.items()
    }
    for dst, ctx in {2: [1], 4: [2, 3], 5: [4], 6: [2, 4]}.items():
        edges_record(context_ids=[m[c].pk for c in ctx], dst_id=m[dst].pk)
    return m


def drawn(svg: str, m: dict) -> tuple[dict[int, tuple[str, float]], set[tuple[int, int]]]:
    """{item number: (classes, x)} and {(src, dst)} of a picture, in the fixture's numbering."""
    number = {v.pk: k for k, v in m.items()}
    root = ET.fromstring(svg)
    nodes = {
        number[int(a.get("data-id"))]: (a.get("class"), float(a.find(f"{SVG}rect").get("x")))
        for a in root.iter(f"{SVG}a")
    }
    edges = {(number[int(p.get("data-src"))], number[int(p.get("data-dst"))]) for p in root.iter(f"{SVG}path")
             if p.get("data-src")}
    return nodes, edges


def test_influence_picture_of_a_message(api, world):
    response = api.get(f"/api/messages/{world[2].pk}/influence/graph/")
    assert response.status_code == 200 and response["Content-Type"].startswith("image/svg+xml")
    nodes, edges = drawn(response.content.decode(), world)
    assert set(nodes) == {1, 2, 4, 5, 6}  # built from 1; influenced 4 and 6 directly, 5 through 4; not 3
    assert edges == {(1, 2), (2, 4), (2, 6), (4, 6), (4, 5)}
    column = {n: x for n, (_, x) in nodes.items()}
    assert column[1] < column[2] < column[4] == column[6] < column[5]
    assert "focus" in nodes[2][0] and "kind-assistant" in nodes[2][0] and "kind-user" in nodes[1][0]
    assert "<b>" not in response.content.decode()  # excerpts are escaped


def test_preview_picture_matched_then_tainted(api, world, user):
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[world[1].pk])
    response = api.get(f"/api/forget/{preview.pk}/graph/")
    assert response.status_code == 200
    nodes, edges = drawn(response.content.decode(), world)
    assert set(nodes) == {1, 2, 4, 5, 6}
    assert "matched" in nodes[1][0] and all("influenced" in nodes[n][0] for n in (2, 4, 5, 6))
    assert edges == {(1, 2), (2, 4), (2, 6), (4, 6), (4, 5)}


def test_pictures_are_the_owners_only(other_api, world, user):
    preview = forget.forget_preview(user=user, mode="ids", message_ids=[world[1].pk])
    refused = other_api.get(f"/api/messages/{world[2].pk}/influence/graph/")
    assert refused.status_code == 404 and refused.json()["code"] == "not_found"
    assert other_api.get(f"/api/forget/{preview.pk}/graph/").status_code == 404
