"""The deletion benchmark (``manage.py dellm_eval``): its metrics, and a small slice of both datasets
run end to end through the command, with the issue's targets checked on that slice."""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from dellm_site.ai.embedding import get_embedder
from dellm_site.ai.openai import OpenAILLM
from evaluation.datasets import QA, data_dir
from evaluation.metrics import Judge, Verdict, contains, normalise, rouge_l_recall, verdict_parse
from evaluation.report import CONTRACT_KEYS, system_result
from evaluation.runner import ALL_SYSTEMS, systems_parse
from evaluation.systems import Answered, Outcome, embedding_cache

DATA = data_dir()
HAVE_DATA = (DATA / "personas" / "personas_dev.jsonl").is_file() and (DATA / "tofu" / "tofu_full.json").is_file()


def _require_data(function):
    """The benchmark data must be there: a missing folder fails loudly (set DELLM_EVAL_DATA_DIR), never skips."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if not HAVE_DATA:
            pytest.fail(
                f"the shared benchmark data is not at {DATA}; set DELLM_EVAL_DATA_DIR (make test finds ../shared/data)"
            )
        return function(*args, **kwargs)

    return wrapper


needs_data = _require_data


# --- metrics --------------------------------------------------------------------------------------


def test_normalise_drops_case_punctuation_and_articles():
    assert normalise("The Lisbon-based, A  tortoise!") == "lisbon based tortoise"
    assert normalise("“Gluten-free”") == "gluten free"


@pytest.mark.parametrize(
    "gold, reply, expected",
    [
        ("Lisbon", "From what you told me: “I live in Lisbon.”", True),
        ("gluten-free", "I'm gluten free, so careful", True),
        ("37", "I was born in 1937.", False),  # whole words only
        ("37", "I'm 37 years old.", True),
        ("a small bakery", "My goal is to open the small bakery.", True),  # articles do not count
        ("Sheldon", "I don't have anything in my memory about that.", False),
        ("", "anything", False),
    ],
)
def test_containment(gold, reply, expected):
    assert contains(gold, reply) is expected


def test_rouge_l_recall_is_the_share_of_the_answer_in_order():
    assert rouge_l_recall("lactose intolerant", "I am lactose intolerant.") == 1.0
    assert rouge_l_recall("open a small bakery", "a bakery") == pytest.approx(0.5)
    assert rouge_l_recall("Sheldon", "nothing here") == 0.0


@pytest.mark.parametrize(
    "answer, correct, parsed, reason",
    [
        ("CORRECT\nThe reply names Lisbon.", True, True, "The reply names Lisbon."),
        ("WRONG: the reply says it does not know", False, True, "the reply says it does not know"),
        ("**Correct** - it says Lisbon", True, True, "it says Lisbon"),
        ("INCORRECT\nReason: wrong city", False, True, "wrong city"),
        ("Verdict: not correct, the pet is not named", False, True, "the pet is not named"),
        ("The answer is right.", False, False, "The answer is right."),
        ("", False, False, ""),
    ],
)
def test_judge_verdicts_are_parsed_robustly(answer, correct, parsed, reason):
    verdict = verdict_parse(answer)
    assert (verdict.correct, verdict.parsed, verdict.reason) == (correct, parsed, reason)


def test_judge_asks_the_openai_llm_once_per_distinct_reply(openai_stub):
    llm = OpenAILLM(
        model="stub-model", api_key=openai_stub.api_key, base_url=openai_stub.base_url, timeout=5, max_retries=0
    )
    judge = Judge(llm)
    openai_stub.reply = "CORRECT\nIt names Lisbon."
    first = judge(question="Which city?", gold="Lisbon", reply="You live in Lisbon.")
    again = judge(question="Which city?", gold="Lisbon", reply="You live in Lisbon.")
    assert first.correct and first.reason == "It names Lisbon." and again == first
    assert len(openai_stub.chat_requests) == 1
    prompt = openai_stub.chat_requests[0]["messages"][-1]["content"]
    assert "Gold answer: Lisbon" in prompt and "You live in Lisbon." in prompt and "CORRECT or WRONG" in prompt


def test_the_embedding_cache_changes_no_vector_and_is_removed_afterwards():
    embedder = get_embedder()
    texts = ["I live in Lisbon.", "Where do I live?", "I live in Lisbon."]
    plain = embedder.embed(texts)
    with embedding_cache(embedder) as stats:
        cached = embedder.embed(texts)
        again = embedder.embed_one("Where do I live?")
    assert np.allclose(plain, cached, atol=1e-5) and np.allclose(again, plain[1], atol=1e-5)
    assert stats["computed"] == 2 and stats["requested"] == 4
    assert "embed" not in vars(embedder)


def test_scores_per_system_with_a_judge():
    forget = QA(question="What is the pet's name?", answer="Sheldon", forget=True)
    retain = QA(question="Which city?", answer="Lisbon", forget=False)
    outcome = Outcome(
        before=[Answered(forget, "Your tortoise is Sheldon."), Answered(retain, "You live in Lisbon.")],
        after=[Answered(forget, "I don't know."), Answered(retain, "Lisbon, I think.")],
        residual_hits=0,
        deleted_messages=3,
    )
    asked = []

    def judge(*, question, gold, reply):
        asked.append(reply)
        return Verdict(correct=gold in reply, reason="", parsed=True)

    result = system_result(outcomes=[outcome], metric="judge", judge=judge)
    assert result["metric"] == "judge" and len(asked) == 4
    assert (result["forget_before"], result["forget_after"], result["retain_before"], result["retain_after"]) == (
        100.0,
        0.0,
        100.0,
        100.0,
    )
    assert result["containment"] == result["judge"] and result["rouge_l"]["forget_after"] == 0.0
    assert result["deleted_messages"] == 3 and result["questions"] == {"forget": 1, "retain": 1}


def test_systems_are_parsed_in_report_order():
    assert systems_parse(None)[0] == ALL_SYSTEMS
    names, thresholds = systems_parse("dellm, semantic_deletion@0.4,no_memory,semantic_deletion@0.1")
    assert names == ["no_memory", "semantic_deletion@0.1", "semantic_deletion@0.4", "dellm"]
    assert thresholds == [0.1, 0.4]
    with pytest.raises(CommandError):
        systems_parse("dellm,oracle")
    with pytest.raises(CommandError):
        systems_parse("semantic_deletion@1.5")


@pytest.mark.django_db
def test_a_missing_dataset_file_is_said_clearly(tmp_path):
    with pytest.raises(CommandError, match="missing.*nowhere.jsonl"):
        call_command("dellm_eval", "--dataset-file", str(tmp_path / "nowhere.jsonl"), "--out", str(tmp_path))


# --- a small slice end to end ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_run(tmp_path_factory, django_db_setup, django_db_blocker):
    """Three personas and a TOFU slice (3 forget facts, 20 retain facts), every system, run once."""
    out = tmp_path_factory.mktemp("eval")
    with django_db_blocker.unblock():
        call_command(
            "dellm_eval",
            "--limit",
            "3",
            "--tofu-retain-slice",
            "3560:3580",
            "--out",
            str(out),
            "--no-progress",
            "--control",
        )
    return out, json.loads((out / "eval.json").read_text())


@needs_data
@pytest.mark.django_db(transaction=True)
def test_the_three_files_follow_the_contract(small_run):
    out, report = small_run
    assert (out / "eval.md").read_text().startswith("# DeLLM deletion benchmark")
    assert (out / "eval_fig8.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert report["llm"] and report["embedder"]
    assert set(report["datasets"]) == {"personas", "tofu"}
    for results in report["datasets"].values():
        assert list(results) == ALL_SYSTEMS
        for system in results.values():
            assert set(CONTRACT_KEYS) <= set(system)
            assert system["metric"] == "containment"
            for key in ("forget_before", "forget_after", "retain_before", "retain_after"):
                assert 0.0 <= system[key] <= 100.0
    assert report["meta"]["tofu"]["retain_slice"] == "full[3560:3580]"
    md = (out / "eval.md").read_text()
    assert "## Targets" in md and "full[3560:3580]" in md and "| dellm |" in md


@needs_data
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("dataset", ["personas", "tofu"])
def test_dellm_forgets_like_no_memory_and_leaves_nothing(small_run, dataset):
    results = small_run[1]["datasets"][dataset]
    dellm, none = results["dellm"], results["no_memory"]
    assert dellm["forget_before"] > none["forget_before"]  # there was something to forget
    assert dellm["forget_after"] <= none["forget_after"] + 2
    assert dellm["residual_hits"] == 0
    assert results["full_memory"]["residual_hits"] > 0  # the instruction alone deletes nothing
    assert dellm["counters"]["requests_confirmed"] == dellm["questions"]["forget"]


@needs_data
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("dataset", ["personas", "tofu"])
def test_dellm_dominates_semantic_deletion(small_run, dataset):
    results = small_run[1]["datasets"][dataset]
    dellm = results["dellm"]
    for name, result in results.items():
        if name.startswith("semantic_deletion@"):
            assert not (
                result["forget_after"] < dellm["forget_after"] and result["retain_after"] > dellm["retain_after"]
            ), name


@needs_data
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("dataset", ["personas", "tofu"])
def test_the_deletion_itself_costs_no_retain_answers(small_run, dataset):
    """Against the control run (the same protocol without the deletion request), dellm answers
    the retain questions as well after the deletion: it deleted nothing they needed."""
    report = small_run[1]
    dellm = report["datasets"][dataset]["dellm"]
    control = report["controls"][dataset]["dellm_without_deletion"]
    assert dellm["retain_before"] == control["retain_before"]
    assert dellm["retain_after"] >= control["retain_after"] - 2
    assert dellm["retain_lost_causes"].get("source_statement_deleted", 0) == 0


@needs_data
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("dataset", ["personas", "tofu"])
def test_dellm_keeps_its_retain_score(small_run, dataset):
    """Asked again, a question no longer finds its own earlier copies first (questions hold no
    information and take no context slot), and a deletion takes no retain answer with it."""
    report = small_run[1]
    dellm = report["datasets"][dataset]["dellm"]
    control = report["controls"][dataset]["dellm_without_deletion"]
    assert control["retain_after"] >= control["retain_before"] - 1
    assert dellm["retain_after"] >= dellm["retain_before"] - 1
    assert dellm["retain_lost_causes"].get("answer_not_retrieved_context_all_earlier_questions", 0) == 0
    assert dellm["blast_radius"] is not None  # measured, beside collateral
