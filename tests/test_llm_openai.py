"""The ``openai`` backends (chat and embeddings) against a real OpenAI-compatible HTTP stub, through
the official ``openai`` client; then the chat service and the REST API configured to use them."""

from __future__ import annotations

import socket

import numpy as np
import openai
import pytest
from rest_framework.test import APIClient

from dellm_site.ai.embedding import EmbeddingError, OpenAIEmbedder
from dellm_site.ai.llm import LLMError
from dellm_site.ai.openai import OpenAILLM
from dellm_site.ai.prompts import ANSWER_INSTRUCTION, NO_CONTEXT_INSTRUCTION, Prompt
from tests.openai_stub import REPLY_PREFIX, stub_reply, stub_vector


def _llm(stub, **kwargs) -> OpenAILLM:
    options = {"model": "stub-model", "api_key": stub.api_key, "base_url": stub.base_url, "timeout": 5}
    options["max_retries"] = 0
    options.update(kwargs)
    return OpenAILLM(**options)


def _unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# --- the stub itself, through the official client ------------------------------------------------


def test_stub_speaks_the_protocol_to_the_official_client(openai_stub):
    client = openai.OpenAI(api_key=openai_stub.api_key, base_url=openai_stub.base_url, max_retries=0)

    assert [m.id for m in client.models.list()] == ["stub-model"]

    completion = client.chat.completions.create(
        model="stub-model", messages=[{"role": "user", "content": "first line\nsecond line"}]
    )
    assert completion.choices[0].message.content == "STUB saw: second line"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage.prompt_tokens == 4 and completion.usage.completion_tokens == 4

    chunks = list(
        client.chat.completions.create(
            model="stub-model",
            messages=[{"role": "user", "content": "hello there"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "STUB saw: hello there"
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens == 6

    floats = client.embeddings.create(model="e", input=["a", "b"], encoding_format="float")
    default = client.embeddings.create(model="e", input=["a", "b"])  # the client asks for base64
    for response in (floats, default):
        assert [row.index for row in response.data] == [0, 1]
        assert np.allclose(response.data[1].embedding, stub_vector("b", 8), atol=1e-6)

    assert [call.path for call in openai_stub.calls] == [
        "/v1/models",
        "/v1/chat/completions",
        "/v1/chat/completions",
        "/v1/embeddings",
        "/v1/embeddings",
    ]
    assert openai_stub.requests[-1]["encoding_format"] == "base64"


def test_stub_refuses_a_wrong_key_and_fails_on_demand(openai_stub):
    wrong = openai.OpenAI(api_key="sk-wrong", base_url=openai_stub.base_url, max_retries=0)
    with pytest.raises(openai.AuthenticationError) as excinfo:
        wrong.models.list()
    assert excinfo.value.status_code == 401
    assert excinfo.value.body["code"] == "invalid_api_key"
    assert openai_stub.calls[-1].authorization == "Bearer sk-wrong"

    client = openai.OpenAI(api_key=openai_stub.api_key, base_url=openai_stub.base_url, max_retries=0)
    openai_stub.fail_next(503)
    with pytest.raises(openai.InternalServerError):
        client.models.list()
    assert client.models.list().data  # only the next request failed


def test_stub_reply_echoes_the_last_line_and_the_past_items():
    prompt = Prompt(question="Where do I live?", context=["I live in Lisbon.", "I like cats."])
    assert stub_reply(prompt.to_messages()) == (
        "STUB saw: User message: Where do I live? | past items: I live in Lisbon. ; I like cats."
    )


# --- dellm_site.ai.openai.OpenAILLM -------------------------------------------------------------------


def test_openai_llm_streams_the_reply_in_pieces(openai_stub):
    prompt = Prompt(question="Where do I live?", context=["I live in Lisbon.", "My cat is called Tom."])
    pieces = list(_llm(openai_stub).stream(prompt))

    expected = stub_reply(prompt.to_messages())
    assert len(pieces) > 3
    assert "".join(pieces) == expected
    assert expected.startswith(REPLY_PREFIX + "User message: Where do I live?")

    (request,) = openai_stub.chat_requests
    assert request["stream"] is True
    assert request["model"] == "stub-model"
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    user_content = request["messages"][-1]["content"]
    assert user_content == (
        "Past items:\n[1] I live in Lisbon.\n[2] My cat is called Tom.\n\n"
        f"{ANSWER_INSTRUCTION}\n\nUser message: Where do I live?"
    )
    # The paper's order: past items, then the instruction, then the user message.
    assert user_content.index("Past items:") < user_content.index(ANSWER_INSTRUCTION) < user_content.index(
        "User message:"
    )


def test_openai_llm_without_context_sends_no_past_items(openai_stub):
    llm = _llm(openai_stub)
    reply = llm.complete(Prompt(question="Hello?"))

    assert reply == "STUB saw: User message: Hello?"
    user_content = openai_stub.chat_requests[-1]["messages"][-1]["content"]
    assert "Past items" not in user_content
    assert user_content == f"{NO_CONTEXT_INSTRUCTION}\n\nUser message: Hello?"
    assert llm.name == "openai:stub-model"


def test_openai_llm_wrong_key_is_an_llm_error_about_the_key(openai_stub):
    llm = _llm(openai_stub, api_key="sk-not-the-right-one")
    with pytest.raises(LLMError) as excinfo:
        list(llm.stream(Prompt(question="Hi")))
    assert "API key" in str(excinfo.value)
    assert excinfo.value.code == "llm_unavailable" and excinfo.value.status == 502


def test_openai_llm_server_error_is_an_llm_error(openai_stub):
    openai_stub.fail_next(500)
    with pytest.raises(LLMError) as excinfo:
        list(_llm(openai_stub).stream(Prompt(question="Hi")))
    assert "500" in str(excinfo.value)
    assert len(openai_stub.chat_requests) == 1  # max_retries=0: asked once


def test_openai_llm_retries_a_server_error_when_allowed(openai_stub):
    openai_stub.fail_next(500)
    llm = _llm(openai_stub, max_retries=1)
    assert llm.complete(Prompt(question="Hi")) == "STUB saw: User message: Hi"
    assert len(openai_stub.chat_requests) == 2


def test_openai_llm_error_in_the_middle_of_the_stream_is_an_llm_error(openai_stub):
    openai_stub.fail_next_stream("the GPU caught fire")
    pieces = []
    with pytest.raises(LLMError) as excinfo:
        for piece in _llm(openai_stub).stream(Prompt(question="Hi")):
            pieces.append(piece)
    assert pieces == ["STUB "]  # the first word arrived before the error event
    assert "the GPU caught fire" in str(excinfo.value)


def test_openai_llm_unreachable_server_is_an_llm_error():
    llm = OpenAILLM(
        model="stub-model", api_key="sk-x", base_url=f"http://127.0.0.1:{_unused_port()}/v1", timeout=2, max_retries=0
    )
    with pytest.raises(LLMError) as excinfo:
        list(llm.stream(Prompt(question="Hi")))
    assert "reach" in str(excinfo.value)


def test_openai_llm_timeout_is_an_llm_error(openai_stub):
    openai_stub.delay = 3
    llm = _llm(openai_stub, timeout=0.3)
    with pytest.raises(LLMError) as excinfo:
        list(llm.stream(Prompt(question="Hi")))
    assert "in time" in str(excinfo.value)


def test_openai_llm_timeout_in_the_middle_of_the_stream_is_an_llm_error(openai_stub):
    openai_stub.chunk_delay = 1.0
    llm = _llm(openai_stub, timeout=0.3)
    with pytest.raises(LLMError):
        list(llm.stream(Prompt(question="Hi")))


# --- dellm_site.ai.embedding.OpenAIEmbedder -------------------------------------------------------------


def _embedder(stub, **kwargs) -> OpenAIEmbedder:
    options = {"model": "stub-embed", "dimensions": 8, "api_key": stub.api_key, "base_url": stub.base_url}
    options.update(kwargs)
    return OpenAIEmbedder(**options)


def test_openai_embedder_returns_unit_rows_in_input_order(openai_stub):
    texts = ["I live in Lisbon.", "My cat is called Tom.", "Where do I live?"]
    matrix = _embedder(openai_stub).embed(texts)

    assert matrix.shape == (3, 8)
    assert matrix.dtype == np.float32
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    for row, text in zip(matrix, texts, strict=True):
        expected = np.asarray(stub_vector(text, 8))
        assert np.allclose(row, expected / np.linalg.norm(expected), atol=1e-5)

    (request,) = openai_stub.embedding_requests
    assert request["model"] == "stub-embed"
    assert request["input"] == texts


def test_openai_embedder_is_deterministic_and_embeds_one(openai_stub):
    embedder = _embedder(openai_stub)
    one = embedder.embed_one("I live in Lisbon.")
    assert one.shape == (8,)
    assert np.allclose(one, embedder.embed(["x", "I live in Lisbon."])[1])
    assert embedder.embed([]).shape == (0, 8)
    assert len(openai_stub.embedding_requests) == 2  # no request for an empty list


def test_openai_embedder_dimension_mismatch_is_an_embedding_error(openai_stub):
    openai_stub.embedding_dimensions = 16
    with pytest.raises(EmbeddingError) as excinfo:
        _embedder(openai_stub, dimensions=8).embed(["hello"])
    assert "16" in str(excinfo.value) and "8" in str(excinfo.value)


def test_openai_embedder_service_errors_are_embedding_errors(openai_stub):
    with pytest.raises(EmbeddingError):
        _embedder(openai_stub, api_key="sk-wrong").embed(["hello"])
    openai_stub.fail_next(400, message="input too long")
    with pytest.raises(EmbeddingError) as excinfo:
        _embedder(openai_stub).embed(["hello"])
    assert excinfo.value.code == "embedding_unavailable"


# --- end to end: the chat service and the REST API on the openai backend ---------------------------


@pytest.fixture
def stub_llm_settings(settings, openai_stub):
    """DELLM_LLM pointed at the stub; the local (384-d) embedder stays, as the vector column needs it."""
    settings.DELLM_LLM = {
        "BACKEND": "dellm_site.ai.openai.OpenAILLM",
        "OPTIONS": {
            "model": "stub-model",
            "api_key": openai_stub.api_key,
            "base_url": openai_stub.base_url,
            "timeout": 10,
            "max_retries": 0,
        },
    }
    return openai_stub


@pytest.mark.django_db
def test_chat_service_end_to_end_through_the_stub(stub_llm_settings, user, django_capture_on_commit_callbacks):
    from chat import services, turns
    from dellm_site.ai.llm import get_llm
    from memory.models import Embedding

    stub = stub_llm_settings
    assert isinstance(get_llm(), OpenAILLM)

    first_conversation = services.conversation_create(user=user)
    with django_capture_on_commit_callbacks(execute=True):
        first, first_reply, first_context = turns.message_post(
            user=user, conversation_id=first_conversation.pk, content="I live in Lisbon."
        )
    assert first_context == [first.pk]
    assert first_reply.content == "STUB saw: User message: I live in Lisbon."
    assert Embedding.objects.filter(node_id__in=[first.pk, first_reply.pk]).count() == 2

    second_conversation = services.conversation_create(user=user)
    with django_capture_on_commit_callbacks(execute=True):
        question, reply, context_ids = turns.message_post(
            user=user, conversation_id=second_conversation.pk, content="Where do I live?"
        )

    request = stub.chat_requests[-1]
    assert request["model"] == "stub-model" and request["stream"] is True
    prompt_text = request["messages"][-1]["content"]
    assert prompt_text.startswith("Past items:\n")
    assert "I live in Lisbon." in prompt_text
    assert prompt_text.endswith("User message: Where do I live?")

    assert reply.content == stub_reply(request["messages"])
    assert "past items: " in reply.content and "I live in Lisbon." in reply.content
    assert context_ids[0] == question.pk
    assert first.pk in context_ids
    assert reply.conversation_id == second_conversation.pk


@pytest.mark.django_db
def test_rest_api_answers_502_when_the_llm_fails(stub_llm_settings, user):
    from chat import services

    stub = stub_llm_settings
    conversation = services.conversation_create(user=user)
    client = APIClient()
    client.force_authenticate(user=user)
    url = f"/api/conversations/{conversation.pk}/messages/"

    ok = client.post(url, {"content": "Hello there"}, format="json")
    assert ok.status_code == 201, ok.content
    assert ok.json()["reply"]["content"] == "STUB saw: User message: Hello there"

    stub.fail_next(500)
    failed = client.post(url, {"content": "Hello again"}, format="json")
    assert failed.status_code == 502, failed.content
    body = failed.json()
    assert body["code"] == "llm_unavailable"
    assert "500" in body["detail"]
    assert set(body) == {"code", "detail"}


@pytest.mark.django_db
def test_rest_api_answers_502_when_the_key_is_wrong(settings, openai_stub, user):
    from chat import services

    settings.DELLM_LLM = {
        "BACKEND": "dellm_site.ai.openai.OpenAILLM",
        "OPTIONS": {"model": "stub-model", "api_key": "sk-wrong", "base_url": openai_stub.base_url, "timeout": 10},
    }
    conversation = services.conversation_create(user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {user.token}")

    response = client.post(f"/api/conversations/{conversation.pk}/messages/", {"content": "Hi"}, format="json")
    assert response.status_code == 502
    assert response.json()["code"] == "llm_unavailable"
    assert "API key" in response.json()["detail"]
