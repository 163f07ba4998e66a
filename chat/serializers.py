"""JSON shapes of the chat API: conversations, messages with their context ids, influence."""

from __future__ import annotations

from collections.abc import Iterable

from rest_framework import serializers

from memory.graph import context_ids
from provenance.serializers import PreviewSerializer

from .models import Conversation, Message


class ConversationSerializer(serializers.ModelSerializer):
    class Meta:
        model = Conversation
        fields = ["id", "title", "created_at", "temporary"]
        read_only_fields = ["id", "created_at", "temporary"]


class ConversationCreateSerializer(serializers.Serializer):
    title = serializers.CharField(required=False, allow_blank=True, max_length=200, default="")
    temporary = serializers.BooleanField(
        required=False, default=False,
        help_text="A temporary chat: its messages are never remembered (no context elsewhere, no facts or "
        "summaries) and it is forgotten once discarded or idle for DELLM_TEMPORARY_CHAT_HOURS. Set at creation.",
    )


class MessageSerializer(serializers.ModelSerializer):
    id = serializers.IntegerField(source="pk", read_only=True)
    conversation = serializers.IntegerField(source="conversation_id", read_only=True)
    context = serializers.SerializerMethodField(help_text="Ids of the stored items given to the LLM for this message.")
    question = serializers.IntegerField(
        source="question_id", read_only=True, allow_null=True, help_text="On a reply: the id of its question."
    )
    reply_removed = serializers.BooleanField(
        read_only=True,
        help_text="On a question: its reply was deleted because it used something the user asked to forget "
        "(nothing of it is kept); POST .../messages/{id}/answer-again/ answers it anew.",
    )

    class Meta:
        model = Message
        fields = ["id", "conversation", "role", "content", "created_at", "context", "question", "reply_removed"]

    def get_context(self, obj) -> list[int]:
        return self.context.get("contexts", {}).get(obj.pk, [])


class MessageCreateSerializer(serializers.Serializer):
    # Length and emptiness are checked by the service, so REST and websocket give the same errors.
    content = serializers.CharField(allow_blank=True, trim_whitespace=False)
    intent = serializers.ChoiceField(
        choices=["answer"], required=False,
        help_text="'answer': this message is not a request to forget (the reply to a forget_question).",
    )


class SavedFactSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    content = serializers.CharField()


class PostResultSerializer(serializers.Serializer):
    user_message = MessageSerializer()
    reply = MessageSerializer()
    memory_updated = SavedFactSerializer(
        many=True,
        help_text="The facts saved from your message by the time the reply was stored (empty when none, or when "
        "they are still being extracted by a worker).",
    )


class AnswerAgainResultSerializer(serializers.Serializer):
    reply = MessageSerializer()


class InfluencedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    depth = serializers.IntegerField()
    path = serializers.ListField(child=serializers.IntegerField())


class InfluenceSerializer(serializers.Serializer):
    context = serializers.ListField(child=serializers.IntegerField())
    influenced = InfluencedSerializer(many=True)
    items = serializers.DictField(
        child=serializers.DictField(), help_text="For every id above: kind, role, conversation and an excerpt."
    )


class ForgetQuestionSerializer(serializers.Serializer):
    text = serializers.CharField(help_text="The question to show: 'Did you want me to forget \u201cmy address\u201d?'")
    targets = serializers.ListField(child=serializers.CharField())
    confidence = serializers.FloatField(help_text="How likely the message is a request to forget (0-1).")
    content = serializers.CharField(help_text="The message, unchanged; it was not stored.")
    choices = serializers.DictField(child=serializers.CharField())


class ForgetPreviewResultSerializer(serializers.Serializer):
    forget_preview = PreviewSerializer(required=False)
    forget_question = ForgetQuestionSerializer(required=False)


def messages_serialize(messages: Iterable[Message]) -> list[dict]:
    """Messages as the API, the websocket and the pages show them, each with its context ids."""
    messages = list(messages)
    # One user's messages: their edges are read with the owner's filter.
    contexts = context_ids(node_ids=[m.pk for m in messages], owner=messages[0].owner_id if messages else None)
    return MessageSerializer(messages, many=True, context={"contexts": contexts}).data


def messages_in_reading_order(messages: list[dict]) -> list[dict]:
    """Each reply right after its question (a question answered again gets its reply where the old one was)."""
    return sorted(messages, key=lambda m: (m["question"] or m["id"], m["id"]))
