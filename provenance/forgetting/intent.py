"""Recognising a deletion request in a chat message (never sent to the LLM, never stored)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_REQUEST = re.compile(
    r"^\s*(?:(?:hey|ok|okay|please|pls|so|now|and)[\s,]+)*"
    r"(?:(?:can|could|would|will) you(?: please)?\s+|i (?:want|need) you to\s+|i'?d like you to\s+)?"
    r"(?P<verb>forget|delete|remove|erase|wipe|purge|unlearn|scrub|"
    r"(?:do not|don'?t|dont|stop) (?:remember(?:ing)?|keep(?:ing)?|stor(?:e|ing))|never mention)\b"
    r"(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_LEAD = re.compile(
    r"^(?:\s*(?:that|about|everything (?:about|on)|all (?:about|of)|anything (?:about|on)|all mentions of|"
    r"mentions of|any mention of|the fact that|what i (?:said|told you|wrote|mentioned) about|"
    r"what i (?:said|told you|wrote|mentioned)|(?:the )?messages? (?:about|saying|where i said)|"
    r"everything i (?:said|told you) about)\b[\s:,]*)+",
    re.IGNORECASE,
)
_TRAIL = re.compile(
    r"(?:[\s,]*(?:please|thanks|thank you|from (?:your|my) memory|from memory|for good|forever|"
    r"completely|entirely|permanently|right now|now))+[\s.!?]*$",
    re.IGNORECASE,
)
VAGUE = {"it", "this", "that", "them", "everything", "all", "something", "", "me"}


def forget_request_target(text: str) -> str | None:
    """If ``text`` asks the assistant to forget something, return what (else None).

    "Forget that I live in Lisbon." -> "I live in Lisbon"; "Please delete my address" -> "my address".
    """
    found = _REQUEST.match(text or "")
    if not found:
        return None
    target = _LEAD.sub("", found.group("rest").strip(" :,")).strip()
    target = _TRAIL.sub("", target).strip().strip("\"'“”‘’").rstrip(".!?").strip()
    return target


def is_vague(target: str) -> bool:
    """True when the request names nothing in particular ("forget it", "delete everything")."""
    return target.lower() in VAGUE


@dataclass(frozen=True)
class Intent:
    outcome: str  # "forget" (sure) | "ask" (unsure) | "none"
    confidence: float  # probability that the message asks to forget something
    targets: list[str]  # what it names, one entry per target


def intent_detect(text: str, *, vector=None) -> Intent:
    """Whether a chat message asks to forget something, how sure that is, and what it names."""
    target = forget_request_target(text)
    if target is None:
        return Intent(outcome="none", confidence=0.0, targets=[])
    return Intent(outcome="forget", confidence=1.0, targets=[t for t in target.split("; ") if t])
