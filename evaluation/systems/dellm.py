"""DeLLM itself, driven through its services, and the clean-up of the users it creates.

A fresh user per episode; every message is posted with ``chat.turns.message_post`` (real context
construction, provenance, facts and summaries), the deletion request is posted the same way (it returns
a forget preview) and confirmed with ``provenance.forgetting.services.forget_confirm`` (strict), and the
questions are asked the same way.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser

from chat.models import Conversation, Message, Role
from chat.services import conversation_create
from chat.turns import forget_review, message_post
from dellm_site.ai.text import SENTENCE_END, is_question
from dellm_site.errors import ApplicationError
from memory.graph import context_ids
from memory.models import Node
from provenance.forgetting.services import forget_confirm
from provenance.models import DeletionRequest
from provenance.selectors import dep_ids

from ..datasets import Episode
from ..metrics import contains_normalised, normalise
from .common import USER_PREFIX, Answered, Outcome, answer_norms, contains_any


class DeLLMRunner:
    """One fresh user per episode: the history in one conversation, the questions before the
    deletion in a second one and those after it in a third; the user is deleted afterwards."""

    def __init__(self, *, tick: Callable[[int], None] = lambda n: None, delete: bool = True) -> None:
        self.tick = tick
        self.delete = delete  # False: the control run, the same protocol without the deletion requests

    def run(self, episode: Episode) -> Outcome:
        """Run DeLLM on ``episode`` as a fresh user, deleted afterwards."""
        started = time.monotonic()
        name = f"{USER_PREFIX}{episode.id[:80]}-{uuid.uuid4().hex[:8]}"
        user = get_user_model().objects.create_user(username=name[:150])
        outcome = Outcome()
        request_ids: list[str] = []
        try:
            history = conversation_create(user=user, title="eval: history")
            for text in [*episode.statements, *episode.requests]:
                self._post(user, history, text, outcome)
                self.tick(1)
            asked_before = conversation_create(user=user, title="eval: questions before")
            for qa in episode.questions:
                outcome.before.append(Answered(qa, self._post(user, asked_before, qa.question, outcome)))
                self.tick(1)
            if self.delete:
                self._forget_all(user, history, episode, outcome, request_ids)
            else:
                self.tick(len(episode.forgets))
            asked_after = conversation_create(user=user, title="eval: questions after")
            contexts = []
            for qa in episode.questions:
                reply, context = self._post_with_context(user, asked_after, qa.question, outcome)
                outcome.after.append(Answered(qa, reply))
                contexts.append(context)
                self.tick(1)
            self._describe_contexts(user, outcome.after, contexts)
            outcome.residual_hits = self._residual(user, episode, request_ids, outcome)
        finally:
            self._clean_up(user, request_ids)
        outcome.seconds = time.monotonic() - started
        return outcome

    def _post(self, user: AbstractBaseUser, conversation: Conversation, text: str, outcome: Outcome) -> str:
        return self._post_with_context(user, conversation, text, outcome)[0]

    def _post_with_context(
        self, user: AbstractBaseUser, conversation: Conversation, text: str, outcome: Outcome
    ) -> tuple[str, list[int]]:
        result = message_post(user=user, conversation_id=conversation.pk, content=text)
        if result.forget_question is not None:  # asked whether it was a request: the user says "just answer it"
            outcome.extra["messages_asked_about"] += 1
            result = message_post(user=user, conversation_id=conversation.pk, content=text, answer=True)
        if result.forget_preview is not None:  # an ordinary message read as a deletion request
            outcome.extra["messages_read_as_deletion_requests"] += 1
            outcome.notes.append(f"read as a deletion request, not answered: {text[:80]!r}")
            return "", []
        if result.reply is None:
            return "", []
        return result.reply.content, list(result.context[1:])  # context(m) minus the message itself

    def _describe_contexts(self, user: AbstractBaseUser, answered: list[Answered], contexts: list[list[int]]) -> None:
        """For each after-question: how many retrieved items were earlier questions (which carry no
        facts), and whether the statement its gold answer comes from still exists."""
        ids = {pk for context in contexts for pk in context}
        contents = dict(Node.objects.filter(pk__in=ids).values_list("pk", "content"))
        questions = {
            pk
            for pk in Message.objects.filter(pk__in=ids, role=Role.USER).values_list("pk", flat=True)
            if is_question(contents.get(pk, ""))
        }
        surviving = set(Message.objects.filter(owner=user, role=Role.USER).values_list("content", flat=True))
        for item, context in zip(answered, contexts, strict=True):
            gold = normalise(item.qa.answer)
            item.info = {
                "context_items": len(context),
                "context_questions": sum(1 for pk in context if pk in questions),
                "gold_in_context": any(contains_normalised(gold, normalise(contents.get(pk, ""))) for pk in context),
                "fact_survives": (item.qa.fact in surviving) if item.qa.fact else None,
            }

    def _containing(self, user: AbstractBaseUser, norms: list[str]) -> tuple[set[int], dict[int, str], dict[int, str]]:
        """The user's items that hold a forget answer, and the kind and content of every item."""
        holding, kinds, contents = set(), {}, {}
        for pk, kind, content in Node.objects.filter(owner=user).values_list("pk", "kind", "content").iterator():
            kinds[pk], contents[pk] = kind, content
            text = normalise(content)
            if any(contains_normalised(n, text) for n in norms):
                holding.add(pk)
        return holding, kinds, contents

    def _forget_all(
        self,
        user: AbstractBaseUser,
        conversation: Conversation,
        episode: Episode,
        outcome: Outcome,
        request_ids: list[str],
    ) -> None:
        norms = answer_norms(episode)
        indirect = {normalise(s) for s in episode.indirect}
        indirect_ids = {
            pk
            for pk, content in Node.objects.filter(owner=user).values_list("pk", "content")
            if normalise(content) in indirect
        }
        should_go: set[int] = set()  # items holding a forget answer, and Dep of them
        deleted: set[int] = set()
        kinds: dict[int, str] = {}
        for forget in episode.forgets:
            holding, now_kinds, now_contents = self._containing(user, norms)
            kinds.update(now_kinds)
            should_go |= holding | dep_ids(user=user, seeds=holding)
            try:
                result = message_post(user=user, conversation_id=conversation.pk, content=forget.request)
            except ApplicationError as exc:
                outcome.extra["requests_refused"] += 1
                outcome.notes.append(f"deletion request refused ({exc.code}): {forget.request[:80]!r}")
                self.tick(1)
                continue
            if result.forget_question is not None:  # asked whether it was a request: the user says "review"
                outcome.extra["requests_asked_about"] += 1
                result.forget_preview = forget_review(user=user, content=forget.request)
            if result.forget_preview is None:
                outcome.extra["requests_not_recognised"] += 1
                outcome.notes.append(
                    f"deletion request not recognised (answered as a message): {forget.request[:80]!r}"
                )
                self.tick(1)
                continue
            preview = result.forget_preview
            request_ids.append(preview["request_id"])
            for entry in preview["matched"]:
                outcome.extra[f"matched_{entry['reason']}"] += 1
            for entry in preview["matched"]:
                if entry["id"] not in should_go:
                    outcome.extra[f"collateral_matched_{entry['reason']}"] += 1
                    outcome.collateral_matched.append(
                        {
                            "request": forget.request[:160],
                            "reason": entry["reason"],
                            "score": entry.get("score"),
                            "kind": entry.get("kind"),
                            "role": entry.get("role"),
                            "excerpt": (entry.get("excerpt") or "")[:160],
                        }
                    )
            replies = dict(Message.objects.filter(owner=user, role=Role.ASSISTANT).values_list("pk", "content"))
            contexts = context_ids(node_ids=replies)  # read now: the edges go with the deleted replies
            forgotten = _forgotten_phrases(
                answer=forget.answer, matched=[now_contents.get(entry["id"], "") for entry in preview["matched"]]
            )
            manifest = forget_confirm(user=user, request_id=preview["request_id"])
            gone = set(manifest.get("deleted_ids", []))
            deleted |= gone
            # Blast radius: replies to messages that stay, deleted only because the forgotten content
            # was in their context (they neither quote nor restate it).
            blasted = [
                (text, now_contents.get(contexts[pk][0], ""))
                for pk, text in replies.items()
                if pk in gone
                and contexts[pk][:1]
                and contexts[pk][0] not in gone
                and not any(contains_normalised(phrase, normalise(text)) for phrase in forgotten)
            ]
            outcome.blast_radius = (outcome.blast_radius or 0) + len(blasted)
            outcome.blast_examples += [
                f"{forget.request[:80]!r} took {text[:80]!r} (the reply to {asked[:80]!r})"
                for text, asked in blasted[:2]
            ]
            outcome.extra["requests_confirmed"] += 1
            verification = manifest.get("verification", {})
            reported = verification.get("residual_hits", 0)
            outcome.extra["manifest_residual_hits"] += reported
            outcome.extra["manifests_reporting_residuals"] += 1 if reported else 0
            flagged = verification.get("residual_ids", [])
            for kind in Node.objects.filter(pk__in=flagged).values_list("kind", flat=True):
                outcome.extra[f"manifest_residual_{kind}"] += 1
            answer = [normalise(forget.answer)]
            for text in Node.objects.filter(pk__in=flagged).values_list("content", flat=True):
                outcome.extra["manifest_residual_holding_answer"] += 1 if contains_any(answer, text) else 0
            self.tick(1)
        by_kind = Counter(kinds.get(pk, "unknown") for pk in deleted)
        outcome.deleted_items = Counter(
            {f"{kind}s" if kind != "summary" else "summaries": n for kind, n in by_kind.items()}
        )
        outcome.deleted_messages = by_kind.get("message", 0)
        collateral = deleted - should_go
        outcome.collateral_deleted = sum(1 for pk in collateral if kinds.get(pk) == "message")
        outcome.collateral_items = len(collateral)
        outcome.collateral_indirect = len(collateral & indirect_ids)
        outcome.extra["should_delete_items"] += len(should_go)
        outcome.extra["missed_items"] += len(should_go - deleted)

    def _residual(self, user: AbstractBaseUser, episode: Episode, request_ids: list[str], outcome: Outcome) -> int:
        """Surviving stored items of every kind holding a forget answer: items (messages, facts,
        summaries, superseded or not), conversation titles, and the user's deletion requests."""
        norms = answer_norms(episode)
        texts = [
            (f"{kind} {pk}", content)
            for pk, kind, content in Node.objects.filter(owner=user).values_list("pk", "kind", "content")
        ]
        texts += [
            (f"conversation title {pk}", title)
            for pk, title in Conversation.objects.filter(owner=user).values_list("pk", "title")
        ]
        # A request's plan and manifest hold ids, counts and timings only (numbers that a numeric
        # answer such as an age would match by accident); its words live in ``working``.
        for pk, working in DeletionRequest.objects.filter(pk__in=request_ids).values_list("pk", "working"):
            words = [working.get("target") or "", *(working.get("terms") or [])] if isinstance(working, dict) else []
            texts.append((f"deletion request {pk}", " | ".join(w for w in words if isinstance(w, str))))
        hits = [(where, text) for where, text in texts for n in norms if contains_normalised(n, normalise(text))]
        for where, text in hits:
            outcome.notes.append(f"{episode.id}: residual in {where}: {text[:200]!r}")
        return len(hits)

    def _clean_up(self, user: AbstractBaseUser, request_ids: list[str]) -> None:
        ids = list(DeletionRequest.objects.filter(owner=user).values_list("pk", flat=True)) + request_ids
        user.delete()  # cascades: conversations, messages, facts, summaries, embeddings, edges
        DeletionRequest.objects.filter(pk__in=ids).delete()  # their audit entries stay: the chain keeps them all


def _forgotten_phrases(*, answer: str, matched: list[str]) -> list[str]:
    """What a reply quoting or restating the forgotten content holds: the forget answer, or a sentence
    (three words or more) of the answer or of an item the request matched, normalised."""
    sentences = [part for text in [answer, *matched] for part in SENTENCE_END.split(text)]
    phrases = {normalise(answer), *(normalise(s) for s in sentences if len(s.split()) >= 3)}
    return [p for p in phrases if p]


def eval_users_remove() -> int:
    """Remove eval users left behind by an interrupted run; how many there were."""
    users = get_user_model().objects.filter(username__startswith=USER_PREFIX)
    count = users.count()
    for user in users:
        DeLLMRunner()._clean_up(user, [])
    return count
