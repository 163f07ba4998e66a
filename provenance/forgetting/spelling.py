"""Words of a request spelt as English spells them, for a second reading of its meaning: "the onlin lone w crazy
intrest" is read again as "the online lone w crazy interest", "helth card" as "health card", "my frist dauter" as
"my first daughter".

The embedding model reads a word it does not know in pieces ("intrest" as "int", "##rest"), and the pieces carry
another meaning or none; a request typed in a hurry then lands far from the statement it names, though every word
is one a reader recognises. A word no English word list holds (pyspellchecker's, with how often each word is used)
is read as the most common English word near enough to be the same word mistyped: the same first letter, one edit
away for a word of four or five letters, two for a longer one (a letter left out, added, changed, or two letters
swapped). The resolver scores each statement by the better of the two readings, since a word the model reads well
as written ("meds", "convo") may be in no list. Words the user's own store holds (a name, "Niamh", a drug, a place)
are the user's words, never read as others; a message partly written in another language is left as it is (its
words are no English typos). What the words match by spelling is not touched.
"""

from __future__ import annotations

import re
from collections import defaultdict
from functools import cache
from typing import NamedTuple

from rapidfuzz import process
from rapidfuzz.distance import OSA

from .intent_languages import foreign_function_words

SHORTEST = 4  # shorter words are too often another word one letter off ("det", "hart")
LONG = 6  # from this length a word may be two edits off
COMMON = 100  # how often (in the list's counts) a word must be used to be read for a typo of another
LEFT_OUT_FACTOR = 50  # how much less used a word with the typo's letters left out may be, and still be preferred
_WORD = re.compile(r"(?<![\w'’-])[A-Za-z]+(?![\w'’-])")


class _Lexicon(NamedTuple):
    known: frozenset[str]
    buckets: dict[str, list[str]]
    counts: dict[str, int]  # how often each word is used, where the list says


def _lexicon(words: tuple[str, ...], common: int, counts: dict[str, int] | None = None) -> _Lexicon:
    """Every word of ``words`` (most used first), and its first ``common`` by first letter: those a typo may be."""
    buckets: dict[str, list[str]] = defaultdict(list)
    for word in words[:common]:
        if len(word) >= 3:
            buckets[word[0]].append(word)
    return _Lexicon(frozenset(words), dict(buckets), counts or {})


@cache
def _english() -> _Lexicon:
    """The English list's lexicon: its words most used first, only those used at least COMMON times standing for a
    typo (the rarer ones are words, but stand for no other)."""
    from spellchecker import SpellChecker

    counts = SpellChecker(language="en", distance=1).word_frequency.dictionary
    words = tuple(sorted((w for w in counts if w.isascii() and w.isalpha()), key=lambda w: (-counts[w], w)))
    common = sum(counts[w] >= COMMON for w in words)
    return _lexicon(words, common, {w: counts[w] for w in words[:common]})


def english_load() -> None:
    """Build the English lexicon now (a process's warm-up), not on the first request that needs it."""
    _english()


def _letters_left_out(typo: str, word: str) -> bool:
    """Is ``typo`` ``word`` with letters left out ("pils" of "pills", "stok" of "stock")?"""
    letters = iter(word)
    return len(word) > len(typo) and all(letter in letters for letter in typo)


def misspellings(texts: list[str], words: tuple[str, ...] | None = None) -> dict[str, str]:
    """The words of ``texts`` (lower case) that ``words`` (most used first; the English list by default) lacks,
    each with the word of ``words`` it is most likely a typo of; words with no such word are left out."""
    known, buckets, counts = _english() if words is None else _lexicon(words, len(words))
    found: dict[str, str] = {}
    for text in texts:
        if not text or foreign_function_words(text):
            continue
        for word in {w.lower() for w in _WORD.findall(text)}:
            if len(word) < SHORTEST or word in known or word in found:
                continue
            most = 2 if len(word) >= LONG else 1
            choices = [w for w in buckets.get(word[0], ()) if abs(len(w) - len(word)) <= most]
            near = process.extract(word, choices, scorer=OSA.distance, score_cutoff=most, limit=None) if choices else []
            if not near:
                continue
            # The nearest, most used first; but typed in a hurry a word most often loses a letter, so a word the
            # typo is with letters left out is read instead where it is used at least 1/LEFT_OUT_FACTOR as often.
            least = min(distance for _, distance, _ in near)
            nearest = [w for w, distance, _ in sorted(near, key=lambda n: (n[1], n[2])) if distance == least]
            best = nearest[0]
            left_out = next((w for w in nearest if _letters_left_out(word, w)), None)
            if left_out and counts and counts.get(left_out, 0) * LEFT_OUT_FACTOR >= counts.get(best, 0):
                best = left_out
            found[word] = best
    return found


def spelt_as_known(text: str, corrections: dict[str, str]) -> str:
    """``text`` with each word of ``corrections`` (keys lower case) written as its correction."""
    if not corrections:
        return text
    return _WORD.sub(lambda m: corrections.get(m.group(0).lower(), m.group(0)), text)
