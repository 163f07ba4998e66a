"""Conversations and messages. A Message is a Node, so it shares the provenance id space."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from memory.models import Node, NodeKind, NodeQuerySet, node_owner_field


class ConversationQuerySet(models.QuerySet):
    def for_user(self, user) -> ConversationQuerySet:
        return self.filter(owner=user)


class Conversation(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations")
    title = models.CharField(max_length=200, blank=True, default="")
    # How an OpenAI-compatible client addresses this conversation (per token, or its `user` field).
    # NULL, not "", for conversations no client keys: the unique constraint ignores NULLs.
    external_key = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001
    # A temporary chat: its messages are never given to the LLM again, embedded or turned into facts or
    # summaries, and it is forgotten when discarded or once idle (DELLM_TEMPORARY_CHAT_HOURS).
    temporary = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ConversationQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [models.Index(fields=["owner", "-updated_at"])]
        constraints = [
            models.UniqueConstraint(fields=["owner", "external_key"], name="conversation_unique_external_key")
        ]

    def __str__(self) -> str:
        return self.title or f"Conversation {self.pk}"


class Role(models.TextChoices):
    USER = "user", "User"
    ASSISTANT = "assistant", "Assistant"


class MessageQuerySet(NodeQuerySet):
    pass


class Message(Node):
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    role = models.CharField(max_length=16, choices=Role.choices)
    # A reply's question (NULL for a user message, and for replies stored before this was recorded).
    question = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="replies", editable=False
    )
    # On a question: its reply was deleted by a forget request (a marker only; nothing of the reply is kept).
    reply_removed = models.BooleanField(default=False)
    node_owner = node_owner_field()

    objects = MessageQuerySet.as_manager()

    class Meta:
        ordering = ["node_ptr_id"]

    def save(self, *args, **kwargs):
        self.kind = NodeKind.MESSAGE
        if not self.owner_id:
            self.owner_id = self.conversation.owner_id
        super().save(*args, **kwargs)
