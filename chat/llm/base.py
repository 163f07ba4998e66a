"""The stateless LLM Q: a prompt in, a streamed reply out."""

from __future__ import annotations

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


class LLM(ABC):
    name: str

    @abstractmethod
    def stream(self, prompt: Prompt) -> Iterator[str]:
        """Yield the reply in pieces; raise LLMError when the model cannot answer."""

    def complete(self, prompt: Prompt) -> str:
        return "".join(self.stream(prompt))


def get_llm() -> LLM:
    return get_backend("DELLM_LLM")
