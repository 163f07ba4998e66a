"""What every system shares: the system names, what a system did on one episode, and the embedding cache."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from dellm_site.ai.embedding import Embedder
from provenance.forgetting.intent import forget_request_target

from ..datasets import QA, Episode
from ..metrics import contains_normalised, normalise

NO_MEMORY = "no_memory"
FULL_MEMORY = "full_memory"
SEMANTIC = "semantic_deletion"
DELLM = "dellm"
DEFAULT_THRESHOLDS = (0.1, 0.2, 0.4, 0.6, 0.8)
USER_PREFIX = "dellm-eval-"


def semantic_name(threshold: float) -> str:
    """The report name of semantic deletion at ``threshold`` ('semantic_deletion@0.4')."""
    return f"{SEMANTIC}@{threshold:g}"


@dataclass
class Answered:
    """One question asked and the reply it got."""

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
    # dellm: deleted replies that neither quote nor restate what their deletion forgot (context only)
    blast_radius: int | None = None
    blast_examples: list[str] = field(default_factory=list)
    seconds: float = 0.0


@contextmanager
def embedding_cache(embedder: Embedder) -> Iterator[Counter]:
    """Remember the vector of every text the embedder sees; yields the texts requested and computed.

    The backend is deterministic, so this changes no vector, only how often the same text is embedded:
    every message is embedded when stored, again as a query, again by the offline LLM's ranking...
    """
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


def answer_norms(episode: Episode) -> list[str]:
    """The normalised answers that must be gone after the episode's deletion requests."""
    return [normalise(f.answer) for f in episode.forgets]


def contains_any(norms: list[str], text: str) -> bool:
    """Whether ``text`` holds any of the normalised answers ``norms``."""
    text_norm = normalise(text)
    return any(contains_normalised(n, text_norm) for n in norms)


def request_target(request: str) -> str:
    """What a deletion request names, read the way DeLLM reads it ('Forget that X' -> 'X')."""
    target = forget_request_target(request)
    return target if target else request
