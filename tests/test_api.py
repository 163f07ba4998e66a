"""REST API: conversations, messages, influence, isolation between users, and bad input."""

import pytest
from django.conf import settings

from chat.models import Conversation
from memory.models import Embedding, Node
from provenance.models import Edge

pytestmark = pytest.mark.django_db(transaction=True)


def counts():
    return (Conversation.objects.count(), Node.objects.count(), Edge.objects.count(), Embedding.objects.count())


def new_conversation(api, title=""):
    response = api.post("/api/conversations/", {"title": title}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def post(api, conversation_id, content):
    return api.post(f"/api/conversations/{conversation_id}/messages/", {"content": content}, format="json")


def test_token_login_and_unauthenticated_refusal(client, user):
    response = client.post("/api/auth/token/", {"username": user.username, "password": user.raw_password})
    assert response.status_code == 200 and response.json()["token"] == user.token
    response = client.post("/api/auth/token/", {"username": user.username, "password": "wrong"})
    assert response.status_code == 400 and response.json()["code"] == "invalid"
    response = client.get("/api/conversations/")
    assert response.status_code in (401, 403) and "detail" in response.json()


def test_memory_across_conversations_and_influence(api, user):
    first = new_conversation(api, "About me")
    r1 = post(api, first["id"], "I live in Lisbon.")
    assert r1.status_code == 201
    lisbon = r1.json()["user_message"]
    assert lisbon["role"] == "user" and lisbon["context"] == []
    post(api, first["id"], "I have a tortoise called Sheldon.")

    second = new_conversation(api)
    r3 = post(api, second["id"], "Where do I live?").json()
    reply = r3["reply"]
    assert reply["role"] == "assistant" and "Lisbon" in reply["content"]
    assert reply["context"][0] == r3["user_message"]["id"] and lisbon["id"] in reply["context"]

    listed = api.get(f"/api/conversations/{second['id']}/messages/").json()
    assert [m["id"] for m in listed] == [r3["user_message"]["id"], reply["id"]]
    assert listed[1]["context"] == reply["context"]

    influence = api.get(f"/api/messages/{lisbon['id']}/influence/").json()
    influenced = {entry["id"]: entry for entry in influence["influenced"]}
    assert reply["id"] in influenced
    assert influenced[reply["id"]]["path"][0] == lisbon["id"] and influenced[reply["id"]]["path"][-1] == reply["id"]
    assert influence["items"][str(reply["id"])]["conversation"] == second["id"]
    assert api.get(f"/api/messages/{reply['id']}/influence/").json()["context"] == reply["context"]

    titles = [c["title"] for c in api.get("/api/conversations/").json()]
    assert set(titles) == {"About me", "Where do I live?"}


def test_another_user_gets_404_everywhere(api, other_api, user):
    conversation = new_conversation(api)
    message = post(api, conversation["id"], "My secret is 1234.").json()["user_message"]
    before = counts()
    for response in (
        other_api.get(f"/api/conversations/{conversation['id']}/"),
        other_api.get(f"/api/conversations/{conversation['id']}/messages/"),
        post(other_api, conversation["id"], "inject"),
        other_api.get(f"/api/messages/{message['id']}/influence/"),
    ):
        assert response.status_code == 404, response.content
        assert response.json()["code"] == "not_found"
    assert other_api.get("/api/conversations/").json() == []
    assert counts() == before
    # The other user's own question never retrieves the first user's message.
    theirs = new_conversation(other_api)
    reply = post(other_api, theirs["id"], "What is my secret?").json()["reply"]
    assert message["id"] not in reply["context"] and "1234" not in reply["content"]


@pytest.mark.parametrize(
    "body, code",
    [
        ({"content": ""}, "empty_message"),
        ({"content": "   \n "}, "empty_message"),
        ({"content": "x" * (settings.DELLM_MAX_MESSAGE_CHARS + 1)}, "message_too_long"),
        ({}, "invalid"),
        ({"content": ["not", "text"]}, "invalid"),
    ],
)
def test_bad_messages_are_refused_and_change_nothing(api, body, code):
    conversation = new_conversation(api)
    before = counts()
    response = api.post(f"/api/conversations/{conversation['id']}/messages/", body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["code"] == code and response.json()["detail"]
    assert counts() == before


def test_malformed_json_and_unknown_ids(api):
    conversation = new_conversation(api)
    before = counts()
    response = api.post(
        f"/api/conversations/{conversation['id']}/messages/", data="{not json", content_type="application/json"
    )
    assert response.status_code == 400 and response.json()["code"] == "parse_error"
    assert api.get("/api/conversations/999999/messages/").status_code == 404
    assert post(api, 999999, "hello").status_code == 404
    assert api.get("/api/messages/999999/influence/").json() == {"code": "not_found", "detail": "Message not found."}
    assert api.get("/api/nope/").status_code == 404 and api.get("/api/nope/").json()["code"] == "not_found"
    long_title = api.post("/api/conversations/", {"title": "t" * 201}, format="json")
    assert long_title.status_code == 400 and long_title.json()["fields"]["title"]
    assert counts() == before


def test_openapi_schema_documents_the_contract(api):
    response = api.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    schema = response.json() if response["Content-Type"].startswith("application/json") else None
    if schema is None:
        import yaml

        schema = yaml.safe_load(response.content)
    paths = schema["paths"]
    for path in (
        "/api/auth/token/",
        "/api/conversations/",
        "/api/conversations/{conversation_id}/messages/",
        "/api/messages/{message_id}/influence/",
    ):
        assert path in paths, path
    assert "post" in paths["/api/conversations/{conversation_id}/messages/"]


def test_openapi_schema_validates_without_warnings(tmp_path):
    from django.core.management import call_command

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yml"))
    text = (tmp_path / "schema.yml").read_text()
    for path in ("/api/forget/preview/", "/api/memory/", "/v1/chat/completions", "/api/account/export/"):
        assert f"  {path}:" in text
