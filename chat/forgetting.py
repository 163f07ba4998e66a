"""How conversations take part in forgetting (connected in ChatConfig.ready; see provenance.forgetting.hooks).

- ``conversation`` scope: "forget this conversation" names every message in it and its summaries
  (everything that removing the conversation removes).
- Before a wipe, note which conversations were titled after a deleted message; after it, such a
  conversation takes the title of its first surviving user message, and a forgotten conversation
  (scope) is removed itself, as is one the wipe left without a message.
- A surviving question whose reply was deleted is marked ``reply_removed`` (nothing of the reply is
  kept), so the chat shows where a reply was and can answer it again.
- Verification counts conversation titles that still hold the deleted words, and names those whose title
  holds a distinctive token of them (possible residue).
"""

from __future__ import annotations

from django.contrib.postgres.search import SearchQuery, SearchVector

from .models import Conversation, Message, Role
from .selectors import conversation_get
from .services import conversation_title_from


def conversation_scope(*, user, scope_id, lock: bool = False) -> list[int]:
    """Every message and summary of one of the user's conversations (NotFound for anyone else's). With
    ``lock`` the conversation row is locked: a message posted meanwhile waits, then finds it gone."""
    conversation = conversation_get(user=user, conversation_id=scope_id)
    if lock:
        Conversation.objects.select_for_update().filter(pk=conversation.pk).exists()
    return [
        *conversation.messages.values_list("pk", flat=True),
        *conversation.summaries.values_list("pk", flat=True),
    ]


def _retitle(*, user, titles: dict[int, set[str]]) -> None:
    """A conversation of the user's titled after a deleted message takes the title of its first surviving one."""
    for conversation in Conversation.objects.filter(pk__in=titles, owner=user):
        if conversation.title and conversation.title in titles[conversation.pk]:
            first = conversation.messages.filter(role=Role.USER, node_owner=user).order_by("pk").first()
            conversation.title = conversation_title_from(first.content) if first else ""
            Conversation.objects.filter(pk=conversation.pk, owner=user).update(title=conversation.title)


def _questions_of(*, user, replies: list[Message]) -> set[int]:
    """The questions the replies answered (for a reply stored without one: the user message before it)."""
    questions = set()
    for reply in replies:
        question_id = reply.question_id or (
            Message.objects.filter(
                conversation_id=reply.conversation_id, node_owner=user, role=Role.USER, pk__lt=reply.pk
            )
            .order_by("-pk")
            .values_list("pk", flat=True)
            .first()
        )
        if question_id is not None:
            questions.add(question_id)
    return questions


def on_erasure_pending(sender, *, user, node_ids, scope, **kwargs):
    """Collect what the titles were derived from and which questions lose their reply; return what to
    do once the rows are gone."""
    titles: dict[int, set[str]] = {}
    mine = Message.objects.filter(node_owner=user)  # the deleted ids are the user's
    for conversation_id, content in mine.filter(pk__in=node_ids).values_list("conversation_id", "content"):
        titles.setdefault(conversation_id, set()).add(conversation_title_from(content))
    replies = mine.filter(pk__in=node_ids, role=Role.ASSISTANT).only("conversation_id", "question")
    questions = _questions_of(user=user, replies=list(replies)) - set(node_ids)

    def finish() -> dict:
        removed = 0
        if scope is not None and scope[0] == "conversation" and user is not None:
            removed = 1 if Conversation.objects.filter(pk=scope[1], owner=user).delete()[0] else 0
        Message.objects.filter(pk__in=questions, node_owner=user, replies__isnull=True).update(reply_removed=True)
        # A conversation left with nothing in it goes too (one with a kept summary stays: it is not empty).
        emptied = Conversation.objects.filter(
            pk__in=titles, owner=user, messages__isnull=True, summaries__isnull=True
        )
        removed += emptied.delete()[1].get(Conversation._meta.label, 0)
        _retitle(user=user, titles=titles)
        return {"conversations": removed}

    return finish


def on_residue_scan(sender, *, user, terms, **kwargs) -> int:
    """How many of the user's conversation titles still hold one of ``terms``."""
    conversations = Conversation.objects.for_user(user)
    return sum(conversations.filter(title__icontains=term).count() for term in terms)


def on_residue_titles_scan(sender, *, user, query, **kwargs) -> list[int]:
    """The user's conversations whose title matches ``query`` (a raw tsquery of distinctive lexemes)."""
    return list(
        Conversation.objects.for_user(user)
        .annotate(search=SearchVector("title", config="english"))
        # The lexemes are already stemmed: "simple" parses them as they are (stemming twice can change them).
        .filter(search=SearchQuery(query, config="simple", search_type="raw"))
        .values_list("pk", flat=True)
    )
