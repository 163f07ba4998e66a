"""Target resolution: which of the user's items a request in words names ("where I live", "my ex, Tom",
"that I have a tortoise called Sheldon"), and which are only possibly related.

Each target is compared with the user's statements and facts in two ways: by meaning (cosine similarity
of embeddings) and by words (Postgres full-text search with OR semantics over the target's *specific*
words: names, numbers, quoted text, which embeddings tend to blur). Words can only raise the score of
meaning, never stand in for it: "what is the name of my pet" must not match "My name is Chiara". An
item is *matched* when its score is close to the best candidate's (relative, not one fixed cutoff)
and above a floor; items a little further off are offered as *possibly related*, unchecked, each with
why. Facts act as bridges: a matched fact brings the messages it was taken from.

Questions ("where do I live?") and the assistant's own replies are never matched by words or meaning:
they hold no statement of the user's; a reply that repeats a matched item is in Dep(M) anyway.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import connection
from pgvector.django import CosineDistance

from dellm_site.ai.embedding import get_embedder
from dellm_site.ai.text import is_question
from memory.graph import context_ids
from memory.models import Embedding, Node, NodeKind

# How far below the best candidate an item may score and still match (both a share of the best score
# and a distance from it), and the floors of both lists. Chosen on the first half of the persona file
# (three phrasings of each request); the second half is reported as held out.
MATCH_RATIO = 0.9
MATCH_MARGIN = 0.1
MATCH_FLOOR = 0.28
RELATED_FLOOR = 0.2
# How much holding every specific word of the target (a name, a number) closes the gap to a perfect score.
WORDS_LIFT = 0.5
RELATED_LIMIT = 8
CANDIDATES = 60

_WORDS_SQL = """
WITH q AS (SELECT replace(plainto_tsquery('english', %(text)s)::text, '&', '|') AS query)
SELECT n.id, ts_rank_cd(to_tsvector('english', n.content), to_tsquery('english', q.query), 1)
FROM memory_node n, q
WHERE q.query <> '' AND n.owner_id = %(owner)s AND n.id = ANY(%(ids)s)
  AND to_tsvector('english', n.content) @@ to_tsquery('english', q.query)
"""

_LEXEMES_SQL = """
SELECT lexeme FROM unnest(to_tsvector('english', %(text)s))
"""

_DOC_FREQ_SQL = """
SELECT l.lexeme, count(n.id)
FROM unnest(%(lexemes)s::text[]) AS l(lexeme)
LEFT JOIN memory_node n ON n.owner_id = %(owner)s AND n.id = ANY(%(ids)s)
  AND to_tsvector('english', n.content) @@ to_tsquery('english', quote_literal(l.lexeme))
GROUP BY l.lexeme
"""

_HAS_LEXEME_SQL = """
SELECT n.id, array_agg(l.lexeme)
FROM memory_node n, unnest(%(lexemes)s::text[]) AS l(lexeme)
WHERE n.owner_id = %(owner)s AND n.id = ANY(%(ids)s)
  AND to_tsvector('english', n.content) @@ to_tsquery('english', quote_literal(l.lexeme))
GROUP BY n.id
"""


@dataclass(frozen=True)
class Candidate:
    id: int
    score: float
    meaning: float
    words: float
    target: str
    reason: str  # semantic | keyword | fact_source


@dataclass(frozen=True)
class Resolution:
    matched: list[Candidate]
    related: list[Candidate]


def _statements(*, user) -> dict[int, tuple[str, str]]:
    """The items a request can name: the user's own statements (messages that are not questions) and
    active facts; {id: (kind, content)}."""
    rows = (
        Node.objects.for_user(user).filter(retrievable=True, kind__in=[NodeKind.MESSAGE, NodeKind.FACT])
        .exclude(kind=NodeKind.MESSAGE, message__role="assistant")
        .values_list("pk", "kind", "content")
    )
    return {pk: (kind, content) for pk, kind, content in rows if kind == NodeKind.FACT or not is_question(content)}


def _meaning(*, user, vector: list[float], ids: list[int]) -> dict[int, float]:
    rows = (
        Embedding.objects.filter(owner=user, node_id__in=ids)
        .annotate(distance=CosineDistance("vector", vector))
        .order_by("distance")
        .values_list("node_id", "distance")[:CANDIDATES]
    )
    return {node_id: max(0.0, 1.0 - float(distance)) for node_id, distance in rows}


_QUOTED = re.compile(r"[\"“‘']([^\"”’']{2,})[\"”’']")
_SPECIFIC = re.compile(r"\b(?:\d[\w./-]*|[A-Z][\w'-]*)")


def specific_words(text: str) -> str:
    """The words of a target that name something in particular: numbers, capitalised words past the
    first one (a name, a place), and anything in quotes."""
    quoted = " ".join(_QUOTED.findall(text))
    words = text.split()
    rest = " ".join(words[1:]) if words and words[0][:1].isupper() else text
    return " ".join([quoted, *(w for w in _SPECIFIC.findall(rest) if w not in ("I", "I'm", "I've", "I'd", "I'll"))])


def _words(*, user, text: str, ids: list[int]) -> dict[int, float]:
    """Share of the target's specific words (weighted by rarity in the user's store) each item holds."""
    text = specific_words(text)
    if not text.strip():
        return {}
    with connection.cursor() as cursor:
        cursor.execute(_LEXEMES_SQL, {"text": text})
        lexemes = [row[0] for row in cursor.fetchall()]
        if not lexemes or not ids:
            return {}
        cursor.execute(_DOC_FREQ_SQL, {"lexemes": lexemes, "owner": user.pk, "ids": ids})
        freq = dict(cursor.fetchall())
        cursor.execute(_HAS_LEXEME_SQL, {"lexemes": lexemes, "owner": user.pk, "ids": ids})
        holding = dict(cursor.fetchall())
    total = len(ids)
    # A word found in every item says nothing about which item is meant.
    weight = {lex: math.log((total + 1) / (freq.get(lex, 0) + 0.5)) for lex in lexemes}
    whole = sum(weight.values()) or 1.0
    return {pk: sum(weight[lex] for lex in set(found)) / whole for pk, found in holding.items()}


def _score_target(*, user, target: str, vector: list[float], items: dict[int, tuple[str, str]]) -> list[Candidate]:
    ids = list(items)
    meaning = _meaning(user=user, vector=vector, ids=ids)
    words = _words(user=user, text=target, ids=ids)
    out = []
    for pk in set(meaning) | set(words):
        m, w = meaning.get(pk, 0.0), min(1.0, words.get(pk, 0.0))
        score = m + (1.0 - m) * WORDS_LIFT * w
        reason = "keyword" if w >= 0.5 else "semantic"
        out.append(Candidate(id=pk, score=round(score, 4), meaning=round(m, 4), words=round(w, 4), target=target,
                             reason=reason))
    return sorted(out, key=lambda c: (-c.score, c.id))


def resolve(*, user, targets: Iterable[str], vectors: list[list[float]] | None = None) -> Resolution:
    """Matched and possibly related items for the request's targets (each target resolved on its own)."""
    targets = [t for t in targets if t.strip()]
    items = _statements(user=user)
    if not targets or not items:
        return Resolution(matched=[], related=[])
    if vectors is None:
        vectors = [[float(x) for x in v] for v in get_embedder().embed(targets)]
    matched: dict[int, Candidate] = {}
    related: dict[int, Candidate] = {}
    for target, vector in zip(targets, vectors, strict=True):
        ranked = _score_target(user=user, target=target, vector=vector, items=items)
        if not ranked:
            continue
        best, offered = ranked[0].score, 0
        for candidate in ranked:
            if candidate.score >= max(MATCH_FLOOR, best * MATCH_RATIO, best - MATCH_MARGIN):
                if candidate.id not in matched or matched[candidate.id].score < candidate.score:
                    matched[candidate.id] = candidate
            elif candidate.score >= RELATED_FLOOR and offered < RELATED_LIMIT and candidate.id not in related:
                related[candidate.id] = candidate
                offered += 1
    # A matched fact names what it was taken from.
    facts = [pk for pk in matched if items[pk][0] == NodeKind.FACT]
    for fact_id, sources in context_ids(node_ids=facts).items():
        for source in sources:
            if source not in matched:
                found = matched[fact_id]
                matched[source] = Candidate(id=source, score=found.score, meaning=found.meaning, words=found.words,
                                            target=found.target, reason="fact_source")
    for pk in matched:
        related.pop(pk, None)
    return Resolution(
        matched=sorted(matched.values(), key=lambda c: c.id),
        related=sorted(related.values(), key=lambda c: (-c.score, c.id)),
    )
