"""The baselines: no_memory, full_memory and semantic_deletion@T, on in-memory histories through the
same LLM and embedder as DeLLM.

Before the first deletion request, full_memory and every semantic_deletion@T are the same system
(same history, same replies), so that part runs once and the history is copied for each of them at
the deletion request.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from dellm_site.ai.embedding import Embedder
from dellm_site.ai.llm import LLM
from dellm_site.ai.prompts import SYSTEM_INSTRUCTION, Prompt

from ..datasets import Episode, ForgetItem
from ..metrics import contains_normalised, normalise
from .common import FULL_MEMORY, NO_MEMORY, Answered, Outcome, answer_norms, contains_any, request_target, semantic_name

# The paper's baseline for full memory: the deletion request is given to the LLM with the history.
FORGET_INSTRUCTION = (
    "Above are items from earlier conversations with this user. The user's message below asks you to "
    "forget something. From now on, never use, repeat or reveal that information in any answer. "
    "Confirm briefly."
)


@dataclass
class Item:
    """One message of a baseline's in-memory history."""

    role: str  # user | assistant
    text: str


class Baselines:
    """no_memory, full_memory and semantic_deletion@T on one episode."""

    def __init__(
        self,
        *,
        llm: LLM,
        embedder: Embedder,
        no_memory: bool,
        full_memory: bool,
        thresholds: list[float],
        semantic_query: str = "target",
        tick: Callable[[int], None] = lambda n: None,
    ) -> None:
        self.llm, self.embedder = llm, embedder
        self.no_memory, self.full_memory, self.thresholds = no_memory, full_memory, list(thresholds)
        self.semantic_query = semantic_query
        self.tick = tick

    @property
    def needs_history(self) -> bool:
        """Whether any selected baseline keeps a history (full_memory or a semantic threshold)."""
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
            {"role": "system", "content": SYSTEM_INSTRUCTION},
            {"role": "user", "content": body},
        ]
        return "".join(self.llm.stream_messages(messages)).strip()

    def run(self, episode: Episode) -> dict[str, Outcome]:
        """Run every selected baseline on ``episode``; their outcomes by system name."""
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

        norms = answer_norms(episode)
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
                if not contains_any(norms, item.text)
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
