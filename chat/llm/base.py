"""The stateless LLM Q: a prompt in, a streamed reply out."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field

from dellm_site.backends import get_backend
from dellm_site.errors import ApplicationError

# The paper's prompt shape: past items, then the instruction to answer from them, then the user message.
ANSWER_INSTRUCTION = (
    "Above are items from earlier conversations with this user. Use them when they are relevant "
    "to answer the user's message below; do not invent facts that are not in them."
)
NO_CONTEXT_INSTRUCTION = "Answer the user's message below."


class LLMError(ApplicationError):
    def __init__(self, detail: str):
        super().__init__(detail, code="llm_unavailable", status=502)


@dataclass(frozen=True)
class Prompt:
    """What the LLM sees for one reply: the retrieved context items and the user's message."""

    question: str
    context: list[str] = field(default_factory=list)

    def render(self) -> str:
        if not self.context:
            return f"{NO_CONTEXT_INSTRUCTION}\n\nUser message: {self.question}"
        items = "\n".join(f"[{i}] {text}" for i, text in enumerate(self.context, start=1))
        return f"Past items:\n{items}\n\n{ANSWER_INSTRUCTION}\n\nUser message: {self.question}"

    def to_messages(self) -> list[dict]:
        return [
            {"role": "system", "content": "You are a helpful assistant with a long-term memory of this user."},
            {"role": "user", "content": self.render()},
        ]


# Derived memory: the instructions given to the LLM (their hash is part of each record's version).
FACTS_INSTRUCTION = (
    "List the facts the user states about themselves in the message below, one per line, each "
    "starting with '- ' and written in the third person (e.g. '- Lives in Lisbon.'). Only use what is "
    "written. If there are none, answer '- none'."
)
SUMMARY_INSTRUCTION = (
    "Summarise what the user has told you in the conversation below in at most five short sentences. "
    "Only use what is written; do not add advice or commentary."
)


def instruction_hash(instruction: str) -> str:
    return hashlib.sha256(instruction.encode()).hexdigest()[:12]


class LLM(ABC):
    name: str

    @abstractmethod
    def stream_messages(self, messages: list[dict]) -> Iterator[str]:
        """Yield the answer to OpenAI-style messages in pieces; raise LLMError on failure."""

    def stream(self, prompt: Prompt) -> Iterator[str]:
        """Yield the reply to a chat prompt in pieces."""
        return self.stream_messages(prompt.to_messages())

    def complete(self, prompt: Prompt) -> str:
        return "".join(self.stream(prompt))

    def derivation(self, instruction: str) -> dict:
        """The version stamp of a derived record: which backend, which model, which prompt."""
        return {"backend": self.name, "prompt_hash": instruction_hash(instruction)}

    def extract_facts(self, text: str) -> list[str]:
        """Facts the user states about themselves in ``text``, each a short sentence."""
        answer = "".join(
            self.stream_messages([
                {"role": "system", "content": FACTS_INSTRUCTION},
                {"role": "user", "content": text},
            ])
        )
        facts = []
        for line in answer.splitlines():
            line = line.strip().lstrip("-*• ").strip()
            if line and line.lower().rstrip(".") != "none":
                facts.append(line)
        return facts

    def summarize(self, texts: list[str]) -> str:
        """A short summary of what the user said in ``texts`` (a conversation, oldest first)."""
        body = "\n".join(f"- {t}" for t in texts)
        return "".join(
            self.stream_messages([
                {"role": "system", "content": SUMMARY_INSTRUCTION},
                {"role": "user", "content": body},
            ])
        ).strip()


def get_llm() -> LLM:
    return get_backend("DELLM_LLM")
