"""What the test OpenAI-compatible server answers: its reply to a chat, its vectors, its recorded calls.

The server itself is in ``openai_stub_server``; the fixture and its knobs in ``openai_stub``.
"""

from __future__ import annotations

import hashlib
import re
from typing import NamedTuple

STUB_API_KEY = "sk-stub-0123456789"
REPLY_PREFIX = "STUB saw: "
ITEM_LINE = re.compile(r"^\[\d+\] (.*)$")


class Call(NamedTuple):
    method: str
    path: str
    authorization: str | None
    body: dict


def text_of(content) -> str:
    """The text of a message's ``content``: a string, or a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def stub_reply(messages: list[dict]) -> str:
    """The stub's default reply to a chat request with these ``messages`` (see the module docstring)."""
    user_texts = [text_of(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    text = user_texts[-1] if user_texts else ""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    reply = REPLY_PREFIX + (lines[-1] if lines else "")
    items = [match.group(1) for line in lines if (match := ITEM_LINE.match(line))]
    if items:
        reply += " | past items: " + " ; ".join(items)
    return reply


def stub_vector(text: str, dimensions: int) -> list[float]:
    """A deterministic, not normalised vector for ``text``: floats in [-1, 1) from SHA-256 blocks."""
    values: list[float] = []
    counter = 0
    while len(values) < dimensions:
        block = hashlib.sha256(f"{counter}:{text}".encode()).digest()
        values.extend((b - 128) / 128.0 for b in block)
        counter += 1
    return values[:dimensions]


def pieces(text: str) -> list[str]:
    """The reply cut into words, each with the whitespace that follows it; they join back to ``text``."""
    return [piece for piece in re.findall(r"\S*\s*", text) if piece] or [text]


def words(text: str) -> int:
    return len(text.split())
