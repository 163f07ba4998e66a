"""Every instruction DeLLM gives a language model, in one place (their hashes version derived records)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

# The paper's prompt shape: past items, then the instruction to answer from them, then the user message.
ANSWER_INSTRUCTION = (
    "Above are items from earlier conversations with this user. Use them when they are relevant "
    "to answer the user's message below; do not invent facts that are not in them."
)
NO_CONTEXT_INSTRUCTION = "Answer the user's message below."
SYSTEM_INSTRUCTION = "You are a helpful assistant with a long-term memory of this user."
# Memory turned off, or a temporary chat: nothing said now is remembered, so the model must not promise to.
UNREMEMBERED_INSTRUCTION = (
    "You are a helpful assistant. Memory is off for this message: nothing the user says here is remembered, "
    "so never say that you will remember it."
)


@dataclass(frozen=True)
class Prompt:
    """What the LLM sees for one reply: the retrieved context items and the user's message."""

    question: str
    context: list[str] = field(default_factory=list)
    remembered: bool = True  # False with memory off or in a temporary chat
    # The question's embedding when the caller has it (a chat turn does), for a backend that ranks by similarity.
    question_vector: object = field(default=None, compare=False, repr=False)

    def render(self) -> str:
        if not self.context:
            return f"{NO_CONTEXT_INSTRUCTION}\n\nUser message: {self.question}"
        items = "\n".join(f"[{i}] {text}" for i, text in enumerate(self.context, start=1))
        return f"Past items:\n{items}\n\n{ANSWER_INSTRUCTION}\n\nUser message: {self.question}"

    def to_messages(self) -> list[dict]:
        return [
            {"role": "system", "content": SYSTEM_INSTRUCTION if self.remembered else UNREMEMBERED_INSTRUCTION},
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


# Deciding whether an unclear message asks to forget something: offered as a function the model may call.
FORGET_TOOL_INSTRUCTION = (
    "Decide whether the user's message below asks you to forget, delete or stop keeping something they "
    "told you earlier. If it does, call forget_memory with what they want forgotten, in their own words, one "
    "entry per thing. If it does not (it only mentions forgetting or deleting, e.g. a file, a habit, a plan), "
    "answer with the single word: no."
)
FORGET_TOOL = {
    "type": "function",
    "function": {
        "name": "forget_memory",
        "description": "Forget what the user told you about the given targets, and everything derived from it.",
        "parameters": {
            "type": "object",
            "properties": {
                "targets": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "What to forget, in the user's words, one entry per target.",
                }
            },
            "required": ["targets"],
        },
    },
}
