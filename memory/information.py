"""Whether a stored item holds information: the one rule that decides which items may fill a context slot.

It is decided once, when the item is stored (``Node.informative``). A user message that only asks (a
question, a request for help) and a reply that only acknowledges, says nothing was found or asks back
hold no fact for a later message, so they never compete for the top-k context slots; they stay in the
history and in the provenance graph like every other item. Facts and summaries always hold information.

The rule leans towards keeping an item: a sentence counts as empty only when it plainly is.
"""

from __future__ import annotations

import re

from dellm_site.ai.text import SENTENCE_END, is_question

# A clause boundary inside a reply's sentence: "Good to know, I'll keep that in mind", "Got it - you ...".
_CLAUSES = re.compile(r"[;,]\s+|\s+[-\u2013\u2014]\s+")

# Words that open a sentence without saying anything: "OK, ...", "Thanks! ...", "Hi there, ...".
_LEAD = re.compile(
    r"^(?:ok(?:ay)?|sure|yes|yeah|yep|yup|no|nope|right|alright|all right|great|cool|nice|perfect|awesome|"
    r"wonderful|lovely|fantastic|excellent|thanks?|thank you(?: (?:so|very) much)?|thx|cheers|got it|noted|"
    r"understood|of course|certainly|absolutely|indeed|(?:hi|hello|hey|hiya)(?: there)?|"
    r"good (?:morning|afternoon|evening)|lol|haha+|hm+|oh|ah|wow|well|but|and|so|anyway|unfortunately|"
    r"sorry|i'm sorry|i am sorry|please|pls)\b[\s,.!:;\u2014\u2013-]*",
    re.IGNORECASE,
)

# What a sentence of a user's message is when it only asks for something (imperative requests).
_REQUEST = re.compile(
    r"^(?:(?:can|could|would|will) you\s+)?(?:give|tell|show|plan|suggest|recommend|help|find|list|explain|"
    r"describe|write|draft|create|translate|summari[sz]e|compare|check|calculate|teach|brainstorm|outline|"
    r"propose|generate|let me know)\b",
    re.IGNORECASE,
)
# A statement carried inside a question or request: "..., I'm lactose intolerant", "remember that my PIN is 4471".
_EMBEDDED = re.compile(
    r"(?:,|\b(?:because|since|as|given that|now that|and|but|so|although|though|while|when|that|remember|note|know|"
    r"mind))\s+(?:i'm|i've|i'd|i am|i was|i have|i \w+|my \w+(?: \w+)? (?:is|are|was|were|has|have|had)\b)",
    re.IGNORECASE,
)

# A reply that only acknowledges ("Noted, I will remember that.", "Got it!", "Thanks for sharing.").
_PRAISE = r"(?:great|good|nice|wonderful|lovely|amazing|awesome|fantastic|interesting|exciting|cool|fun|helpful)"
_ACKNOWLEDGES = re.compile(
    r"^(?:i(?:'ll| will| shall)? (?:remember|keep|note|make a note of|store|save) (?:that|this|it)(?: in mind)?"
    r"(?: for (?:you|later|next time))?|"
    rf"(?:that's|that is|it's|it is|sounds|how|what an?) (?:so |really |very )?{_PRAISE}(?: to (?:know|hear))?|"
    r"good to (?:know|hear)|glad to hear(?: that| it)?|"
    r"(?:thanks? (?:you )?)?for (?:sharing|telling me|letting me know)(?: that| this)?|"
    r"(?:i )?(?:see|understand)|makes sense|will do|done|no problem)$",
    re.IGNORECASE,
)
# A reply that says nothing was found ("I don't have anything in my memory about that.").
_NOTHING_FOUND = re.compile(
    r"^(?:i (?:do not|don't|did not|didn't|cannot|can't|could not|couldn't) (?:have|find|recall|remember|know|see|"
    r"seem to (?:have|find|recall|remember))|i have no (?:information|record|memory|details|data|idea)|"
    r"i(?:'m| am) (?:not sure|unable|afraid i)|you (?:have not|haven't|did not|didn't|never) (?:told|mentioned|"
    r"shared|said)|there(?:'s| is) nothing|nothing (?:in my memory|i know)|no information)\b",
    re.IGNORECASE,
)
# A reply's offer or question back ("Let me know if ...", "Anything else?").
_OFFER = re.compile(r"^(?:let me know|feel free|if you (?:want|need|like)|anything else|is there anything)\b", re.I)


def _parts(text: str, *, clauses: bool) -> list[str]:
    """The sentences (or clauses) of ``text``, each without the words that open it without saying anything."""
    out = []
    for sentence in SENTENCE_END.split(text or ""):
        for part in _CLAUSES.split(sentence) if clauses else [sentence]:
            part = part.strip().strip("\"'\u201c\u201d()")
            previous = None
            while part != previous:
                previous, part = part, _LEAD.sub("", part, count=1).strip()
            if re.search(r"\w", part):
                out.append(part)
    return out


def _asks(sentence: str) -> bool:
    return is_question(sentence) or bool(_REQUEST.match(sentence))


# A statement the question follows: "my uncle runs a hawala business, is that legal?", "My PAN is X - can you ...?"
_STATED_FIRST = re.compile(
    r"^(?:i|i'm|im|i've|ive|i'd|i was|my|we|we're|we've|our|me and|mine)\b[^,;?]*?(?:,|;|\s[-\u2013\u2014]+)\s+\S",
    re.IGNORECASE,
)


_QUESTION_WORD = re.compile(r"\b(?:who|whom|whose|what|when|where|which|why|how|if|whether)\b", re.IGNORECASE)


def _user_sentence_informs(sentence: str) -> bool:
    if not _asks(sentence) or _EMBEDDED.search(sentence):
        return True
    first = re.split(r",|;|\s[-\u2013\u2014]+\s", sentence, maxsplit=1)[0]
    if first == sentence or _asks(first):
        return False
    if _STATED_FIRST.match(sentence):
        return len(first.split()) >= 3  # "I wonder, what ...?" states nothing
    # A long opening clause with no question word in it states something, in any language ("debo 8 mil pesos a
    # una app de préstamos y están llamando a mis contactos, es legal eso?"); "In what genre does she write, and
    # ...?" asks.
    return len(first.split()) >= 6 and not _QUESTION_WORD.search(first)


def _reply_clause_informs(clause: str) -> bool:
    bare = clause.rstrip(" .!?\u2026")
    if _ACKNOWLEDGES.match(bare) or _NOTHING_FOUND.match(clause) or _OFFER.match(clause):
        return False
    return not clause.rstrip().endswith("?")


def holds_information(*, kind: str, role: str | None, text: str) -> bool:
    """Whether an item may fill a context slot: it says something a later message may need.

    A user message holds information when a clause of it states something (not only a question or a
    request, unless a statement is carried inside it); a reply when a clause of it is neither an
    acknowledgement, nor "nothing found", nor an offer or a question back; facts and summaries always.
    """
    if kind != "message":
        return True
    if role == "assistant":
        return any(_reply_clause_informs(clause) for clause in _parts(text, clauses=True))
    return any(_user_sentence_informs(sentence) for sentence in _parts(text, clauses=False))


def only_states(text: str) -> bool:
    """A user message that states something and asks nothing ("I have a tortoise."): it needs only the
    items about the same thing as its context, not the best of everything else."""
    sentences = _parts(text, clauses=False)
    return bool(sentences) and not any(_asks(sentence) for sentence in sentences)
