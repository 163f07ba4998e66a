"""Plain-text heuristics about what a user wrote: questions, first-person statements, the third person.

They need no model: the offline backend answers and extracts with them, and the memory app uses them to
skip fact extraction for messages that state nothing about the user.
"""

from __future__ import annotations

import re

_QUESTION_START = re.compile(
    r"^(who|whom|whose|what|when|where|which|why|how|do|does|did|is|are|am|was|were|can|could|"
    r"will|would|should|shall|have|has|had|may|might|tell me|remind me)\b",
    re.IGNORECASE,
)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[.!?][”\"])\s+|\n+")

# Without a question mark, a sentence opening with an auxiliary is a question only when its subject follows
# ("do I have a dog", "is my flight at 9"); otherwise it is a statement with its subject left out, as people
# write in notes: "Had a cocaine problem years ago.", "Was diagnosed in May.", "Have two cats."
_AUXILIARY = re.compile(
    r"^(?:do|does|did|is|are|am|was|were|can|could|will|would|should|shall|have|has|had|may|might)\s+(\S+)",
    re.IGNORECASE,
)
_SUBJECT = re.compile(
    r"^(?:i|you|u|he|she|it|we|they|my|your|his|her|its|our|their|this|that|these|those|there|someone|anyone|"
    r"anybody|somebody|everyone|everybody|nobody|no|any|some|all|each|every|one|[A-Z][\w'-]*)$"
)
# "is a tomato a fruit": after be, can and the like an article may open the subject; after have or do it
# opens an object ("Had a scare last year", "Did a marathon in May").
_ARTICLE_SUBJECT = re.compile(r"^(?:is|are|am|was|were|can|could|will|would|should|shall|may|might)$", re.I)


def is_question(text: str) -> bool:
    stripped = text.strip()
    if stripped.endswith("?"):
        return True
    if not _QUESTION_START.match(stripped):
        return False
    auxiliary = _AUXILIARY.match(stripped)
    if auxiliary is None:
        return True  # a question word ("what", "how", "tell me")
    following = auxiliary.group(1).strip(",.;:!\"'")
    if _SUBJECT.match(following) or _SUBJECT.match(following.lower()):
        return True
    return bool(_ARTICLE_SUBJECT.match(stripped.split()[0])) and following.lower() in ("a", "an", "the")


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


# A sentence addressed at the assistant's memory ("I don't want you to remember that ...", "I'd rather you
# didn't know ..."): a wish about what is kept, never a fact about the user.
_ABOUT_MEMORY = re.compile(
    r"\b(?:you|your)\b.*\b(?:remember\w*|forg[eo]t\w*|know\w*|stor\w+|keep\w*|kept|memor\w+|delet\w+|eras\w+|"
    r"remov\w+|wip\w+|record\w*|hold\w*|told|tell\w*)\b",
    re.IGNORECASE,
)


def about_memory(sentence: str) -> bool:
    """True when a sentence speaks to the assistant about what it remembers or should forget."""
    return bool(_ABOUT_MEMORY.search(sentence))


def user_statements(text: str) -> list[str]:
    """First-person statements in a user's message (the raw material of facts and summaries); wishes
    about the assistant's memory are not statements about the user and are left out."""
    out = []
    for part in SENTENCE_END.split(text or ""):
        sentence = part.strip()
        if len(sentence.split()) < 3 or is_question(sentence) or not _FIRST_PERSON.match(sentence):
            continue
        if about_memory(sentence):
            continue
        out.append(sentence if sentence[-1] in ".!" else sentence + ".")
    return out
