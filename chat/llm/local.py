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
SUMMARY_PREFIX = "The user said:"

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
            for prefix in (QUOTE_PREFIX, SUMMARY_PREFIX):
                if sentence.startswith(prefix):
                    sentence = sentence[len(prefix):].strip()
            sentence = sentence.strip('"“”').strip()
            key = sentence.lower()
            if len(sentence) < 3 or key in _OWN_PHRASES or is_question(sentence) or key in seen:
                continue
            seen.add(key)
            out.append(sentence)
    return out


_FIRST_PERSON = re.compile(r"^(?:i|i'm|i've|i'd|i'll|my|mine)\b", re.IGNORECASE)
_IRREGULAR = {
    "am": "is", "have": "has", "do": "does", "go": "goes", "was": "was", "had": "had", "did": "did",
    "can": "can", "could": "could", "will": "will", "would": "would", "should": "should", "must": "must",
    "may": "may", "might": "might", "don't": "doesn't", "dont": "doesn't", "haven't": "hasn't",
    "can't": "can't", "won't": "won't", "didn't": "didn't", "wasn't": "wasn't", "used": "used",
}
_ADVERBS = {"really", "also", "just", "never", "always", "often", "usually", "sometimes", "still", "recently",
            "actually", "currently", "mostly", "now", "already", "only", "even", "definitely", "rarely"}
_CONTRACTIONS = {"i'm": "is", "i've": "has", "i'd": "would", "i'll": "will"}


def _conjugate(verb: str) -> str:
    lower = verb.lower()
    if lower in _IRREGULAR:
        return _IRREGULAR[lower]
    if lower.endswith(("s", "sh", "ch", "x", "z", "o")):
        return lower + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + "s"


def third_person(sentence: str) -> str:
    """'I live in Lisbon.' -> 'Lives in Lisbon.'; 'My sister lives in Porto.' -> "User's sister lives in Porto."."""
    words = sentence.strip().split()
    if not words:
        return sentence
    first = words[0].lower()
    if first in _CONTRACTIONS:
        out = [_CONTRACTIONS[first], *words[1:]]
    elif first == "i" and len(words) > 1:
        rest = words[1:]
        lead = []
        while rest and rest[0].lower() in _ADVERBS and len(rest) > 1:
            lead.append(rest.pop(0).lower())
        out = [*lead, _conjugate(rest[0]), *rest[1:]]
    elif first in ("my", "mine"):
        out = ["User's", *words[1:]] if first == "my" else ["User's", *words[1:]]
    else:
        out = words
    text = " ".join(out)
    text = re.sub(r"\bmy\b", "their", text, flags=re.IGNORECASE)
    text = re.sub(r"\bI\b", "they", text)
    text = re.sub(r"\bme\b", "them", text, flags=re.IGNORECASE)
    return text[0].upper() + text[1:]


def user_statements(text: str) -> list[str]:
    """First-person statements in a user's message (the raw material of facts and summaries)."""
    out = []
    for part in _SENTENCE_END.split(text or ""):
        sentence = part.strip()
        if len(sentence.split()) < 3 or is_question(sentence) or not _FIRST_PERSON.match(sentence):
            continue
        out.append(sentence if sentence[-1] in ".!" else sentence + ".")
    return out


class LocalLLM(LLM):
    def __init__(self, min_similarity: float = 0.25, max_sentences: int = 2, token_delay: float = 0.0, summary_sentences: int = 8):
        self.name = "local:extractive"
        self.summary_sentences = summary_sentences
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
