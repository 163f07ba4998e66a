"""The stateless LLM Q: a prompt in, a streamed reply out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator

from dellm_site.backends import get_backend
from dellm_site.errors import ApplicationError

from .prompts import FACTS_INSTRUCTION, SUMMARY_INSTRUCTION, Prompt, instruction_hash


class LLMError(ApplicationError):
    def __init__(self, detail: str):
        super().__init__(detail, code="llm_unavailable", status=502)


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

    def forget_targets(self, text: str) -> list[str] | None:
        """Ask the model whether ``text`` is a request to forget: the targets if it is, [] if it is not,
        None when this backend cannot tell (it has no function calling)."""
        return None

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
