"""Turn overhead along the scaling curve: chat turns of a user of the scale dataset, timed as
``turn_overhead_p50_ms`` times them (``evaluation.bench_live.turn_overhead``): ``chat.turns.message_post`` with the
instant LLM, the turn's tasks queued, not run. Each user gets a conversation of its own for them; the messages stay
(the dataset is the run's copy), questions and statements alternating, about the topics the generator writes of.
"""

from __future__ import annotations

import time

from django.test.utils import override_settings

from chat import turns
from chat.models import Conversation

from ..bench_live import INSTANT_LLM, tasks_queued
from .scale_texts import CITIES, NAMES, TOPICS


def _text(i: int) -> str:
    topic, activity, thing = TOPICS[i % len(TOPICS)]
    if i % 2:
        return f"Who did I {activity} with in {CITIES[i % len(CITIES)]}, and what about my {thing}?"
    return f"I went to {CITIES[i % len(CITIES)]} with {NAMES[i % len(NAMES)]} to {activity} again ({topic}, day {i})."


def turn_overhead_runs(*, user, runs: int) -> list[float]:
    """``runs`` chat turns of ``user`` after one untimed one, each one's server time in ms."""
    conversation = Conversation.objects.create(owner=user, title="benchmark turns")
    out = []
    with override_settings(DELLM_LLM=INSTANT_LLM), tasks_queued():
        turns.message_post(user=user, conversation_id=conversation.pk, content=_text(runs))
        for i in range(runs):
            started = time.perf_counter()
            result = turns.message_post(user=user, conversation_id=conversation.pk, content=_text(i))
            out.append((time.perf_counter() - started) * 1000)
            assert result.reply is not None
    return out
