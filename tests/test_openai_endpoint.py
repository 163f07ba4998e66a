"""The OpenAI-compatible endpoint, driven by the official openai client over HTTP against a live server."""

import openai
import pytest

from accounts.models import ApiToken
from accounts.services import token_create, token_revoke
from chat.models import Message
from memory.models import Edge, Node
from provenance.models import DeletionRequest

pytestmark = pytest.mark.django_db(transaction=True)


def client(live_app, key):
    return openai.OpenAI(base_url=f"{live_app}/v1", api_key=key, max_retries=0, timeout=120)


def ask(c, text, stream=False, **kwargs):
    if not stream:
        completion = c.chat.completions.create(model="anything", messages=[{"role": "user", "content": text}], **kwargs)
        return completion.choices[0].message.content, completion
    chunks = list(c.chat.completions.create(
        model="anything", messages=[{"role": "user", "content": text}], stream=True,
        stream_options={"include_usage": True}, **kwargs,
    ))
    return "".join(ch.choices[0].delta.content or "" for ch in chunks if ch.choices), chunks


def test_memory_provenance_and_forgetting_through_the_official_client(live_app, user):
    _, key = token_create(user=user, name="my chat UI")
    c = client(live_app, key)
    models = c.models.list()
    assert [m.id for m in models.data] == ["dellm"]

    said, completion = ask(c, "I live in Lisbon.")
    assert said and completion.usage.total_tokens > 0
    lisbon = Message.objects.get(owner=user, content="I live in Lisbon.")

    answer, chunks = ask(c, "Where do I live?", stream=True, user="second-thread")
    assert "Lisbon" in answer and len(chunks) > 3
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
    reply = Message.objects.get(owner=user, role="assistant", content=answer.strip())
    assert Edge.objects.filter(src=lisbon, dst=reply).exists()
    assert reply.conversation.external_key == "user:second-thread"
    assert lisbon.conversation.external_key.startswith("token:")

    before = Node.objects.count()
    answer, _ = ask(c, "Forget that I live in Lisbon.")
    assert "not forgotten anything yet" in answer and "?forget=" in answer
    assert Node.objects.count() == before  # the request is neither answered by the LLM nor stored
    assert DeletionRequest.objects.filter(owner=user, status="previewed").count() == 1

    answer, _ = ask(c, "Forget that I live in Lisbon.", stream=True)
    assert "not forgotten anything yet" in answer


def test_revoked_and_foreign_tokens(live_app, user, other_user):
    token, key = token_create(user=user, name="laptop")
    c = client(live_app, key)
    ask(c, "My bike is red.")
    token_revoke(user=user, token_id=token.pk)
    with pytest.raises(openai.AuthenticationError) as error:
        ask(c, "What colour is my bike?")
    assert error.value.status_code == 401 and error.value.body["code"] == "invalid_api_key"
    with pytest.raises(openai.AuthenticationError):
        client(live_app, "dllm-not-a-real-key").models.list()

    _, other_key = token_create(user=other_user, name="theirs")
    theirs = client(live_app, other_key)
    answer, completion = ask(theirs, "What colour is my bike?")
    assert "red" not in answer.lower()
    own_nodes = set(Node.objects.filter(owner=user).values_list("pk", flat=True))
    assert not set(completion.model_extra["dellm"]["context"]) & own_nodes
    mine = Message.objects.get(owner=user, content="My bike is red.").conversation_id
    with pytest.raises(openai.NotFoundError):
        theirs.chat.completions.create(
            model="dellm",
            messages=[{"role": "user", "content": "hi"}],
            extra_headers={"X-DeLLM-Conversation": str(mine)},
        )
    assert ApiToken.objects.get(pk=token.pk).revoked_at is not None


def test_bad_requests_get_openai_shaped_errors(live_app, user):
    _, key = token_create(user=user, name="cli")
    c = client(live_app, key)
    for messages in ([], [{"role": "system", "content": "only a system message"}], [{"role": "user", "content": ""}]):
        with pytest.raises(openai.BadRequestError) as error:
            c.chat.completions.create(model="dellm", messages=messages)
        assert error.value.body["message"] and error.value.body["type"] == "invalid_request_error"
    assert Message.objects.filter(owner=user).count() == 0
