"""The live benchmarks' in-process part: a turn's overhead through the real code path, with its stages."""

import pytest

from chat.models import Message, Role
from dellm_site.celery import app
from evaluation import bench_live

pytestmark = pytest.mark.django_db(transaction=True)


def test_turn_overhead_runs_real_turns_and_times_their_stages():
    entry = bench_live.turn_overhead(items=20, turns_count=4, log=lambda line: None)
    assert entry["unit"] == "ms" and entry["p50"] <= entry["p95"] and entry["params"]["runs"] == 4
    assert entry["params"]["history_items"] == 20
    stages = entry["params"]["stage_mean_ms"]
    assert {"embed question", "retrieve context", "record edges", "store reply (edges, queue tasks)"} <= set(stages)
    # Real turns: the warm-up, the four timed and the in-process ones each stored a question and its reply.
    asked = Message.objects.filter(owner__username="bench-live-turns", role=Role.USER).count()
    replies = Message.objects.filter(owner__username="bench-live-turns", role=Role.ASSISTANT).count()
    assert asked == replies == 10 + 1 + 4 + 3
    assert app.conf.task_always_eager  # tasks run in-process again afterwards


def test_entries_have_the_shape_of_bench_json():
    entry = bench_live._entry([3.0, 1.0, 2.0, 10.0], history_items=5)
    assert entry == {"value": 2.5, "unit": "ms", "p50": 2.5, "p95": 10.0, "params": {"runs": 4, "history_items": 5}}


def test_the_instant_llm_replies_without_embedding_and_extracts_as_the_offline_one(monkeypatch):
    from dellm_site.ai import local
    from dellm_site.ai.prompts import Prompt
    from evaluation.bench.instant import InstantLLM

    llm = InstantLLM()
    facts = llm.extract_facts("I live in Lisbon.")
    monkeypatch.setattr(local, "get_embedder", lambda: pytest.fail("the instant reply must not embed"))
    prompt = Prompt(question="Where do I live?", context=["I live in Lisbon."], remembered=True)
    assert "".join(llm.stream(prompt)) == local.ACKNOWLEDGEMENT
    assert facts == local.LocalLLM().extract_facts("I live in Lisbon.") and facts
