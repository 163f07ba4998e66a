"""The performance benchmarks (``manage.py dellm_bench``): the scale generator's histories are what the chat
would have written, and the quick scale runs end to end into bench.json, bench.md and the scaling plot."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from django.core.management import call_command

from evaluation.bench import scale_texts
from evaluation.bench.report import TARGETS, meets
from evaluation.bench.scale import SPECS, Anchors, History, history_generate, sigma_for
from evaluation.bench.timing import entry, percentile
from memory.information import holds_information

SCALE_NAMES = [
    "dep_plan_p95_ms", "forget_preview_p95_ms", "forget_confirm_p50_ms", "retrieval_heavy_user_p95_ms",
    "retrieval_many_users_p95_ms", "retrieval_recall_at_5", "context_tokens_ratio_full_memory_1k", "scale_load_s",
]


def _anchors(dimensions: int = 16) -> Anchors:
    """Random unit anchors in place of real embeddings (the generator's logic, without the model)."""
    rng = np.random.default_rng(0)

    def unit(n):
        v = rng.standard_normal((n, dimensions)).astype(np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    spec = SPECS["quick"]
    keyed, vectors, sigma = {}, {}, {}
    for t in range(spec.topics):
        for kind, templates in (("s", scale_texts.STATEMENTS), ("q", scale_texts.QUESTIONS)):
            for i in range(len(templates)):
                keyed[(t, kind, i)] = [f"{kind} {t} {i} {j}" for j in range(2)]
                vectors[(t, kind, i)] = unit(2)
                sigma[(t, kind, i)] = sigma_for(0.8, dimensions)
    fixed = dict(zip([scale_texts.ACK, scale_texts.NOTHING], unit(2), strict=True))
    return Anchors(keyed, vectors, sigma, fixed, sample_size=0, mean_cosine=0.8)


def test_noise_gives_the_cosine_asked_for():
    rng = np.random.default_rng(1)
    v = rng.standard_normal(384)
    v /= np.linalg.norm(v)
    noisy = v + sigma_for(0.75, 384) * rng.standard_normal((2000, 384))
    cosines = noisy @ v / np.linalg.norm(noisy, axis=1)
    assert abs(cosines.mean() - 0.75) < 0.02


def test_history_is_what_the_chat_would_record():
    h = history_generate(spec=SPECS["quick"], anchors=_anchors(), items=2_000, seed=3)
    assert 2_000 <= len(h.kinds) <= 2_003
    assert all(src < dst for src, dst in h.edges)  # context comes from earlier items only
    assert len(set(h.edges)) == len(h.edges)
    sources: dict[int, set[int]] = {}
    for src, dst in h.edges:
        sources.setdefault(dst, set()).add(src)
    for i, kind in enumerate(h.kinds):
        assert h.informative[i] == holds_information(kind=kind, role=h.roles[i], text=h.contents[i])
        if h.roles[i] == "assistant":
            assert h.question[i] in sources[i]  # the question is always in its reply's context
            assert all(h.informative[s] or s == h.question[i] for s in sources[i])
        if kind == "fact":
            assert len(sources[i]) == 1 and h.roles[next(iter(sources[i]))] == "user"
        if kind == "summary":
            assert all(h.conversation[s] == h.conversation[i] and h.roles[s] == "user" for s in sources[i])
        if h.roles[i] == "user":
            assert i not in sources  # nothing is given to the LLM for a user's own message
    assert any(not flag for flag in h.informative) and any(h.informative)
    assert all(abs(float(np.linalg.norm(v)) - 1) < 1e-4 for v in h.vectors)


def test_history_cut_keeps_exactly_the_messages_asked_for():
    h: History = history_generate(spec=SPECS["quick"], anchors=_anchors(), items=600, seed=4).cut_after_messages(300)
    assert sum(kind == "message" for kind in h.kinds) == 300
    assert all(dst < len(h.kinds) for _, dst in h.edges)
    assert len(h.times) == len(h.kinds) and max(h.conversation) < len(h.titles)


def test_entry_and_targets():
    made = entry([3.0, 1.0, 2.0, 10.0], stat="p95", baseline=[6.0, 20.0], params={})
    assert made["value"] == 10.0 and made["p50"] == 2.5 and made["baseline"] == 20.0 and made["ratio"] == 2.0
    assert percentile(list(range(1, 101)), 95) == 95
    assert meets("dep_plan_p95_ms", 19.9) and not meets("dep_plan_p95_ms", 20.1)
    assert meets("retrieval_recall_at_5", 0.96) and not meets("retrieval_recall_at_5", 0.9)
    assert meets("unknown_name", 1) is None


def test_texts_render_with_their_topic():
    text = scale_texts.render(scale_texts.STATEMENTS[0], scale_texts.TOPICS[0], random.Random(1))
    assert text.startswith("I go sailing with ") and holds_information(kind="message", role="user", text=text)
    question = scale_texts.render(scale_texts.QUESTIONS[1], scale_texts.TOPICS[0], random.Random(1))
    assert not holds_information(kind="message", role="user", text=question)


@pytest.mark.django_db
def test_quick_bench_writes_every_measurement(tmp_path):
    """The quick scale end to end (the one-user benchmarks are left out: this test's transaction is rolled
    back, so confirmations here run without their rebuilds and VACUUM, which wait for a commit; the live
    benchmarks start server processes of their own and are tested in test_bench_live)."""
    call_command("dellm_bench", "--quick", "--skip-one-user", "--no-live", "--out", str(tmp_path))
    results = json.loads((tmp_path / "bench.json").read_text())
    for name in SCALE_NAMES:
        assert isinstance(results[name]["value"], int | float), (name, results[name])
        assert "params" in results[name]
    for name in ("dep_plan_p95_ms", "forget_preview_p95_ms", "retrieval_heavy_user_p95_ms"):
        assert results[name]["p50"] <= results[name]["p95"] and results[name]["baseline"] > 0
    assert 0 <= results["retrieval_recall_at_5"]["value"] <= 1
    assert results["context_tokens_ratio_full_memory_1k"]["params"]["messages"] == 1000
    curve = results["scaling_curve"]["params"]
    assert len(curve["items"]) == len(SPECS["quick"].curve) and curve["items"] == sorted(curve["items"])
    assert all(isinstance(v, int | float) for k in ("retrieval_p95_ms", "preview_p95_ms", "confirm_p50_ms",
                                                    "turn_overhead_p50_ms") for v in curve[k])
    assert curve["turn_overhead"] == "measured"
    load = results["scale_load_s"]["params"]
    assert load["messages"] > 15_000 and load["edges"] > load["nodes"]
    markdown = (tmp_path / "bench.md").read_text()
    assert all(f"| {name} |" in markdown for name in TARGETS if name in results)
    assert (tmp_path / "bench_scaling.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
