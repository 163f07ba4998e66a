"""Scores of one reply against its gold answer: containment, ROUGE-L recall, an LLM judge."""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from dellm_site.ai.llm import LLM

_PUNCTUATION = re.compile("[" + re.escape(string.punctuation + "“”‘’«»–—…") + "]")
_ARTICLES = {"a", "an", "the"}


def normalise(text: str) -> str:
    """Lowercase, punctuation to spaces, articles dropped, whitespace collapsed.

    SQuAD-style, except that punctuation separates words, so 'gluten-free' == 'gluten free'.
    """
    text = unicodedata.normalize("NFKC", text or "").lower()
    words = [w for w in _PUNCTUATION.sub(" ", text).split() if w not in _ARTICLES]
    return " ".join(words)


def contains_normalised(gold_norm: str, text_norm: str) -> bool:
    """Whole-word containment of two already normalised texts ('37' is not in '1937')."""
    if not gold_norm:
        return False
    return f" {gold_norm} " in f" {text_norm} "


def contains(gold: str, text: str) -> bool:
    """Containment accuracy for one reply: the normalised gold answer occurs in the normalised reply."""
    return contains_normalised(normalise(gold), normalise(text))


@lru_cache(maxsize=1)
def _rouge():
    # Imported here: rouge_score loads nltk (about a second), which only scoring needs.
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)


def rouge_l_recall(gold: str, reply: str) -> float:
    """ROUGE-L recall of the gold answer in the reply (the share of the answer's words, in order)."""
    return float(_rouge().score(gold, reply)["rougeL"].recall)


# --- LLM judge (only with a real LLM configured) ----------------------------------------

JUDGE_SYSTEM = "You grade answers of a chat assistant against a gold answer. Be strict and brief."
JUDGE_TEMPLATE = (
    "Question: {question}\n"
    "Gold answer: {gold}\n"
    "Assistant's reply: {reply}\n\n"
    "Does the assistant's reply give the gold answer (the same information; wording may differ)? "
    "A reply that refuses, says it does not know, or gives other information is WRONG.\n"
    "Answer with exactly one word on the first line, CORRECT or WRONG, and a one-line reason on the second."
)
_VERDICT = re.compile(r"\b(INCORRECT|NOT\s+CORRECT|CORRECT|WRONG)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Verdict:
    """A judge's verdict on one reply."""

    correct: bool
    reason: str
    parsed: bool  # False when the judge's answer held no verdict (counted as WRONG)


def verdict_parse(text: str) -> Verdict:
    """Read a judge's answer into a ``Verdict``.

    The verdict is the first CORRECT / WRONG (INCORRECT, NOT CORRECT count as WRONG), on the first line
    that has one; the rest of that line (or the next line) is the reason.
    """
    lines = [line.strip().strip("*#>`_ ").strip() for line in (text or "").splitlines()]
    lines = [line for line in lines if line]
    for index, line in enumerate(lines):
        found = _VERDICT.search(line)
        if found:
            word = re.sub(r"\s+", " ", found.group(1).upper())
            rest = line[found.end() :].strip(" :.,;-–—*_`")
            reason = rest or (lines[index + 1] if index + 1 < len(lines) else "")
            reason = re.sub(r"^(?:reason\s*[:\-]\s*)", "", reason, flags=re.IGNORECASE)
            return Verdict(correct=word == "CORRECT", reason=reason[:300], parsed=True)
    return Verdict(correct=False, reason=(lines[0] if lines else "")[:300], parsed=False)


class Judge:
    """Asks the configured LLM whether a reply gives the gold answer; remembers its verdicts."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm
        self.calls = 0
        self._seen: dict[tuple[str, str, str], Verdict] = {}

    def __call__(self, *, question: str, gold: str, reply: str) -> Verdict:
        """The verdict on ``reply`` as an answer to ``question``, asking the LLM once per distinct triple."""
        key = (question, gold, reply)
        if key not in self._seen:
            prompt = JUDGE_TEMPLATE.format(question=question, gold=gold, reply=reply or "(empty)")
            answer = "".join(
                self.llm.stream_messages(
                    [{"role": "system", "content": JUDGE_SYSTEM}, {"role": "user", "content": prompt}]
                )
            )
            self.calls += 1
            self._seen[key] = verdict_parse(answer)
        return self._seen[key]


def judge_for(llm: LLM) -> Judge | None:
    """A judge when the configured LLM is an OpenAI-compatible one; None for the offline backend."""
    # Imported here: the openai client takes about a second to load, and the offline LLM never needs it.
    try:
        from dellm_site.ai.openai import OpenAILLM
    except ImportError:  # pragma: no cover - the openai package is a runtime dependency
        return None
    return Judge(llm) if isinstance(llm, OpenAILLM) else None
