"""Per-system results: the scores of one system on one dataset, with counts, causes and examples."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from dellm_site.ai.text import is_question

from ..metrics import Verdict, contains, rouge_l_recall
from ..systems import SEMANTIC, Answered, Outcome

METRICS = ("containment", "rouge_l", "judge")
CONTRACT_KEYS = (
    "forget_before",
    "forget_after",
    "retain_before",
    "retain_after",
    "residual_hits",
    "deleted_messages",
    "collateral_deleted",
    "metric",
)
EXAMPLES = 5
CONTROL = "dellm_without_deletion"


def _percent(values: list[float]) -> float | None:
    return round(100.0 * sum(values) / len(values), 2) if values else None


def _scores(outcomes: list[Outcome], score: Callable[[Answered], float]) -> dict:
    out = {}
    for phase in ("before", "after"):
        for kind, forget in (("forget", True), ("retain", False)):
            values = [score(a) for o in outcomes for a in getattr(o, phase) if a.qa.forget == forget]
            out[f"{kind}_{phase}"] = _percent(values)
    return out


def system_result(*, outcomes: list[Outcome], metric: str, judge: Callable[..., Verdict] | None = None) -> dict:
    """One system on one dataset, as the report's per-system dict.

    The headline keys (``CONTRACT_KEYS``: forget/retain before/after in ``metric``, residual hits,
    deleted and collateral messages, the metric used), plus every metric, counts, timings, notes and a
    few examples of leaks and losses.
    """
    per_metric = {
        "containment": _scores(outcomes, lambda a: float(contains(a.qa.answer, a.reply))),
        "rouge_l": _scores(outcomes, lambda a: rouge_l_recall(a.qa.answer, a.reply)),
        "judge": None,
    }
    unparsed = 0
    if judge is not None:

        def judged(a):
            nonlocal unparsed
            verdict = judge(question=a.qa.question, gold=a.qa.answer, reply=a.reply)
            unparsed += 0 if verdict.parsed else 1
            return float(verdict.correct)

        per_metric["judge"] = _scores(outcomes, judged)
    headline = per_metric[metric] if per_metric.get(metric) is not None else per_metric["containment"]
    used = metric if per_metric.get(metric) is not None else "containment"
    deleted_items, counters = Counter(), Counter()
    notes: list[str] = []
    for o in outcomes:
        deleted_items.update(o.deleted_items)
        counters.update(o.extra)
        notes.extend(o.notes)
    leaks = [
        {"question": a.qa.question, "gold": a.qa.answer, "reply": a.reply}
        for o in outcomes
        for a in o.after
        if a.qa.forget and contains(a.qa.answer, a.reply)
    ]
    lost = [
        {"question": a.qa.question, "gold": a.qa.answer, "before": b.reply, "after": a.reply}
        for o in outcomes
        for b, a in zip(o.before, o.after, strict=True)
        if not a.qa.forget and contains(a.qa.answer, b.reply) and not contains(a.qa.answer, a.reply)
    ]
    causes = Counter()
    for o in outcomes:
        for b, a in zip(o.before, o.after, strict=True):
            if a.qa.forget or not contains(a.qa.answer, b.reply) or contains(a.qa.answer, a.reply) or not a.info:
                continue
            if a.info.get("fact_survives") is False:
                causes["source_statement_deleted"] += 1
            elif a.info["gold_in_context"]:
                causes["answer_in_context_not_quoted"] += 1
            elif a.info["context_items"] and a.info["context_questions"] == a.info["context_items"]:
                causes["answer_not_retrieved_context_all_earlier_questions"] += 1
            elif a.info["context_questions"]:
                causes["answer_not_retrieved_earlier_questions_in_context"] += 1
            else:
                causes["answer_not_retrieved"] += 1
    collateral_matched = [c for o in outcomes for c in o.collateral_matched]
    blasts = [o.blast_radius for o in outcomes if o.blast_radius is not None]
    deletions = counters.get("requests_confirmed", 0)
    matched_by = Counter(f"{c['reason']}: {_item_kind(c)}" for c in collateral_matched)
    return {
        **headline,
        "residual_hits": sum(o.residual_hits for o in outcomes),
        "deleted_messages": sum(o.deleted_messages for o in outcomes),
        "collateral_deleted": sum(o.collateral_deleted for o in outcomes),
        "metric": used,
        "containment": per_metric["containment"],
        "rouge_l": per_metric["rouge_l"],
        "judge": per_metric["judge"],
        "judge_unparsed": unparsed if judge is not None else None,
        "questions": {
            "forget": sum(1 for o in outcomes for a in o.after if a.qa.forget),
            "retain": sum(1 for o in outcomes for a in o.after if not a.qa.forget),
        },
        "episodes": len(outcomes),
        "deleted_items": dict(sorted(deleted_items.items())),
        "collateral_items": sum(o.collateral_items for o in outcomes),
        "collateral_indirect": sum(o.collateral_indirect for o in outcomes),
        "blast_radius": sum(blasts) if blasts else None,
        "blast_radius_per_deletion": round(sum(blasts) / deletions, 2) if blasts and deletions else None,
        "episodes_with_residuals": sum(1 for o in outcomes if o.residual_hits),
        "counters": dict(sorted(counters.items())),
        "wall_s": round(sum(o.seconds for o in outcomes), 2),
        "forget_after_hits": len(leaks),
        "retain_lost": len(lost),
        "retain_lost_causes": dict(sorted(causes.items())),
        "collateral_matched": dict(sorted(matched_by.items())),
        "examples": {
            "forget_after_hits": leaks[:EXAMPLES],
            "retain_lost": lost[:EXAMPLES],
            "collateral_matched": collateral_matched[:EXAMPLES],
            "blast_radius": [e for o in outcomes for e in o.blast_examples][:EXAMPLES],
        },
        "notes": notes[:20],
    }


# Why a retain answer given before was lost after, in words (the keys of retain_lost_causes).
CAUSES = {
    "source_statement_deleted": "the statement holding the answer was deleted",
    "answer_in_context_not_quoted": "the answer was in the context but the LLM did not give it",
    "answer_not_retrieved_context_all_earlier_questions": "the answer was not retrieved: every context slot "
    "went to an earlier question (questions hold no facts)",
    "answer_not_retrieved_earlier_questions_in_context": "the answer was not retrieved; earlier questions took "
    "some context slots",
    "answer_not_retrieved": "the answer was not retrieved",
}


def _item_kind(entry: dict) -> str:
    """'user question', 'user statement', 'reply', 'fact', 'summary' for a matched item."""
    if entry.get("kind") not in (None, "message"):
        return str(entry["kind"])
    if entry.get("role") == "assistant":
        return "reply"
    return "user question" if is_question(entry.get("excerpt") or "") else "user statement"


def semantic_results(results: dict) -> dict[str, dict]:
    """The semantic_deletion@T entries of one dataset's results."""
    return {name: r for name, r in results.items() if name.startswith(SEMANTIC + "@")}
