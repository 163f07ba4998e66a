"""The offline LLM: answers by quoting the context sentences most similar to the question.

It needs no model of its own beyond the embedder, so replies really carry context content
(which is what makes provenance matter) and say plainly when nothing relevant was retrieved.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import numpy as np

from .embedding import get_embedder
from .llm import LLM
from .prompts import Prompt
from .text import SENTENCE_END, is_question, third_person, user_statements

ACKNOWLEDGEMENT = "Noted, I will remember that."
# With memory off or in a temporary chat: nothing is remembered, so nothing is promised.
UNREMEMBERED_ACKNOWLEDGEMENT = "Noted, but memory is off here, so I will not remember that."
NOTHING_RELEVANT = "I don't have anything in my memory about that."
QUOTE_PREFIX = "From what you told me:"
SUMMARY_PREFIX = "The user said:"

_OWN_PHRASES = {ACKNOWLEDGEMENT.lower(), UNREMEMBERED_ACKNOWLEDGEMENT.lower(), NOTHING_RELEVANT.lower()}


def candidate_sentences(items: list[str]) -> list[str]:
    """Statements found in the context, without this backend's own stock phrases, deduplicated."""
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        for part in SENTENCE_END.split(item):
            sentence = part.strip()
            for prefix in (QUOTE_PREFIX, SUMMARY_PREFIX):
                if sentence.startswith(prefix):
                    sentence = sentence[len(prefix):].strip()
            sentence = sentence.strip('"“”').strip()
            key = sentence.lower()
            # A sentence that ends like a statement is one ("Is 37 years old.", a fact in the third person).
            asks = is_question(sentence) and not sentence.endswith((".", "!"))
            if len(sentence) < 3 or key in _OWN_PHRASES or asks or key in seen:
                continue
            seen.add(key)
            out.append(sentence)
    return out


class LocalLLM(LLM):
    def __init__(
        self, min_similarity: float = 0.25, max_sentences: int = 2, token_delay: float = 0.0, summary_sentences: int = 8
    ):
        self.name = "local:extractive"
        self.summary_sentences = summary_sentences
        self.min_similarity = min_similarity
        self.max_sentences = max_sentences
        self.token_delay = token_delay

    def answer(self, prompt: Prompt) -> str:
        if not is_question(prompt.question):
            return ACKNOWLEDGEMENT if prompt.remembered else UNREMEMBERED_ACKNOWLEDGEMENT
        sentences = candidate_sentences(prompt.context)
        if not sentences:
            return NOTHING_RELEVANT
        embedder = get_embedder()
        if prompt.question_vector is not None and len(prompt.question_vector) == embedder.dimensions:
            question, vectors = np.asarray(prompt.question_vector, dtype=np.float32), embedder.embed(sentences)
        else:
            question, *rows = embedder.embed([prompt.question, *sentences])
            vectors = np.asarray(rows)
        scores = vectors @ question
        ranked = [i for i in np.argsort(-scores) if scores[i] >= self.min_similarity][: self.max_sentences]
        if not ranked:
            return NOTHING_RELEVANT
        quoted = " ".join(f"“{sentences[i]}”" for i in ranked)
        return f"{QUOTE_PREFIX} {quoted}"

    def _pieces(self, text: str) -> Iterator[str]:
        for piece in re.findall(r"\S+\s*", text):
            if self.token_delay:
                time.sleep(self.token_delay)
            yield piece

    def stream(self, prompt: Prompt) -> Iterator[str]:
        return self._pieces(self.answer(prompt))

    def stream_messages(self, messages: list[dict]) -> Iterator[str]:
        question = next((m["content"] for m in reversed(messages) if m.get("role") == "user"), "")
        return self._pieces(self.answer(Prompt(question=question)))

    def extract_facts(self, text: str) -> list[str]:
        """Extractive: each first-person statement, rewritten in the third person."""
        return [third_person(s) for s in user_statements(text)]

    def summarize(self, texts: list[str]) -> str:
        """Extractive: the user's most recent first-person statements, deduplicated."""
        seen, statements = set(), []
        for text in texts:
            for sentence in user_statements(text):
                if sentence.lower() not in seen:
                    seen.add(sentence.lower())
                    statements.append(sentence)
        if not statements:
            return ""
        return f"{SUMMARY_PREFIX} " + " ".join(statements[-self.summary_sentences:])
