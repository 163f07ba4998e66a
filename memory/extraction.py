"""When a message is worth a fact-extraction call: the rule lives here, not in an LLM backend."""

from __future__ import annotations

from dellm_site.ai.text import user_statements


def states_facts(text: str) -> bool:
    """True when ``text`` holds at least one first-person statement about the user; anything else
    (questions, small talk) is never sent for extraction, whichever LLM is configured."""
    return bool(user_statements(text))
