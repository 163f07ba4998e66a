"""Target resolution: which of the user's items a request in words names ("where I live", "my ex, Tom",
"that I have a tortoise called Sheldon"), and which are only possibly related.

Every item a request may name (a statement of the user's, a fact) is scored against each target three ways:

- by meaning: the cosine of the target's embedding and the item's stored one;
- by words: the share of the target's content words (names, numbers, but also "salary", "loan", "uncle"; not
  the words requests are made of) the item holds, each word weighted by how rare it is in the user's store,
  found by Postgres full-text search with OR semantics (an item holding an abbreviation holds the words the target
  spells it out in: "My TFN is ..." holds "tax file number"; and the other way round, "I have an eating disorder"
  holds the "ED" of "the ED stuff"; a word of the request no item holds is held by an item with a word spelt a
  letter or two differently, "numbr" by "number"; the function words of another language the request is partly
  written in, "que", "je", "ki", "hai", are no content words). Words raise the score of meaning, never stand in
  for it;
- by kind: both sides are placed among kinds of personal information (``categories``: home, health, debt,
  identity numbers, ...) by the vectors they already have, so "the place where we live" reaches "Our house
  address is ..." and "my illness" reaches "Prostate cancer, in remission".

Meaning is read twice where the second reading is on (``DELLM_WIDE_EMBEDDER=local``, the default; ``off`` leaves it
out): by the store's vectors (all-MiniLM-L6-v2) and by all-mpnet-base-v2's (``Embedding.wide``, 768-d), and the
two cosines are averaged (``WIDE_WEIGHT``). The two models miss different paraphrases: by the cosine of target and
request alone, the statements named were the nearest for 92.5% of the 1,950 requests of the 26 sets never tuned on
with the first model, 92.8% with the second and 94.2% with the average (92.2%, 92.7%, 94.1% on the 35 others). The
candidates are still found by the first vectors and the words; a candidate stored before its second reading was
written is read on the spot.

A target with a word no English list holds ("helth card", "the onlin lone w crazy intrest") is read a second
time with the word it mistypes (``spelling``), and scores each item by the better of its two readings.

The whole request is scored the same way (its wording often says what the extracted target leaves out: "the
gentleman from the internet" of "that business") and averaged with each target's score. An item and the facts
taken from it are one statement: the statement scores as its best part. A request names one thing per target,
so a statement is *matched* when it is clearly ahead of the next best (by a margin, or sure on its own) and above
a floor; statements within a hair of it match too (several items may say the same thing). The rest, above a lower
floor, are offered as *possibly related*, unchecked, each with why. A matched fact brings the messages it was
taken from. What the request says to keep ("purge the NIN, leave the BVN", "the overdraft (not the loan one)") is
no part of the request's score, and the statements it names are neither matched nor offered.

Messages that only ask ("where do I live?") and the assistant's own replies are never matched by words or
meaning: they hold no statement of the user's; a reply that repeats a matched item is in Dep(M) anyway.
Nothing here embeds an item: the items' vectors are the stored ones, the kinds' phrases are embedded once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

import numpy as np
from django.db import connection, transaction
from rapidfuzz import fuzz, process

from dellm_site.ai.embedding import get_embedder, get_wide_embedder
from memory.graph import context_ids
from memory.models import Node, NodeKind
from memory.retrieval import owned_holding, owner_term_sql, vector_literal

from .categories import NAMES_A_KIND, kinds
from .intent_languages import content_words_only
from .intent_targets import (
    FRAME_WORDS,
    how_many,
    request_spared,
    request_unaddressed,
    request_without_other_tasks,
    request_without_spared,
)
from .spelling import misspellings, spelt_as_known

# Scores. Chosen on the independent request sets that may be looked at (three at first; KIND_LIFT and
# CONTEXT_WEIGHT moved from 0.45 and 1.0 on fourteen: 93.0% right and 2.4% other became 93.4% and 2.1%); the
# others are only ever scored.
WORDS_LIFT = 0.5  # how much holding every content word of the target closes the gap to a perfect score
UNHELD_WORD = 0.5  # the weight, against a held word's, of a target word no item holds
KIND_LIFT = 0.55  # what sharing the target's kind adds
CONTEXT_WEIGHT = 1.25  # the whole request's score, against each target's
# The whole request names every target of it: with several targets it tells each less (its weight is divided by
# the number of targets).
# Deciding: the best statement matches when it leads the next by MATCH_GAP (over MATCH_FLOOR) or reaches
# MATCH_SURE; any within MATCH_MARGIN of it matches too. MATCH_GAP was the smallest lead at which another statement
# than the named one was matched for at most 1.8% of the requests of the eleven request sets then looked at (a
# right item for 92.0% of them, against 91.4% and 1.3% with a lead of 0.08). On the fourteen looked at now: 93.0%
# right and 2.4% other at 0.06, 92.2% and 1.8% at 0.08 (with the former lift and weight); also matching a closer
# lead when the whole request and its gist put the same statement first trades right for other nearly one for one,
# so the rule stays.
# The second reading's cosine, against the first's, in the meaning score (both readings of equal weight).
WIDE_WEIGHT = 1.0
# At most this many candidates without a stored second reading are read on the spot (about 30 ms each); more, and
# the request is matched by the first reading alone while they are read in the background.
WIDE_READ_NOW = 24
# The whole request is read a second time only where it names one thing: with several, each of them is read, and
# the request's own score weighs less for each (CONTEXT_WEIGHT / targets). On the twenty-three sets never tuned
# on, reading it always matched 1,584 right and 25 other items, for one thing only 1,582 and 26, never 1,579 and
# 32; a list of three things is then read in one pass (about 35 ms here) rather than two (about 70 ms).
WIDE_CONTEXT_TARGETS = 1
MATCH_FLOOR = 0.28
MATCH_SURE = 0.7
MATCH_GAP = 0.06
MATCH_MARGIN = 0.02
# A target naming several things ("both loans", "all three", "the health things", "my debts")
# matches the first several statements when they lead the next by MATCH_GAP; at most MAX_SEVERAL when it says no
# number.
MAX_SEVERAL = 4
# A request that says how many things it names and names that many targets ("forget both what I said about Sipho and
# where I live"): each target names one thing, so one that leads nowhere by MATCH_GAP takes its best statement the
# others left when it leads the next by this much (None: never). On the looked-at sets, 0.02 matched 2 more right
# items of 2,475 and no other (`manage.py resolution_sweep`); scored once on the sets never tuned on, 1 more of
# 1,950 and no other (the counting of "both ... and" before it, 5 more).
COUNTED_GAP: float | None = 0.02
RELATED_FLOOR = 0.2
RELATED_LIMIT = 8
# Candidates: the nearest items by meaning (to each target, to the request, to the target's kind), and the
# holders of each rare word (one held by at most RARE_HOLDERS items).
CANDIDATES = 60
RARE_HOLDERS = 60
HOLDERS_MAX = 240
# A word of the request no item holds is held by a candidate with a word this similar to it (rapidfuzz's ratio,
# 0-100: "numbr" and "number" 91, "lisence" and "license" 86, "loan" and "lean" are too short to be compared).
SPELLING_SIMILARITY = 80
SPELLING_MIN_LETTERS = 5


@dataclass(frozen=True)
class Candidate:
    id: int
    score: float
    meaning: float
    words: float
    target: str
    reason: str  # semantic | keyword | kind | fact_source
    kind: str | None = None  # the kind of information target and item share, when that brought them together


@dataclass(frozen=True)
class Resolution:
    matched: list[Candidate]
    related: list[Candidate]


# The items a request can name: the user's own messages that state something, and active facts. A message that
# only asks ("where do I live?", "recommend a film") holds no statement of the user's (``Node.informative``, decided
# when it was stored; "what helps with migraines? mine start at night" does state something); the assistant's
# replies are none either. Both queries below select exactly these.


_QUOTED = re.compile(r"[\"“‘']([^\"”’']{2,})[\"”’']")
_SPECIFIC = re.compile(r"\b(?:\d[\w./-]*|[A-Z][\w'-]*)")


def specific_words(text: str) -> str:
    """The words of a text that name something in particular: numbers, capitalised words past the
    first one (a name, a place), and anything in quotes."""
    quoted = " ".join(_QUOTED.findall(text))
    words = text.split()
    rest = " ".join(words[1:]) if words and words[0][:1].isupper() else text
    return " ".join([quoted, *(w for w in _SPECIFIC.findall(rest) if w not in ("I", "I'm", "I've", "I'd", "I'll"))])


@cache
def _frame_lexemes() -> frozenset[str]:
    """The words requests are made of ("forget", "please", "stuff"), as full-text lexemes."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(tsvector_to_array(to_tsvector('english', %s)), '{}')",
                       [" ".join(sorted(FRAME_WORDS))])
        return frozenset(cursor.fetchone()[0])


def _lexemes(texts: list[str]) -> list[set[str]]:
    """Each text's content words as lexemes (stemmed, without stop words and request words, in English or in
    another language the text is partly written in: ``content_words_only``)."""
    if not texts:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce(tsvector_to_array(to_tsvector('english', t)), '{}') FROM unnest(%s::text[]) "
            "WITH ORDINALITY AS x(t, i) ORDER BY i",
            [[content_words_only(text) for text in texts]],
        )
        frame = _frame_lexemes()
        return [set(row[0]) - frame for row in cursor.fetchall()]


_HOLDERS_SQL = f"""
SELECT w.lexeme, h.id FROM unnest(%(lexemes)s::text[]) AS w(lexeme)
CROSS JOIN LATERAL (
    SELECT n.id FROM {owned_holding(owner_term_sql("w.lexeme"), "n.id, n.retrievable, n.informative, n.kind")} n
    LEFT JOIN chat_message m ON m.node_ptr_id = n.id AND m.owner_id = %(owner)s
    WHERE n.owner_id = %(owner)s
      AND n.retrievable AND n.informative AND n.kind IN ('message', 'fact') AND m.role IS DISTINCT FROM 'assistant'
    LIMIT {HOLDERS_MAX}
) h
"""


def _holders(*, user, lexemes: set[str]) -> dict[str, set[int]]:
    """The statements holding each lexeme (at most HOLDERS_MAX counted), one query through the owner's index."""
    if not lexemes:
        return {}
    found: dict[str, set[int]] = {lexeme: set() for lexeme in lexemes}
    with connection.cursor() as cursor:
        cursor.execute(_HOLDERS_SQL, {"lexemes": sorted(lexemes), "owner": user.pk})
        for lexeme, pk in cursor.fetchall():
            found[lexeme].add(pk)
    return found


# The CANDIDATES statements (the items a request can name; the embedding row carries its node's owner, kind and
# retrievable-and-informative flag) nearest to each of several vectors, in one scan of the user's rows for every
# view of a request instead of one scan per view: each row's distance to every vector computed once (materialized),
# then each vector's nearest by a top-N sort of those distances (a full sort per vector, as a window function
# ranks, took twice as long on a 10,000-message history). Vectors come back in pgvector's binary
# form (``vector_send``: two 16-bit integers, then big-endian float4), which numpy reads directly; parsing their
# text form cost more than the query.
_NEAREST_SQL = """
WITH distances AS MATERIALIZED (
    SELECT e.node_id AS id, {distances}
    FROM memory_embedding e
    LEFT JOIN chat_message m ON m.node_ptr_id = e.node_id AND m.owner_id = %(owner)s
    WHERE e.owner_id = %(owner)s AND e.retrievable AND e.kind IN ('message', 'fact')
      AND m.role IS DISTINCT FROM 'assistant'
)
SELECT id, (SELECT count(*) FROM distances) FROM ({nearest}) nearest
"""
_VECTORS_SQL = "SELECT node_id, vector_send(vector) FROM memory_embedding WHERE owner_id = %s AND node_id = ANY(%s)"
_WIDE_SQL = ("SELECT node_id, vector_send(wide) FROM memory_embedding "
             "WHERE owner_id = %s AND node_id = ANY(%s) AND wide IS NOT NULL")


def _unpack(raw: bytes) -> np.ndarray:
    return np.frombuffer(raw, dtype=">f4", offset=4).astype(np.float32)


def _nearest(*, user, vectors: list[np.ndarray]) -> tuple[dict[int, np.ndarray], int]:
    """The user's statements nearest to any of ``vectors`` (CANDIDATES each), with their vectors; and how many
    statements with a vector the user has (0 when none is near, i.e. there are none)."""
    if not vectors:
        return {}, 0
    with connection.cursor() as cursor:
        # One distance column per vector (each row read once, and only its id and distances kept), then each
        # column's first CANDIDATES.
        sql = _NEAREST_SQL.format(
            distances=", ".join(f"e.vector <=> %(v{i})s::vector AS d{i}" for i in range(len(vectors))),
            nearest=" UNION ".join(f"(SELECT id FROM distances ORDER BY d{i}, id LIMIT %(k)s)"
                                   for i in range(len(vectors))),
        )
        params = {"owner": user.pk, "k": CANDIDATES, **{f"v{i}": vector_literal(v) for i, v in enumerate(vectors)}}
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return _vectors_of(user=user, ids=[pk for pk, _ in rows]), (rows[0][1] if rows else 0)


def _vectors_of(*, user, ids: list[int]) -> dict[int, np.ndarray]:
    if not ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(_VECTORS_SQL, [user.pk, ids])
        return {pk: _unpack(raw) for pk, raw in cursor.fetchall()}


def _wide_of(*, user, ids: list[int], contents: dict[int, str]) -> np.ndarray | None:
    """The second reading of each of ``ids`` (stored, or read now from its text where it is not stored yet), in
    order; None where the second reading is off."""
    wide = get_wide_embedder()
    if wide is None:
        return None
    with connection.cursor() as cursor:
        cursor.execute(_WIDE_SQL, [user.pk, list(ids)])
        found = {pk: _unpack(raw) for pk, raw in cursor.fetchall()}
    unread = [pk for pk in ids if pk not in found]
    if len(unread) > WIDE_READ_NOW:
        # A store from before the second reading: this request is matched by the first alone (both readings or
        # neither, so that the scores compare), and the statements are read in the background for the next.
        from memory.tasks import embed_wide

        transaction.on_commit(lambda: embed_wide.delay(unread))
        return None
    missing = sorted({contents.get(pk, "") for pk in unread})
    read = dict(zip(missing, wide.embed(missing), strict=True)) if missing else {}
    rows = [found[pk] if pk in found else read[contents.get(pk, "")] for pk in ids]
    return np.asarray(rows, dtype=np.float32).reshape(len(ids), wide.dimensions)


def spelt_for_meaning(*, user, texts: list[str]) -> list[str]:
    """``texts`` read a second time: a word no English list holds written as the word it is a typo of
    (``spelling``), unless the user's own store holds it (a name, a drug, a place: the user's word, not a typo)."""
    corrections = misspellings(texts)
    if not corrections:
        return texts
    words = list(corrections)
    lexemes = _lexemes(words + [corrections[w] for w in words])
    held = _holders(user=user, lexemes=set().union(*lexemes[: len(words)]))
    # Held as the stem of its correction ("onlin" is how the stemmer writes "online") is no word of the user's own.
    pairs = zip(words, lexemes[: len(words)], lexemes[len(words):], strict=True)
    corrections = {word: corrections[word] for word, own, spelt in pairs
                   if own == spelt or not any(held.get(lexeme) for lexeme in own)}
    return [spelt_as_known(text, corrections) for text in texts]


# A target that reads as a clause about something named beside it ("what he did back then", "his mum doesn't want
# it spread", "living under the one roof") rather than a thing of its own; not a thing with what the user or the
# assistant did with it ("the ID from the card I left in the taxi", "the story we tell Nan").
_CLAUSE_TARGET = re.compile(r"^\W*(?:his|her|their|its|he|she|they|it|what|who|whom|how|why|when|where|which|that|"
                            r"[a-z]+ing)\b|\b(?:he|she|they|it)\s+(?!and\b|or\b)[a-z']+", re.IGNORECASE)


@dataclass
class _View:
    """A text scored against the candidates: a target, or the whole request."""

    text: str
    vector: np.ndarray
    lexemes: set[str]
    respelt: np.ndarray | None = None  # the vector of the text with its typos read as words (``spelt_for_meaning``)
    # The second reading of the text (``DELLM_WIDE_EMBEDDER``), where it is on and the text is read by it (the whole
    # request is not, past WIDE_CONTEXT_TARGETS things): without it, the view is scored by the first reading alone.
    wide: np.ndarray | None = None


_LINKING = frozenset("a an the my your ur his her our their of for and to in on at i me is was".split())


def initialisms(text: str, sizes: tuple[int, ...] = (3, 4)) -> dict[str, str]:
    """What runs of three or four words (``sizes``) would be abbreviated to, and the words ("bank verification
    number" -> "bvn"): a statement may hold the abbreviation where a request spells it out, or the other way round."""
    words = [w for w in re.findall(r"[^\W\d_]+", text) if w.lower() not in _LINKING]
    return {"".join(w[0] for w in run).lower(): " ".join(run)
            for n in sizes for i in range(len(words) - n + 1) for run in [words[i: i + n]]}


_ONE_FOR = re.compile(r"\b((?:[^\W\d_]+\s+){1,3}?)ones?\b", re.IGNORECASE)


def stand_ins(text: str, context: str) -> dict[str, str]:
    """What "the social insurance one" would be abbreviated to, "one" standing for a noun the request uses
    elsewhere ("both my numbers - the social insurance one ...": "sin" for "social insurance numbers")."""
    found = _ONE_FOR.search(text)
    if not found:
        return {}
    words = [w for w in found.group(1).split() if w.lower() not in _LINKING]
    if not 2 <= len(words) <= 3:  # with the noun, three or four letters
        return {}
    nouns = {w for w in re.findall(r"[^\W\d_]{3,}", context) if w.lower() not in _LINKING | {"one", "ones"}}
    return {("".join(w[0] for w in words) + noun[0]).lower(): " ".join([*words, noun]) for noun in sorted(nouns)
            if noun not in words}


def _abbreviations_hold_their_words(holders: dict[str, set[int]], spelt: dict[str, str]) -> None:
    """An item holding an abbreviation ("My TFN is ...") holds the words it stands for ("tax file number")."""
    held = {abbreviation: words for abbreviation, words in spelt.items() if holders.get(abbreviation)}
    for abbreviation, lexemes in zip(held, _lexemes(list(held.values())), strict=True):
        for lexeme in lexemes:
            holders.setdefault(lexeme, set()).update(holders[abbreviation])


def _statements_spell_out(*, holders: dict[str, set[int]], words: set[str], contents: dict[int, str]) -> None:
    """A candidate that spells out a short word of the request no item holds ("the ED stuff" against "I have an
    eating disorder") holds that word."""
    short = {w for w in words if 2 <= len(w) <= 5 and w.isalpha() and not holders.get(w)}
    if not short:
        return
    for pk, content in contents.items():
        for letters in short & set(initialisms(content, sizes=(2, 3, 4, 5))):
            holders.setdefault(letters, set()).add(pk)


_LONG_WORD = re.compile(rf"[^\W\d_]{{{SPELLING_MIN_LETTERS},}}")


def _misspellings_hold_their_words(*, holders: dict[str, set[int]], texts: list[str],
                                   contents: dict[int, str]) -> None:
    """A candidate holding a word spelt a little differently from one of the request's that no item holds ("my
    socal securty numbr" against "My social security number is ...", or "lisence" in the statement and
    "license" in the request) holds that word: the two differ by a letter or two (``SPELLING_SIMILARITY``)."""
    words = sorted({w for text in texts for w in _LONG_WORD.findall(text.lower())})
    unheld = {w: lexemes for w, lexemes in zip(words, _lexemes(words), strict=True)
              if lexemes and not any(holders.get(lexeme) for lexeme in lexemes)}
    if not unheld or not contents:
        return
    spellings = sorted({w for content in contents.values() for w in _LONG_WORD.findall(content.lower())} - set(unheld))
    if not spellings:
        return
    close = process.cdist(list(unheld), spellings, scorer=fuzz.ratio, score_cutoff=SPELLING_SIMILARITY,
                          dtype=np.uint8)
    for lexemes, row in zip(unheld.values(), close, strict=True):
        near = {spellings[j] for j in np.flatnonzero(row)}
        if not near:
            continue
        for pk, content in contents.items():
            if near & set(_LONG_WORD.findall(content.lower())):
                for lexeme in lexemes:
                    holders.setdefault(lexeme, set()).add(pk)


class _Scorer:
    """The candidates' vectors, words and kinds, and each view's score of them."""

    def __init__(self, *, user, ids: list[int], holders: dict[str, set[int]], total: int,
                 known: dict[int, np.ndarray] | None = None, contents: dict[int, str] | None = None):
        vectors = dict(known or {})
        vectors.update(_vectors_of(user=user, ids=[pk for pk in ids if pk not in vectors]))
        self.ids = [pk for pk in ids if pk in vectors]
        self.vectors = np.asarray([vectors[pk] for pk in self.ids], dtype=np.float32).reshape(len(self.ids), -1)
        self.wide = _wide_of(user=user, ids=self.ids, contents=contents or {}) if self.ids else None
        self.holders = holders
        self.total = total
        self.kinds = kinds()
        self.profiles = self.kinds.profile(self.kinds.affinity(self.vectors)) if self.ids else np.zeros((0, 0))

    def _weight(self, lexeme: str) -> float:
        return math.log((self.total + 1) / (len(self.holders.get(lexeme, ())) + 0.5))

    def words(self, lexemes: set[str]) -> np.ndarray:
        """Per candidate: the rarity-weighted share of ``lexemes`` it holds (a word no item holds weighs less:
        it tells the statements apart no better than the rest)."""
        held = {lex: self._weight(lex) for lex in lexemes if self.holders.get(lex)}
        whole = sum(held.values()) + UNHELD_WORD * sum(self._weight(lex) for lex in lexemes if lex not in held)
        out = np.zeros(len(self.ids), dtype=np.float32)
        if not held or whole <= 0:
            return out
        for lexeme, weight in held.items():
            holding = self.holders[lexeme]
            out += np.asarray([pk in holding for pk in self.ids], dtype=np.float32) * weight
        return out / whole

    def kind(self, vector: np.ndarray) -> tuple[np.ndarray, str | None]:
        """Per candidate: how much it shares the kind of information ``vector`` names, and that kind."""
        affinity = self.kinds.affinity(vector[None, :])
        confidence = float(np.clip((affinity.max() - NAMES_A_KIND) / (1 - NAMES_A_KIND), 0, 1))
        if not confidence or not self.ids:
            return np.zeros(len(self.ids), dtype=np.float32), None
        profile = self.kinds.profile(affinity)[0]
        shared = confidence * (self.profiles @ profile) / float(np.linalg.norm(profile))
        return shared.astype(np.float32), self.kinds.names[int(profile.argmax())]

    def score(self, view: _View) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str | None]:
        words = self.words(view.lexemes)
        wide = self.wide @ view.wide if self.wide is not None and view.wide is not None else None
        found = self._scored(view.vector, words, wide)
        if view.respelt is None:
            return found
        again = self._scored(view.respelt, words, wide)
        better = again[0] > found[0]
        return (*(np.where(better, b, a) for a, b in zip(found[:4], again[:4], strict=True)),
                again[4] if again[0].max() > found[0].max() else found[4])

    def _scored(self, vector: np.ndarray, words: np.ndarray, wide: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, str | None]:
        meaning = self.vectors @ vector if self.ids else np.zeros(0, dtype=np.float32)
        if wide is not None:  # both readings of the meaning, averaged
            meaning = (meaning + WIDE_WEIGHT * wide) / (1 + WIDE_WEIGHT)
        shared, kind = self.kind(vector)
        score = meaning + (1 - meaning) * WORDS_LIFT * words + KIND_LIFT * shared
        return score, meaning, words, shared, kind


def _statement_of(*, user, facts: list[int]) -> tuple[dict[int, int], dict[int, list[int]]]:
    """For each fact, the statement it belongs to (the first user message it was taken from, else itself), and
    all the user messages it was taken from."""
    sources = context_ids(node_ids=facts, owner=user)
    every = {pk for found in sources.values() for pk in found}
    messages = set(
        Node.objects.filter(pk__in=every, owner=user, kind=NodeKind.MESSAGE)
        .exclude(message__role="assistant")
        .values_list("pk", flat=True)
    )
    taken = {fact: sorted(pk for pk in sources.get(fact, []) if pk in messages) for fact in facts}
    return {fact: (found[0] if found else fact) for fact, found in taken.items()}, taken


def resolve(
    *,
    user,
    targets: Iterable[str],
    vectors: list[list[float]] | None = None,
    fallback: str | None = None,
    fallback_vector: list[float] | None = None,
    context: str | None = None,
    context_vector: list[float] | None = None,
) -> Resolution:
    """Matched and possibly related items for the request's targets (each target resolved on its own, every one
    alongside ``context``, the whole request, when given). Vectors not given (``vectors``, ``fallback_vector``,
    ``context_vector``) are embedded together, in one pass.

    When the targets match nothing, ``fallback`` (the whole request's gist) is decided instead, and what the
    targets only found as possibly related is still offered. The gist is among the candidates' probes from the
    start, so a request whose targets match nothing costs one scan of the user's vectors, not two. The gist's own
    candidates change no target's match: with the gist among the probes and without, the 53 request sets (3,975
    requests) gave the same right-item, other-item and several-named counts, set by set, and the five compared
    request by request the same matches."""
    targets = [t for t in targets if t.strip()]
    if vectors is not None and len(vectors) != len(targets):
        raise ValueError("one vector per target")
    # A letter's greeting and signature are no part of what it asks ("... Yours, Albert Whitfield").
    # Nor is another task the same message asks for ("Can you throw together a packing list for Chennai? Also, the
    # cash my brother slipped me, bin that"): its "Chennai" would reach a statement.
    unaddressed = request_without_other_tasks(request_unaddressed(context)) if context else context
    if unaddressed != context:
        context, context_vector = unaddressed, None
    # What the request says to keep ("purge the PAN, keep aadhaar") is never matched, and no part of what it asks.
    spared = [s for s in request_spared(context) if s.strip().lower() not in {t.strip().lower() for t in targets}] \
        if context else []
    if spared:
        context, context_vector = request_without_spared(context), None
    use_fallback = bool(fallback and fallback.strip() and fallback.strip().lower() not in
                        {t.strip().lower() for t in targets})
    use_context = bool(context and context.strip() and context.strip().lower() not in
                       {t.strip().lower() for t in targets})
    missing = ([] if vectors is not None else targets) + ([context] if use_context and context_vector is None else [])
    missing += ([fallback] if use_fallback and fallback_vector is None else []) + spared
    embedded = iter(np.asarray(get_embedder().embed(missing), dtype=np.float32)) if missing else iter(())
    target_vectors = [np.asarray(v, dtype=np.float32) for v in vectors] if vectors is not None else [
        next(embedded) for _ in targets]
    context_vec = None
    if use_context:
        context_vec = np.asarray(context_vector, dtype=np.float32) if context_vector is not None else next(embedded)
    fallback_vec = None
    if use_fallback:
        fallback_vec = np.asarray(fallback_vector, dtype=np.float32) if fallback_vector is not None else next(embedded)
    spared_vecs = [next(embedded) for _ in spared]
    texts = [*targets, *([context] if use_context else []), *([fallback] if use_fallback else []), *spared]
    lexemes = iter(_lexemes(texts))
    views = [_View(t, v, next(lexemes)) for t, v in zip(targets, target_vectors, strict=True)]
    context_view = _View(context, context_vec, next(lexemes)) if use_context else None
    fallback_view = _View(fallback, fallback_vec, next(lexemes)) if use_fallback else None
    spared_views = [_View(t, v, next(lexemes)) for t, v in zip(spared, spared_vecs, strict=True)]
    if not views and fallback_view is None:
        return Resolution(matched=[], related=[])

    all_views = [*views, *([context_view] if context_view else []), *([fallback_view] if fallback_view else [])]
    # A text with a word mistyped ("the onlin lone w crazy intrest") is read a second time with the words it
    # mistypes, and scores a statement by the better reading: a word the model reads well as written ("meds") may be
    # in no word list, and keeps its own reading.
    read = [*all_views, *spared_views]
    respelt = [(view, text) for view, text in zip(read, spelt_for_meaning(user=user, texts=[v.text for v in read]),
                                                  strict=True) if text != view.text]
    if respelt:
        for (view, _), vector in zip(respelt, get_embedder().embed([text for _, text in respelt]), strict=True):
            view.respelt = np.asarray(vector, dtype=np.float32)
    spelt = {abbreviation: words for view in all_views if view is not fallback_view
             for abbreviation, words in initialisms(view.text).items()}
    if context:
        for view in views:
            for abbreviation, words in stand_ins(view.text, context).items():
                spelt.setdefault(abbreviation, words)
    holders = _holders(user=user, lexemes=set().union(*(v.lexemes for v in [*all_views, *spared_views]), spelt))
    _abbreviations_hold_their_words(holders, spelt)
    ids: set[int] = {pk for found in holders.values() if len(found) <= RARE_HOLDERS for pk in found}
    found_kinds = kinds()
    probes = [view.vector for view in all_views] + [view.respelt for view in all_views if view.respelt is not None]
    named_kinds = []  # the statements nearest the kind a view names (each kind once)
    for view in all_views:
        affinity = found_kinds.affinity(view.vector[None, :])[0]
        if affinity.max() > NAMES_A_KIND and int(affinity.argmax()) not in named_kinds:
            named_kinds.append(int(affinity.argmax()))
    near, total = _nearest(user=user, vectors=[*probes, *(found_kinds.centroids[k] for k in named_kinds)])
    ids.update(near)
    if not ids:
        return Resolution(matched=[], related=[])
    # Only what the targets name: the rest of a request is full of short words that name nothing ("ya", "af").
    contents, kinds_of = {}, {}
    for pk, content, kind in Node.objects.filter(pk__in=ids, owner=user).values_list("pk", "content", "kind"):
        contents[pk], kinds_of[pk] = content, kind
    _statements_spell_out(holders=holders, contents=contents, words=set().union(*(view.lexemes for view in views)))
    _misspellings_hold_their_words(holders=holders, contents=contents,
                                   texts=[view.text for view in all_views if view is not fallback_view])
    # The rarity of a word is its share of the statements with a vector (those a request can match).
    scorer = _Scorer(user=user, ids=sorted(ids), holders=holders, total=total, known=near, contents=contents)
    if scorer.wide is not None:
        # The targets, the whole request, what it keeps and the gist, in one call: a short text costs little beside
        # the others (``dellm_site.ai.mpnet._batches``), where a call of its own later cost a pass over the weights.
        wide_context = context_view is not None and len(targets) <= WIDE_CONTEXT_TARGETS
        read = [*views, *([context_view] if wide_context else []), *spared_views,
                *([fallback_view] if fallback_view else [])]
        for view, vector in zip(read, get_wide_embedder().embed([view.text for view in read]), strict=True):
            view.wide = np.asarray(vector, dtype=np.float32)
    kinds_of = {pk: kinds_of[pk] for pk in scorer.ids if pk in kinds_of}
    statement_of, taken_from = _statement_of(user=user, facts=[pk for pk in scorer.ids
                                                               if kinds_of.get(pk) == NodeKind.FACT])
    units = [statement_of.get(pk, pk) for pk in scorer.ids]
    context_score = scorer.score(context_view)[0] if context_view else None

    def ranked(view: _View) -> list[Candidate]:
        """Statements best first, each as its best-scoring item."""
        score, meaning, words, shared, kind = scorer.score(view)
        if context_score is not None:
            weight = CONTEXT_WEIGHT / len(views)
            score = (score + weight * context_score) / (1 + weight)
        best: dict[int, Candidate] = {}
        for i, pk in enumerate(scorer.ids):
            if pk not in kinds_of:
                continue
            reason = ("keyword" if words[i] >= 0.5 else
                      "kind" if KIND_LIFT * shared[i] >= 0.15 and meaning[i] < 0.5 else "semantic")
            found = Candidate(id=pk, score=round(float(score[i]), 4), meaning=round(float(meaning[i]), 4),
                              words=round(float(words[i]), 4), target=view.text, reason=reason,
                              kind=kind if reason == "kind" else None)
            if units[i] not in best or found.score > best[units[i]].score:
                best[units[i]] = found
        return sorted(best.values(), key=lambda c: (-c.score, c.id))

    def decide(view: _View, count: int | None = 1, taken: frozenset[int] = frozenset(), gap: float = MATCH_GAP
               ) -> tuple[list[Candidate], list[Candidate]]:
        """The statements ``view`` names: the first ``count`` when they lead the next by MATCH_GAP (or the last of
        them is sure on its own), and those within MATCH_MARGIN of the last; with ``count`` None, the first alone
        when it leads clearly, else the first few (up to MAX_SEVERAL) where the lead is widest. Statements in
        ``taken`` (named by the request's other targets) and those the request keeps are out of the running; ``gap``
        is the lead asked of a statement below MATCH_SURE."""
        order = [c for c in ranked(view) if statement_of.get(c.id, c.id) not in taken | kept]
        if not order:
            return [], []
        scores = [c.score for c in order] + [0.0]

        def sure(n: int) -> bool:
            return n <= len(order) and scores[n - 1] >= MATCH_FLOOR and (
                scores[n - 1] >= MATCH_SURE or scores[n - 1] - scores[n] >= gap)

        # With no number said, a clear lead of the first alone wins; else the first few where the lead is widest.
        leads = [count] if count else [1, *sorted(
            (n for n in range(2, MAX_SEVERAL + 1) if sure(n)), key=lambda n: (scores[n] - scores[n - 1], n))[:1]]
        chosen = next((n for n in [*leads, 1] if sure(n)), None)
        matched = [c for c in order if c.score >= max(MATCH_FLOOR, scores[chosen - 1] - MATCH_MARGIN)] if chosen else []
        related = [c for c in order if c not in matched and c.score >= RELATED_FLOOR][:RELATED_LIMIT]
        return matched, related

    def kept_units(view: _View) -> set[int]:
        """The statements a request says to keep: those the kept phrase names, as a target would be matched."""
        score = scorer.score(view)[0]
        best: dict[int, float] = {}
        for i, pk in enumerate(scorer.ids):
            if pk in kinds_of:
                best[units[i]] = max(best.get(units[i], -1.0), float(score[i]))
        order = sorted(best.values(), reverse=True)
        if not order or order[0] < MATCH_FLOOR:
            return set()
        return {unit for unit, found in best.items() if found >= order[0] - MATCH_MARGIN}

    matched: dict[int, Candidate] = {}
    related: dict[int, Candidate] = {}
    # What the request says to keep is out of the running before anything is decided: "remove the bank verification
    # number, the account number is fine" matches the BVN even where the account number would have scored higher.
    kept = frozenset().union(*(kept_units(view) for view in spared_views))
    # How many each target names: what it says, or, for a request with one target, what the whole request says
    # ("TFN and Medicare number -- I'd like both of those forgotten").
    said = how_many(context_view.text) if context_view is not None else None
    counts = [how_many(view.text) for view in views]
    if len(views) == 1 and context_view is not None and counts[0] in (1, None):
        counts = [said if said != 1 else counts[0]]
    decided = [decide(view, count) for view, count in zip(views, counts, strict=True)]
    # When the request says it names several things ("both", "two things", "my debts", a list of three), each
    # target names a thing of its own: a target that leads nowhere clearly, because what another target names ranks
    # beside its own, is decided again without the statements the others matched. Not otherwise: two targets are
    # often one thing said twice ("the medical thing from January, the clinic in Spain"; "my low spirits and the
    # tablets for them"), and the second would then take a statement nobody named.
    several = len(views) >= 3 or (context_view is not None and said != 1)
    for i, (view, count) in enumerate(zip(views, counts, strict=True)):
        if decided[i][0] or not several or _CLAUSE_TARGET.search(view.text):
            continue
        taken = frozenset(statement_of.get(c.id, c.id) for j, (hits, _) in enumerate(decided)
                          if j != i and not _CLAUSE_TARGET.search(views[j].text) for c in hits)
        if taken:
            decided[i] = decide(view, count, taken)
    # Two targets of a request naming several things that both lead to the same statement ("my NI number, and the
    # NHS one" both nearest the NHS number): one thing is not named twice there, so the target whose claim on it is
    # the weaker is decided again without it, and takes its next statement when that one stands out on its own.
    # Not where there are more targets than the things the request says it names ("Two things: the debts of my card
    # and the bank, and the password": the card and the bank are one statement).
    if several and not (said and len(views) > said):
        def unit(c: Candidate) -> int:
            return statement_of.get(c.id, c.id)

        plain = [i for i, view in enumerate(views) if decided[i][0] and not _CLAUSE_TARGET.search(view.text)]
        for i in plain:
            mine = {unit(c): c.score for c in decided[i][0]}
            for j in plain:
                theirs = {unit(c): c.score for c in decided[j][0]}
                shared = set(mine) & set(theirs)
                if j == i or not shared or set(mine) - shared or any(mine[s] >= theirs[s] for s in shared):
                    continue
                taken = frozenset(unit(c) for k in plain if k != i for c in decided[k][0])
                again = decide(views[i], counts[i], taken)
                if again[0]:
                    decided[i] = again
                break
    # As many targets as the things the request says it names: each names one (COUNTED_GAP).
    if COUNTED_GAP is not None and said and said == len(views) >= 2:
        for i, view in enumerate(views):
            if not decided[i][0]:
                taken = frozenset(statement_of.get(c.id, c.id) for j, (hits, _) in enumerate(decided) if j != i
                                  for c in hits)
                decided[i] = decide(view, 1, taken, gap=COUNTED_GAP)
    for hits, near in decided:
        for c in hits:
            if c.id not in matched or matched[c.id].score < c.score:
                matched[c.id] = c
        for c in near:
            related.setdefault(c.id, c)
    if not matched and fallback_view is not None:
        hits, near = decide(fallback_view)
        matched = {c.id: c for c in hits}
        related = {c.id: c for c in [*near, *related.values()]}
    # A matched fact names what it was taken from (and an item offered is offered as the user's own words).
    for candidate in list(matched.values()):
        for source in taken_from.get(candidate.id, []):
            if source not in matched:
                matched[source] = Candidate(id=source, score=candidate.score, meaning=candidate.meaning,
                                            words=candidate.words, target=candidate.target, reason="fact_source",
                                            kind=candidate.kind)
    offered: dict[int, Candidate] = {}
    for candidate in related.values():
        shown = statement_of.get(candidate.id, candidate.id)
        if shown not in matched and candidate.id not in matched and shown not in offered:
            offered[shown] = Candidate(id=shown, score=candidate.score, meaning=candidate.meaning,
                                       words=candidate.words, target=candidate.target, reason=candidate.reason,
                                       kind=candidate.kind)
    return Resolution(
        matched=sorted(matched.values(), key=lambda c: c.id),
        related=sorted(offered.values(), key=lambda c: (-c.score, c.id))[:RELATED_LIMIT],
    )
