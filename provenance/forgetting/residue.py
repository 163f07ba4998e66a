"""Possible residue: surviving items that hold a *distinctive part* of what was deleted, or come close to it
in meaning, so that a partial or rephrased mention ("Note to self: 4826 is the number.") is not reported as
"no trace" just because the whole phrase is gone.

- Before the wipe, the deleted texts (the request's words and the matched items) are reduced to their
  distinctive lexemes: numbers and names (``specific_words``), and the other words, which count only
  where they are rare in the user's own store.
- After the wipe, Postgres counts each lexeme's document frequency over the user's surviving items (full-text
  search on the GIN index), keeps the distinctive ones, finds the items holding them, and pgvector finds the
  items near the deleted vectors.
- An item holding a number or a name, two rare words, or a vector within ``DELLM_FORGET_RESIDUE_SIMILARITY``
  of a deleted one is reported with why. The manifest keeps the kind of each token and its character span in
  the surviving item, never the token itself, so it holds no deleted content once those items are gone too.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import connection
from pgvector.django import CosineDistance

from memory.models import Embedding, Node
from memory.retrieval import OWNED_WORDS_MATCH, nearest_within, owned_holding, owner_term, owner_term_sql

from .hooks import residue_titles
from .resolution import specific_words

if TYPE_CHECKING:
    from dellm_site.types import User

# A name or a number shared with the deleted text is residue unless it is common in the user's store
# (their own name, say): found in more than this share of their items and more than COMMON_MIN of them.
COMMON_SHARE = 0.02
COMMON_MIN = 5
# Other words count only where document frequency means something (a store of RARE_MIN_ITEMS or more),
# and only when rare there; one rare word alone is chance, two shared ones are not.
RARE_MIN_ITEMS = 100
RARE_SHARE = 0.005
RARE_PER_ITEM = 2
# At most this many items are reported (the closest first); the manifest says how many more there were.
LIMIT = 50
MIN_LEXEME = 3

_LEXEMES_SQL = "SELECT DISTINCT lexeme FROM unnest(to_tsvector('english', %(text)s))"

# Each lexeme's document frequency over the user's surviving items, counted up to its ``cap`` + 1 (enough to
# tell whether it is at most ``cap``), through the GIN index of the user's words node_owner_lexemes: a word most
# items hold costs no reading of them all.
_DF_SQL = f"""
SELECT t.lexeme, (
  SELECT count(*) FROM (
    SELECT FROM {owned_holding(owner_term_sql("t.lexeme"))} n
    WHERE n.owner_id = %(owner)s AND NOT (n.id = ANY(%(exclude)s::bigint[]))
    LIMIT t.cap + 1
  ) holding
)
FROM unnest(%(lexemes)s::text[], %(caps)s::int[]) AS t(lexeme, cap)
"""

# The items holding any distinctive lexeme, with the lexemes each holds. Found through the GIN index first
# (MATERIALIZED: otherwise, for the ORDER BY and LIMIT, the planner may walk the user's items in id order and
# tokenise each until enough hold one, which reads the whole store where few do); a distinctive lexeme is
# held by few items, so they are few.
_HITS_SQL = f"""
WITH held AS MATERIALIZED (
  SELECT n.id, n.content FROM memory_node n
  WHERE n.owner_id = %(owner)s AND NOT (n.id = ANY(%(exclude)s::bigint[]))
    AND (%(only)s::bigint[] IS NULL OR n.id = ANY(%(only)s::bigint[])) AND {OWNED_WORDS_MATCH}
)
SELECT h.id, ARRAY(
  SELECT unnest(tsvector_to_array(to_tsvector('english'::regconfig, COALESCE(h.content, ''))))
  INTERSECT SELECT unnest(%(lexemes)s::text[])
)
FROM held h
ORDER BY h.id LIMIT %(limit)s
"""

_WORD_LEXEMES_SQL = """
SELECT w, ARRAY(SELECT lexeme FROM unnest(to_tsvector('english', w))) FROM unnest(%(words)s::text[]) w
"""

_WORD = re.compile(r"\w+(?:['’.-]\w+)*")


def _lexemes(text: str) -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(_LEXEMES_SQL, {"text": text})
        return {row[0] for row in cursor.fetchall() if len(row[0]) >= MIN_LEXEME or row[0].isdigit()}


def residue_tokens(*, texts: list[str]) -> dict[str, list[str]]:
    """The lexemes of the deleted texts that may betray them: ``specific`` (numbers, names, quoted words)
    and ``words`` (the rest, distinctive only where rare). Computed before the wipe."""
    specific: set[str] = set()
    words: set[str] = set()
    for text in {t for t in texts if t and t.strip()}:
        named = _lexemes(specific_words(text))
        specific |= named
        words |= _lexemes(text) - named
    return {"specific": sorted(specific), "words": sorted(words - specific)}


def _kind(lexeme: str) -> str:
    return "number" if any(c.isdigit() for c in lexeme) else "name"


def _or_query(lexemes: list[str]) -> str:
    # Each lexeme is already normalised by to_tsvector: quoted as a raw tsquery term, not stemmed again.
    return " | ".join("'" + lexeme.replace("'", "''") + "'" for lexeme in lexemes)


def _owned_or_query(owner_id: int, lexemes: list[str]) -> str:
    """Any of ``lexemes``, as the user's owner-prefixed words (memory.retrieval.OWNED_WORDS_MATCH)."""
    return " | ".join(owner_term(owner_id, lexeme) for lexeme in lexemes)


def _distinctive(*, user: User, tokens: dict, exclude: list[int], total: int) -> dict[str, str]:
    """The tokens that are rare enough in the user's surviving store to point at the deleted content,
    each with its kind (number, name, rare word)."""
    specific, words = tokens.get("specific", []), tokens.get("words", []) if total >= RARE_MIN_ITEMS else []
    # The most items a token may be held by and still count: a name or number unless common, a word if rare.
    most_specific, most_rare = int(max(COMMON_MIN, COMMON_SHARE * total)), int(max(1, RARE_SHARE * total))
    caps = {lexeme: most_rare for lexeme in words} | {lexeme: most_specific for lexeme in specific}
    lexemes = sorted(caps)
    if not lexemes:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            _DF_SQL,
            {
                "owner": user.pk,
                "exclude": exclude,
                "lexemes": lexemes,
                "caps": [caps[lexeme] for lexeme in lexemes],
            },
        )
        df = dict(cursor.fetchall())
    out = {}
    for lexeme in specific:
        if 0 < df.get(lexeme, 0) <= most_specific:
            out[lexeme] = _kind(lexeme)
    for lexeme in words:
        if lexeme not in out and 0 < df.get(lexeme, 0) <= most_rare:
            out[lexeme] = "rare word"
    return out


def _spans(*, contents: dict[int, str], held: dict[int, set[str]]) -> dict[int, list[list[int]]]:
    """Where each item holds its tokens: character spans of the words whose lexemes were found."""
    words = sorted({m.group(0) for text in contents.values() for m in _WORD.finditer(text)})
    if not words:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(_WORD_LEXEMES_SQL, {"words": words})
        lexemes_of = {w: set(lexemes) for w, lexemes in cursor.fetchall()}
    return {
        pk: [[m.start(), m.end()] for m in _WORD.finditer(text) if lexemes_of.get(m.group(0), set()) & held[pk]]
        for pk, text in contents.items()
    }


def residue_find(
    *,
    user: User,
    tokens: dict,
    vectors: list[list[float]],
    exclude: set[int] | frozenset[int] = frozenset(),
    only: set[int] | None = None,
    full: bool = False,
    near: dict[int, float] | None = None,
    distinctive: dict[str, str] | None = None,
) -> dict:
    """Surviving items (or the ``only`` ones) that hold distinctive tokens of the deleted content or lie
    near its vectors: ``{"items": [{id, kind, conversation, why, spans, similarity?}], "more": N,
    "titles": [conversation ids], "distinctive": {token: kind}}``. The tokens are found through the full-text
    index (``distinctive``: those an earlier call found, not counted again); the near items through
    ``memory.retrieval.nearest_within`` (the user's retrieval plan; ``near``: its items and distances, when the
    caller has them already, from as far or farther), or with ``full`` by a scan of every vector."""
    nodes = Node.objects.for_user(user).exclude(pk__in=exclude)
    if only is not None:
        nodes = nodes.filter(pk__in=only)
    if distinctive is None:
        total = Node.objects.for_user(user).exclude(pk__in=exclude).count()
        distinctive = _distinctive(user=user, tokens=tokens, exclude=sorted(exclude), total=total)
    held: dict[int, set[str]] = {}
    if distinctive:
        lexemes = sorted(distinctive)
        with connection.cursor() as cursor:
            cursor.execute(
                _HITS_SQL,
                {
                    "owner": user.pk,
                    "exclude": sorted(exclude),
                    "only": None if only is None else sorted(only),
                    "query": _owned_or_query(user.pk, lexemes),
                    "lexemes": lexemes,
                    "limit": LIMIT * 4,
                },
            )
            held = {pk: set(found) for pk, found in cursor.fetchall()}
    similarity: dict[int, float] = {}
    limit = 1.0 - settings.DELLM_FORGET_RESIDUE_SIMILARITY
    embeddings = Embedding.objects.filter(owner=user, node__in=nodes)
    if only is None and not full:
        if near is None:
            near = nearest_within(owner_id=user.pk, vectors=vectors, max_distance=limit, exclude=set(exclude))
        similarity = {pk: round(1.0 - distance, 3) for pk, distance in near.items() if distance <= limit}
        vectors = []
    for vector in vectors:
        for pk, distance in (
            embeddings.annotate(distance=CosineDistance("vector", vector))
            .filter(distance__lte=limit)
            .order_by("distance")
            .values_list("node_id", "distance")[:LIMIT]
        ):
            similarity[pk] = max(similarity.get(pk, 0.0), round(1.0 - float(distance), 3))

    def why(pk: int) -> list[str]:
        kinds = [distinctive[lexeme] for lexeme in sorted(held.get(pk, ()))]
        reasons = [f"a {kind} of the deleted text" for kind in ("number", "name") if kind in kinds]
        rare = kinds.count("rare word")
        if rare >= RARE_PER_ITEM or (rare and reasons):
            reasons.append(f"{rare} rare word{'s' if rare > 1 else ''} of the deleted text")
        if pk in similarity:
            reasons.append(f"similar in meaning ({similarity[pk]:.2f}) to a deleted item")
        return reasons

    flagged = {pk: reasons for pk in sorted(set(held) | set(similarity)) if (reasons := why(pk))}
    ranked = sorted(flagged, key=lambda pk: (-len(flagged[pk]), -similarity.get(pk, 0.0), pk))
    shown = ranked[:LIMIT]
    rows = {
        pk: (kind, conversation, content)
        for pk, kind, conversation, content in Node.objects.filter(pk__in=shown).values_list(
            "pk", "kind", "message__conversation_id", "content"
        )
    }
    spans = _spans(contents={pk: rows[pk][2] for pk in rows}, held={pk: held.get(pk, set()) for pk in rows})
    items = []
    for pk in sorted(rows):
        entry = {
            "id": pk,
            "kind": rows[pk][0],
            "conversation": rows[pk][1],
            "why": flagged[pk],
            "spans": spans.get(pk, []),
        }
        if pk in similarity:
            entry["similarity"] = similarity[pk]
        items.append(entry)
    titles = residue_titles(user=user, query=_or_query(sorted(distinctive))) if distinctive and only is None else []
    return {"items": items, "more": len(ranked) - len(shown), "titles": sorted(titles), "distinctive": distinctive}
