"""Target resolution: which of the user's items a request in words names ("where I live", "my ex, Tom",
"that I have a tortoise called Sheldon"), and which are only possibly related.

Each target is compared with the user's statements and facts in two ways: by meaning (cosine similarity
of embeddings) and by words (Postgres full-text search with OR semantics over the target's *specific*
words: names, numbers, quoted text, which embeddings tend to blur). Words can only raise the score of
meaning, never stand in for it: "what is the name of my pet" must not match "My name is Chiara". An
item is *matched* when its score is close to the best candidate's (relative, not one fixed cutoff)
and above a floor; items a little further off are offered as *possibly related*, unchecked, each with
why. Facts act as bridges: a matched fact brings the messages it was taken from.

Messages that only ask ("where do I live?") and the assistant's own replies are never matched by words or
meaning: they hold no statement of the user's; a reply that repeats a matched item is in Dep(M) anyway.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db import connection
from django.db.models import QuerySet
from pgvector.django import CosineDistance

from dellm_site.ai.embedding import get_embedder
from memory.graph import context_ids
from memory.models import Embedding, Node, NodeKind

# How far below the best candidate an item may score and still match (both a share of the best score
# and a distance from it), and the floors of both lists. Chosen on the first half of the persona file
# (three phrasings of each request); the second half is reported as held out.
MATCH_RATIO = 0.9
MATCH_MARGIN = 0.1
MATCH_FLOOR = 0.28
# A target written out as a whole sentence names one statement nearly word for word; the floor rises with
# its length (up to the old fixed cutoff), so a sentence whose statement is gone matches nothing nearby.
SENTENCE_FLOOR = 0.6
RELATED_FLOOR = 0.2
# How much holding every specific word of the target (a name, a number) closes the gap to a perfect score.
WORDS_LIFT = 0.5
RELATED_LIMIT = 8
CANDIDATES = 60


_LEXEMES_SQL = """
SELECT lexeme FROM unnest(to_tsvector('english', %(text)s))
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


def _statements(*, user) -> QuerySet[Node]:
    """The items a request can name: the user's own messages that state something and active facts. A message
    that only asks ("where do I live?", "recommend a film") holds no statement of the user's (``Node.informative``,
    decided when it was stored; "what helps with migraines? mine start at night" does state something)."""
    return (
        Node.objects.for_user(user)
        .filter(retrievable=True, informative=True, kind__in=[NodeKind.MESSAGE, NodeKind.FACT])
        .exclude(kind=NodeKind.MESSAGE, message__role="assistant")
    )


def _meaning(*, user, vector: list[float], statements: QuerySet[Node]) -> dict[int, float]:
    rows = (
        Embedding.objects.filter(owner=user, node__in=statements)
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


def _quoted(lexeme: str) -> str:
    # One lexeme as a raw tsquery term. It is already normalised by to_tsvector, so it is parsed with the "simple"
    # configuration: the English stemmer is not idempotent ("virelle" -> "virell" -> "virel") and would miss it.
    return "'" + lexeme.replace("'", "''") + "'"


def _words(*, text: str, statements: QuerySet[Node]) -> dict[int, float]:
    """Share of the target's specific words (weighted by rarity in the user's store) each item holds."""
    text = specific_words(text)
    if not text.strip():
        return {}
    with connection.cursor() as cursor:
        cursor.execute(_LEXEMES_SQL, {"text": text})
        lexemes = [row[0] for row in cursor.fetchall()]
    if not lexemes:
        return {}
    searchable = statements.annotate(search=SearchVector("content", config="english"))
    holding: dict[int, set[str]] = {}
    freq: dict[str, int] = {}
    for lexeme in lexemes:
        found = list(
            searchable.filter(search=SearchQuery(_quoted(lexeme), config="simple", search_type="raw"))
            .values_list("pk", flat=True)[: CANDIDATES * 4]
        )
        freq[lexeme] = len(found)
        for pk in found:
            holding.setdefault(pk, set()).add(lexeme)
    total = statements.count()
    # A word found in every item says nothing about which item is meant.
    weight = {lex: math.log((total + 1) / (freq.get(lex, 0) + 0.5)) for lex in lexemes}
    whole = sum(weight.values()) or 1.0
    return {pk: sum(weight[lex] for lex in found) / whole for pk, found in holding.items()}


def _score_target(*, user, target: str, vector: list[float], statements: QuerySet[Node]) -> list[Candidate]:
    meaning = _meaning(user=user, vector=vector, statements=statements)
    words = _words(text=target, statements=statements)
    out = []
    for pk in set(meaning) | set(words):
        m, w = meaning.get(pk, 0.0), min(1.0, words.get(pk, 0.0))
        score = m + (1.0 - m) * WORDS_LIFT * w
        reason = "keyword" if w >= 0.5 else "semantic"
        out.append(Candidate(id=pk, score=round(score, 4), meaning=round(m, 4), words=round(w, 4), target=target,
                             reason=reason))
    return sorted(out, key=lambda c: (-c.score, c.id))


def match_floor(target: str) -> float:
    """The least score a match needs: low for a short description ("where I live"), up to
    SENTENCE_FLOOR for a target of twenty words or more."""
    words = len(target.split())
    return min(SENTENCE_FLOOR, MATCH_FLOOR + 0.03 * max(0, words - 8))


def resolve(
    *, user, targets: Iterable[str], vectors: list[list[float]] | None = None, fallback: str | None = None
) -> Resolution:
    """Matched and possibly related items for the request's targets (each target resolved on its own).

    When the targets match nothing, ``fallback`` (the whole request's gist) is resolved instead, and what the
    targets only found as possibly related is still offered."""
    found = _resolve(user=user, targets=targets, vectors=vectors)
    targets = [t.strip().lower() for t in targets]
    if found.matched or not fallback or not fallback.strip() or fallback.strip().lower() in targets:
        return found
    again = _resolve(user=user, targets=[fallback])
    matched = {c.id for c in again.matched}
    related = {c.id: c for c in [*again.related, *found.related] if c.id not in matched}
    return Resolution(matched=again.matched, related=sorted(related.values(), key=lambda c: (-c.score, c.id)))


def _resolve(*, user, targets: Iterable[str], vectors: list[list[float]] | None = None) -> Resolution:
    targets = [t for t in targets if t.strip()]
    statements = _statements(user=user)
    if not targets:
        return Resolution(matched=[], related=[])
    if vectors is None:
        vectors = [[float(x) for x in v] for v in get_embedder().embed(targets)]
    matched: dict[int, Candidate] = {}
    related: dict[int, Candidate] = {}
    items: dict[int, tuple[str, str]] = {}
    for target, vector in zip(targets, vectors, strict=True):
        ranked = _score_target(user=user, target=target, vector=vector, statements=statements)
        rows = Node.objects.filter(pk__in=[c.id for c in ranked], owner=user).values_list("pk", "kind", "content")
        items.update({pk: (kind, content) for pk, kind, content in rows})
        ranked = [c for c in ranked if c.id in items]
        if not ranked:
            continue
        best, offered = ranked[0].score, 0
        floor = match_floor(target)
        for candidate in ranked:
            if candidate.score >= max(floor, best * MATCH_RATIO, best - MATCH_MARGIN):
                if candidate.id not in matched or matched[candidate.id].score < candidate.score:
                    matched[candidate.id] = candidate
            elif candidate.score >= RELATED_FLOOR and offered < RELATED_LIMIT and candidate.id not in related:
                related[candidate.id] = candidate
                offered += 1
    # A matched fact names what it was taken from.
    facts = [pk for pk in matched if items[pk][0] == NodeKind.FACT]
    for fact_id, sources in context_ids(node_ids=facts, owner=user).items():
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
