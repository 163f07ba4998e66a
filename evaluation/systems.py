"""The systems compared, all through the configured LLM (``get_llm()``) and embedder (``get_embedder()``).

- ``no_memory``: the LLM sees only the question and the instruction (``Prompt(question, context=[])``).
- ``full_memory``: the LLM sees the whole history (every earlier user message and reply). The
  deletion request is just another message, answered under the paper's baseline instruction (the
  LLM is asked to forget); nothing is deleted, so the request and its reply stay in the history.
- ``semantic_deletion@T``: the whole history too; a deletion request removes every history message
  whose cosine similarity to what the request names is >= T.
- ``dellm``: the product, driven through its services: a fresh user per episode, every message
  posted with ``chat.turns.message_post`` (real context construction, provenance, facts and
  summaries), the deletion request posted the same way (it returns a forget preview), confirmed
  with ``provenance.forgetting.services.forget_confirm`` (strict), the questions asked the same way.

The baselines keep their history in memory. Before the first deletion request, full_memory and
every semantic_deletion@T are the same system (same history, same replies), so that part runs
once and the history is copied for each of them at the deletion request.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from dellm_site.ai.prompts import Prompt
from provenance.forgetting.intent import forget_request_target

from .datasets import QA, Episode, ForgetItem
from .metrics import contains_normalised, normalise

NO_MEMORY = "no_memory"
FULL_MEMORY = "full_memory"
SEMANTIC = "semantic_deletion"
DELLM = "dellm"
DEFAULT_THRESHOLDS = (0.1, 0.2, 0.4, 0.6, 0.8)
USER_PREFIX = "dellm-eval-"

# The paper's baseline for full memory: the deletion request is given to the LLM with the history.
FORGET_INSTRUCTION = (
    "Above are items from earlier conversations with this user. The user's message below asks you to "
    "forget something. From now on, never use, repeat or reveal that information in any answer. "
    "Confirm briefly."
)


def semantic_name(threshold: float) -> str:
    return f"{SEMANTIC}@{threshold:g}"


@dataclass
class Answered:
    qa: QA
    reply: str
    info: dict = field(default_factory=dict)  # dellm: what the reply's context was made of


@dataclass
class Outcome:
    """What one system did on one episode."""

    before: list[Answered] = field(default_factory=list)
    after: list[Answered] = field(default_factory=list)
    residual_hits: int = 0
    deleted_messages: int = 0
    collateral_deleted: int = 0
    deleted_items: Counter = field(default_factory=Counter)  # by kind
    collateral_items: int = 0  # collateral of every kind (dellm: facts and summaries too)
    collateral_indirect: int = 0  # collateral that restates the forget fact in other words
    notes: list[str] = field(default_factory=list)
    extra: Counter = field(default_factory=Counter)
    collateral_matched: list[dict] = field(default_factory=list)  # dellm: matched items that were collateral
    seconds: float = 0.0


@contextmanager
def embedding_cache(embedder):
    """Remember the vector of every text the embedder has seen during the run (the backend is
    deterministic, so this changes no vector, only how often the same text is embedded: every
    message is embedded when stored, again as a query, again by the offline LLM's ranking...)."""
    vectors: dict[str, np.ndarray] = {}
    stats = Counter()
    original = vars(embedder).get("embed")
    compute = embedder.embed

    def embed(texts):
        texts = list(texts)
        stats["requested"] += len(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in vectors]
        if missing:
            stats["computed"] += len(missing)
            for text, vector in zip(missing, compute(missing), strict=True):
                vectors[text] = vector
        if not texts:
            return compute(texts)
        return np.stack([vectors[t] for t in texts])

    embedder.embed = embed
    try:
        yield stats
    finally:
        if original is None:
            del embedder.embed
        else:
            embedder.embed = original


def _answer_norms(episode: Episode) -> list[str]:
    return [normalise(f.answer) for f in episode.forgets]


def _contains_any(norms: list[str], text: str) -> bool:
    text_norm = normalise(text)
    return any(contains_normalised(n, text_norm) for n in norms)


def request_target(request: str) -> str:
    """What a deletion request names, read the way DeLLM reads it ('Forget that X' -> 'X')."""
    target = forget_request_target(request)
    return target if target else request


# ---------------------------------------------------------------------------------------
# Baselines: in-memory histories through the same LLM and embedder
# ---------------------------------------------------------------------------------------


@dataclass
class Item:
    role: str  # user | assistant
    text: str


class Baselines:
    """no_memory, full_memory and semantic_deletion@T on one episode."""

    def __init__(
        self,
        *,
        llm,
        embedder,
        no_memory: bool,
        full_memory: bool,
        thresholds: list[float],
        semantic_query: str = "target",
        tick: Callable[[int], None] = lambda n: None,
    ):
        self.llm, self.embedder = llm, embedder
        self.no_memory, self.full_memory, self.thresholds = no_memory, full_memory, list(thresholds)
        self.semantic_query = semantic_query
        self.tick = tick

    @property
    def needs_history(self) -> bool:
        return self.full_memory or bool(self.thresholds)

    def units(self, episode: Episode) -> int:
        """Messages these baselines handle in ``episode`` (for the progress bar)."""
        questions = len(episode.questions)
        total = 2 * questions if self.no_memory else 0
        if self.needs_history:
            forks = int(self.full_memory) + len(self.thresholds)
            total += len(episode.statements) + len(episode.requests) + questions
            total += forks * (len(episode.forgets) + questions)
        return total

    def _reply(self, history: list[Item], text: str) -> str:
        reply = self.llm.complete(Prompt(question=text, context=[item.text for item in history])).strip()
        history += [Item("user", text), Item("assistant", reply)]
        return reply

    def _forget_reply(self, history: list[Item], request: str) -> str:
        items = "\n".join(f"[{i}] {item.text}" for i, item in enumerate(history, start=1))
        body = f"Past items:\n{items}\n\n{FORGET_INSTRUCTION}\n\nUser message: {request}"
        messages = [
            {"role": "system", "content": "You are a helpful assistant with a long-term memory of this user."},
            {"role": "user", "content": body},
        ]
        return "".join(self.llm.stream_messages(messages)).strip()

    def run(self, episode: Episode) -> dict[str, Outcome]:
        out: dict[str, Outcome] = {}
        if self.no_memory:
            started = time.monotonic()
            outcome = Outcome()
            for phase in (outcome.before, outcome.after):
                for qa in episode.questions:
                    phase.append(Answered(qa, self.llm.complete(Prompt(question=qa.question)).strip()))
                    self.tick(1)
            outcome.seconds = time.monotonic() - started
            out[NO_MEMORY] = outcome
        if not self.needs_history:
            return out

        started = time.monotonic()
        history: list[Item] = []
        for text in [*episode.statements, *episode.requests]:
            self._reply(history, text)
            self.tick(1)
        before = []
        for qa in episode.questions:
            before.append(Answered(qa, self._reply(history, qa.question)))
            self.tick(1)
        shared = time.monotonic() - started

        norms = _answer_norms(episode)
        facts = [normalise(f.fact) for f in episode.forgets if f.fact]
        indirect = {normalise(s) for s in episode.indirect}

        def finish(name: str, kept: list[Item], deleted: list[Item], phase_started: float) -> None:
            outcome = Outcome(before=list(before))
            for qa in episode.questions:
                outcome.after.append(Answered(qa, self._reply(kept, qa.question)))
                self.tick(1)
            outcome.residual_hits = sum(
                1 for item in kept for n in norms if contains_normalised(n, normalise(item.text))
            )
            outcome.deleted_messages = len(deleted)
            outcome.deleted_items = Counter({"messages": len(deleted)}) if deleted else Counter()
            # No provenance here: a deleted message is collateral unless it holds the forget answer
            # (or, for a reply, quotes the forget fact: a reply that used it).
            collateral = [
                item
                for item in deleted
                if not _contains_any(norms, item.text)
                and not (item.role == "assistant" and any(contains_normalised(f, normalise(item.text)) for f in facts))
            ]
            outcome.collateral_deleted = outcome.collateral_items = len(collateral)
            outcome.collateral_indirect = sum(1 for item in collateral if normalise(item.text) in indirect)
            outcome.seconds = shared + time.monotonic() - phase_started
            out[name] = outcome

        if self.full_memory:
            phase_started = time.monotonic()
            kept = list(history)
            for forget in episode.forgets:
                reply = self._forget_reply(kept, forget.request)
                kept += [Item("user", forget.request), Item("assistant", reply)]
                self.tick(1)
            finish(FULL_MEMORY, kept, [], phase_started)
        for threshold in self.thresholds:
            phase_started = time.monotonic()
            kept, deleted = list(history), []
            for forget in episode.forgets:
                kept, gone = self._semantic_delete(kept, forget, threshold)
                deleted += gone
                self.tick(1)
            finish(semantic_name(threshold), kept, deleted, phase_started)
        return out

    def _semantic_delete(
        self, history: list[Item], forget: ForgetItem, threshold: float
    ) -> tuple[list[Item], list[Item]]:
        if not history:
            return history, []
        query = request_target(forget.request) if self.semantic_query == "target" else forget.request
        query_vector = self.embedder.embed_one(query)
        similarity = self.embedder.embed([item.text for item in history]) @ query_vector
        kept = [item for item, s in zip(history, similarity, strict=True) if s < threshold]
        gone = [item for item, s in zip(history, similarity, strict=True) if s >= threshold]
        return kept, gone


# ---------------------------------------------------------------------------------------
# DeLLM: the product, through its services
# ---------------------------------------------------------------------------------------


class DeLLMRunner:
    """One fresh user per episode: the history in one conversation, the questions before the
    deletion in a second one and those after it in a third; the user is deleted afterwards."""

    def __init__(self, *, tick: Callable[[int], None] = lambda n: None, delete: bool = True):
        self.tick = tick
        self.delete = delete  # False: the control run, the same protocol without the deletion requests

    def run(self, episode: Episode) -> Outcome:
        from django.contrib.auth import get_user_model

        from chat.services import conversation_create

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

    def _post(self, user, conversation, text: str, outcome: Outcome) -> str:
        return self._post_with_context(user, conversation, text, outcome)[0]

    def _post_with_context(self, user, conversation, text: str, outcome: Outcome) -> tuple[str, list[int]]:
        from chat.turns import message_post

        result = message_post(user=user, conversation_id=conversation.pk, content=text)
        if result.forget_preview is not None:  # an ordinary message read as a deletion request
            outcome.extra["messages_read_as_deletion_requests"] += 1
            outcome.notes.append(f"read as a deletion request, not answered: {text[:80]!r}")
            return "", []
        if result.reply is None:
            return "", []
        return result.reply.content, list(result.context[1:])  # context(m) minus the message itself

    def _describe_contexts(self, user, answered: list[Answered], contexts: list[list[int]]) -> None:
        """For each after-question: how many retrieved items were earlier questions (which carry no
        facts), and whether the statement its gold answer comes from still exists."""
        from chat.models import Message, Role
        from dellm_site.ai.text import is_question
        from memory.models import Node

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

    def _containing(self, user, norms: list[str]) -> tuple[set[int], dict[int, str]]:
        """The user's items that hold a forget answer, and the kind of every item."""
        from memory.models import Node

        holding, kinds = set(), {}
        for pk, kind, content in Node.objects.filter(owner=user).values_list("pk", "kind", "content").iterator():
            kinds[pk] = kind
            text = normalise(content)
            if any(contains_normalised(n, text) for n in norms):
                holding.add(pk)
        return holding, kinds

    def _forget_all(self, user, conversation, episode: Episode, outcome: Outcome, request_ids: list[str]) -> None:
        from chat.turns import message_post
        from dellm_site.errors import ApplicationError
        from memory.models import Node
        from provenance.forgetting.services import forget_confirm
        from provenance.selectors import dep_ids

        norms = _answer_norms(episode)
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
            holding, now_kinds = self._containing(user, norms)
            kinds.update(now_kinds)
            should_go |= holding | dep_ids(user=user, seeds=holding)
            try:
                result = message_post(user=user, conversation_id=conversation.pk, content=forget.request)
            except ApplicationError as exc:
                outcome.extra["requests_refused"] += 1
                outcome.notes.append(f"deletion request refused ({exc.code}): {forget.request[:80]!r}")
                self.tick(1)
                continue
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
            manifest = forget_confirm(user=user, request_id=preview["request_id"])
            deleted |= set(manifest.get("deleted_ids", []))
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
                outcome.extra["manifest_residual_holding_answer"] += 1 if _contains_any(answer, text) else 0
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

    def _residual(self, user, episode: Episode, request_ids: list[str], outcome: Outcome) -> int:
        """Surviving stored items of every kind holding a forget answer: items (messages, facts,
        summaries, superseded or not), conversation titles, and the user's deletion requests."""
        from chat.models import Conversation
        from memory.models import Node
        from provenance.models import DeletionRequest

        norms = _answer_norms(episode)
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

    def _clean_up(self, user, request_ids: list[str]) -> None:
        from provenance.models import AuditRecord, DeletionRequest

        ids = list(DeletionRequest.objects.filter(owner=user).values_list("pk", flat=True)) + request_ids
        user.delete()  # cascades: conversations, messages, facts, summaries, embeddings, edges
        DeletionRequest.objects.filter(pk__in=ids).delete()
        AuditRecord.objects.filter(request_id__in=ids).delete()


def eval_users_remove() -> int:
    """Remove eval users left behind by an interrupted run."""
    from django.contrib.auth import get_user_model

    users = get_user_model().objects.filter(username__startswith=USER_PREFIX)
    count = users.count()
    for user in users:
        DeLLMRunner()._clean_up(user, [])
    return count
