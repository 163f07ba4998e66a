"""The offline LLM: answers by quoting the context sentences most similar to the question.

It needs no model of its own beyond the embedder, so replies really carry context content
(which is what makes provenance matter) and say plainly when nothing relevant was retrieved.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import numpy as np

from .base import LLM, Prompt

ACKNOWLEDGEMENT = "Noted, I will remember that."
NOTHING_RELEVANT = "I don't have anything in my memory about that."
QUOTE_PREFIX = "From what you told me:"

_QUESTION_START = re.compile(
    r"^(who|whom|whose|what|when|where|which|why|how|do|does|did|is|are|am|was|were|can|could|"
    r"will|would|should|shall|have|has|had|may|might|tell me|remind me)\b",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[.!?][”\"])\s+|\n+")
_OWN_PHRASES = {ACKNOWLEDGEMENT.lower(), NOTHING_RELEVANT.lower()}


def is_question(text: str) -> bool:
    stripped = text.strip()
    return stripped.endswith("?") or bool(_QUESTION_START.match(stripped))


def candidate_sentences(items: list[str]) -> list[str]:
    """Statements found in the context, without this backend's own stock phrases, deduplicated."""
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        for part in _SENTENCE_END.split(item):
            sentence = part.strip()
            if sentence.startswith(QUOTE_PREFIX):
                sentence = sentence[len(QUOTE_PREFIX):].strip()
            sentence = sentence.strip('"“”').strip()
            key = sentence.lower()
            if len(sentence) < 3 or key in _OWN_PHRASES or is_question(sentence) or key in seen:
                continue
            seen.add(key)
            out.append(sentence)
    return out


class LocalLLM(LLM):
    def __init__(self, min_similarity: float = 0.25, max_sentences: int = 2, token_delay: float = 0.0):
        self.name = "local:extractive"
        self.min_similarity = min_similarity
        self.max_sentences = max_sentences
        self.token_delay = token_delay

    def answer(self, prompt: Prompt) -> str:
        if not is_question(prompt.question):
            return ACKNOWLEDGEMENT
        sentences = candidate_sentences(prompt.context)
        if not sentences:
            return NOTHING_RELEVANT
        from memory.embeddings import get_embedder

        embedder = get_embedder()
        vectors = embedder.embed([prompt.question, *sentences])
        scores = vectors[1:] @ vectors[0]
        ranked = [i for i in np.argsort(-scores) if scores[i] >= self.min_similarity][: self.max_sentences]
        if not ranked:
            return NOTHING_RELEVANT
        quoted = " ".join(f"“{sentences[i]}”" for i in ranked)
        return f"{QUOTE_PREFIX} {quoted}"

    def stream(self, prompt: Prompt) -> Iterator[str]:
        for piece in re.findall(r"\S+\s*", self.answer(prompt)):
            if self.token_delay:
                time.sleep(self.token_delay)
            yield piece
