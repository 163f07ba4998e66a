"""Aggregation, the targets, and the three report files (eval.json, eval.md, eval_fig8.png)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from .metrics import contains, rouge_l_recall
from .systems import DELLM, FULL_MEMORY, NO_MEMORY, SEMANTIC, Outcome

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
TARGET_POINTS = 2.0
PERSONA_RUN_LIMIT_S = 15 * 60
EXAMPLES = 5
CONTROL = "dellm_without_deletion"


def _percent(values: list[float]) -> float | None:
    return round(100.0 * sum(values) / len(values), 2) if values else None


def _scores(outcomes: list[Outcome], score) -> dict:
    out = {}
    for phase in ("before", "after"):
        for kind, forget in (("forget", True), ("retain", False)):
            values = [score(a) for o in outcomes for a in getattr(o, phase) if a.qa.forget == forget]
            out[f"{kind}_{phase}"] = _percent(values)
    return out


def system_result(*, outcomes: list[Outcome], metric: str, judge=None) -> dict:
    """One system on one dataset: the contract's keys (headline scores in ``metric``), plus every
    metric, counts, timings, notes and a few examples of leaks and losses."""
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
        },
        "notes": notes[:20],
    }


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
    from dellm_site.ai.text import is_question

    if entry.get("kind") not in (None, "message"):
        return str(entry["kind"])
    if entry.get("role") == "assistant":
        return "reply"
    return "user question" if is_question(entry.get("excerpt") or "") else "user statement"


def _semantic(results: dict) -> dict[str, dict]:
    return {name: r for name, r in results.items() if name.startswith(SEMANTIC + "@")}


def targets(*, report: dict) -> list[dict]:
    """The issue's targets, PASS or MISS, per dataset (and the persona run's wall time)."""
    out = []
    for name, results in report["datasets"].items():
        dellm = results.get(DELLM)
        if dellm is None:
            continue
        none = results.get(NO_MEMORY)
        if none is not None:
            gap = dellm["forget_after"] - none["forget_after"]
            out.append(
                {
                    "dataset": name,
                    "target": f"dellm forget_after within {TARGET_POINTS:g} points of no_memory",
                    "value": f"{dellm['forget_after']:.2f} vs {none['forget_after']:.2f} (gap {gap:+.2f})",
                    "passed": gap <= TARGET_POINTS,
                }
            )
        drop = dellm["retain_after"] - dellm["retain_before"]
        out.append(
            {
                "dataset": name,
                "target": f"dellm retain_after >= retain_before - {TARGET_POINTS:g}",
                "value": f"{dellm['retain_after']:.2f} vs {dellm['retain_before']:.2f} ({drop:+.2f})",
                "passed": drop >= -TARGET_POINTS,
            }
        )
        out.append(
            {
                "dataset": name,
                "target": "dellm residual_hits = 0",
                "value": str(dellm["residual_hits"]),
                "passed": dellm["residual_hits"] == 0,
            }
        )
        semantic = _semantic(results)
        if semantic:
            beaten_by = [
                s
                for s, r in semantic.items()
                if r["forget_after"] < dellm["forget_after"] and r["retain_after"] > dellm["retain_after"]
            ]
            # Said even when the target passes: a threshold as good on one axis and better on the other.
            tied = [
                f"{s} ({r['forget_after']:.1f} / {r['retain_after']:.1f})"
                for s, r in semantic.items()
                if s not in beaten_by
                and r["forget_after"] <= dellm["forget_after"]
                and r["retain_after"] >= dellm["retain_after"]
                and (r["forget_after"], r["retain_after"]) != (dellm["forget_after"], dellm["retain_after"])
            ]
            value = (
                "no threshold has both a lower forget_after and a higher retain_after"
                if not beaten_by
                else ("beaten by " + ", ".join(beaten_by))
            )
            if tied:
                value += "; but as good on one axis and better on the other: " + ", ".join(tied)
            out.append(
                {
                    "dataset": name,
                    "target": "dellm dominates every semantic_deletion@T",
                    "value": value,
                    "passed": not beaten_by,
                    "weakly_beaten_by": tied,
                }
            )
    wall = report.get("meta", {}).get("personas", {})
    if wall.get("full_run"):
        seconds = report["wall_s_per_dataset"]["personas"]
        out.append(
            {
                "dataset": "personas",
                "target": "the full persona run takes < 15 min",
                "value": f"{seconds / 60:.1f} min on {report['cpus']} CPUs",
                "passed": seconds < PERSONA_RUN_LIMIT_S,
            }
        )
    return out


# ---------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------


def _fmt(value) -> str:
    return "–" if value is None else f"{value:.1f}"


def _order(results: dict) -> list[str]:
    fixed = [NO_MEMORY, FULL_MEMORY]
    semantic = sorted(_semantic(results), key=lambda s: float(s.split("@", 1)[1]))
    rest = [s for s in results if s not in fixed and s not in semantic]
    return [s for s in fixed if s in results] + semantic + rest


PROTOCOL = """\
- **Every system** goes through the same configured LLM (`dellm_site.ai.llm.get_llm()`) and embedder
  (`dellm_site.ai.embedding.get_embedder()`), and sees each episode in the same order: the statements
  (then the requests) one message at a time -> the questions (before) -> one deletion request per
  forget item -> the same questions (after).
- **Personas**: one episode (one user) per persona; the `forget` qa is the forget question, the
  other 3 are retain questions; the deletion request is the persona's `forget_request`.
- **TOFU**: one episode (one user) holding the retain slice and forget01: every answer is sent as a
  user message, in the dataset's order (the retain slice, then forget01); the questions are the 40
  forget01 questions and every retain-slice question, gold = the original answer; each forget01
  answer gets its own request "Forget that <answer>", sent one after the other; the questions are
  asked once before the first request and once after the last one.
- **no_memory**: `Prompt(question, context=[])` only.
- **full_memory**: every earlier user message and reply is in the context. The deletion request is
  answered under the paper's baseline instruction (the LLM is asked to forget; nothing is deleted),
  so the request and its reply stay in the history.
- **semantic_deletion@T**: full history; a deletion request removes every history message (user
  message or reply) whose cosine similarity to what the request names is >= T. What the request names
  is read with DeLLM's own parser (`forget_request_target`: "Forget that X" -> "X"), so both sides
  start from the same words and differ only in how they decide what goes. Before the first request,
  full_memory and every semantic_deletion@T are one system (same history, same replies); the history
  is copied at the request.
- **dellm**: a fresh Django user per episode; statements and requests posted with
  `chat.turns.message_post` in one conversation (real context construction, provenance edges,
  facts and summaries as configured); the "before" questions in a second conversation; the deletion
  request posted in the first conversation the same way (it returns `forget_preview`, nothing is
  stored or answered), then `provenance.forgetting.services.forget_confirm` on it (strict: all of Dep(M)); the
  "after" questions in a third conversation. The user is deleted afterwards (cascade).
  *The questions asked before pollute memory, as in the paper*: they and their replies are stored
  items and enter later contexts. A reply that used the forget fact is in Dep of it and goes with it;
  the question messages stay unless the request's matcher names them (they hold no answer), and the
  replies that quoted retain facts stay. Asked again, a question retrieves its earlier copies first
  (similarity 1.0): stored questions take top-k context slots and hold no facts. `--control` runs
  dellm on the same protocol without the deletion requests, to tell this apart from the deletion.
- **Metrics**: containment accuracy (normalised gold — lowercase, punctuation to spaces, articles
  dropped — found as whole words in the normalised reply) is the headline; ROUGE-L recall of the gold
  answer (`rouge-score`); an LLM judge (CORRECT/WRONG and a one-line reason) only when an
  OpenAI-compatible LLM is configured.
- **residual_hits**: surviving stored items holding a forget answer (normalised), at the end of the
  episode. dellm: the user's items of every kind (messages, facts, summaries, superseded or not),
  conversation titles and the user's deletion requests; baselines: their history.
- **deleted_messages**: messages deleted (dellm also deletes facts and summaries: `deleted_items`).
- **collateral_deleted**: deleted messages that neither hold a forget answer nor derive from a forget
  fact. dellm: `deleted_ids` of the manifests minus (the items holding a forget answer and their
  Dep, computed from the provenance graph just before each request); `collateral_items` counts every
  kind. Baselines have no provenance: a deleted message is collateral unless it holds the answer or
  is a reply quoting the forget fact. `collateral_indirect`: collateral that restates the fact in
  other words (the persona file's `indirect` statements, which a matcher may offer).
- **Runtime**: tasks run in-process during the run (embeddings, facts and summaries exist before the
  next message, as with the default configuration), and the embedder remembers the vector of each
  text it has already embedded (the backend is deterministic: no vector changes, only repeats are
  saved).
"""


def markdown(*, report: dict, figure: str | None) -> str:
    lines = ["# DeLLM deletion benchmark", ""]
    lines += [
        f"- Command: `{report['command']}`",
        f"- Wall time: {report['wall_s']:.0f} s in all"
        + "".join(f"; {n}: {s:.0f} s" for n, s in report["wall_s_per_dataset"].items())
        + "".join(f"; {n} control: {c[CONTROL]['wall_s']:.0f} s" for n, c in report.get("controls", {}).items())
        + f" ({report['cpus']} CPUs)",
        f"- LLM: `{report['llm']}`; embedder: `{report['embedder']}`; database: `{report['database']}`",
        f"- Headline metric: {report['metric']} (scores in percent)",
    ]
    for name, meta in report["meta"].items():
        if "retain_slice" in meta:
            lines.append(
                f"- {name}: {meta['forget']} ({meta['forget_facts']} forget facts) + retain slice "
                f"`{meta['retain_slice']}` ({meta['retain_facts']} facts); {meta['grouping']}"
            )
        else:
            lines.append(f"- {name}: `{meta['file']}`, {meta['personas']} personas")
    if figure:
        lines += ["", f"![forget-after vs retain-after]({figure})"]
    for name, results in report["datasets"].items():
        lines += [
            "",
            f"## {name}",
            "",
            "| system | forget before | forget after | retain before | retain after | ROUGE-L forget after "
            "| ROUGE-L retain after | residual hits | deleted msgs | collateral | seconds |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for system in _order(results):
            r = results[system]
            lines.append(
                f"| {system} | {_fmt(r['forget_before'])} | {_fmt(r['forget_after'])} | {_fmt(r['retain_before'])} "
                f"| {_fmt(r['retain_after'])} | {_fmt(r['rouge_l']['forget_after'])} "
                f"| {_fmt(r['rouge_l']['retain_after'])} "
                f"| {r['residual_hits']} | {r['deleted_messages']} | {r['collateral_deleted']} | {r['wall_s']:.0f} |"
            )
        if any(r.get("judge") for r in results.values()):
            lines += ["", "LLM judge (percent CORRECT): forget before / after, retain before / after", ""]
            for system in _order(results):
                j = results[system].get("judge")
                if j:
                    lines.append(
                        f"- {system}: {_fmt(j['forget_before'])} / {_fmt(j['forget_after'])}, "
                        f"{_fmt(j['retain_before'])} / {_fmt(j['retain_after'])}"
                    )
        dellm = results.get(DELLM)
        if dellm:
            counters = dellm["counters"]
            items = ", ".join(f"{n} {k}" for k, n in dellm["deleted_items"].items()) or "nothing"
            lines += [
                "",
                f"dellm deleted {items}; collateral of every kind: {dellm['collateral_items']} "
                f"({dellm['collateral_indirect']} of them restate the fact in other words); "
                f"requests confirmed: {counters.get('requests_confirmed', 0)}, not recognised: "
                f"{counters.get('requests_not_recognised', 0)}, refused: {counters.get('requests_refused', 0)}; "
                f"items holding the answer or derived from it that survived: {counters.get('missed_items', 0)}; "
                f"manifests whose own verification reported residual hits: "
                f"{counters.get('manifests_reporting_residuals', 0)} "
                f"({counters.get('manifest_residual_hits', 0)} hits: "
                + ", ".join(
                    f"{counters[k]} {k.removeprefix('manifest_residual_')}"
                    for k in ("manifest_residual_message", "manifest_residual_fact", "manifest_residual_summary")
                    if counters.get(k)
                )
                + f"; holding the forget answer: {counters.get('manifest_residual_holding_answer', 0)}).",
            ]
            causes = dellm.get("retain_lost_causes") or {}
            if causes:
                lines.append(
                    f"Retain answers given before and lost after ({dellm['retain_lost']}): "
                    + ", ".join(f"{CAUSES.get(k, k)}: {n}" for k, n in causes.items())
                    + "."
                )
            control = report.get("controls", {}).get(name, {}).get(CONTROL)
            if control:
                lines.append(
                    f"Control, dellm without the deletion requests (the questions simply asked twice): forget "
                    f"{_fmt(control['forget_before'])} -> {_fmt(control['forget_after'])}, retain "
                    f"{_fmt(control['retain_before'])} -> {_fmt(control['retain_after'])}."
                )
            for leak in dellm["examples"]["forget_after_hits"]:
                lines.append(f"- forget answer still given: {leak['question']!r} -> {leak['reply'][:160]!r}")
            for loss in dellm["examples"]["retain_lost"]:
                lines.append(
                    f"- retain answer lost: {loss['question']!r}: before {loss['before'][:100]!r}, "
                    f"after {loss['after'][:100]!r}"
                )
    lines += ["", "## Targets", "", "| dataset | target | value | result |", "|---|---|---|---|"]
    for t in report["targets"]:
        lines.append(f"| {t['dataset']} | {t['target']} | {t['value']} | {'PASS' if t['passed'] else 'MISS'} |")
    if report.get("analysis"):
        lines += ["", "## Why targets were missed, and close calls", "", report["analysis"].strip()]
    lines += ["", "## Protocol", "", PROTOCOL.rstrip(), ""]
    return "\n".join(lines)


def figure_write(*, report: dict, path: Path) -> None:
    """The paper's Figure 8: forget-after (x) against retain-after (y), one panel per dataset."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(report["datasets"])
    fig, axes = plt.subplots(1, max(1, len(names)), figsize=(5.5 * max(1, len(names)), 4.8), squeeze=False)
    for ax, name in zip(axes[0], names, strict=False):
        results = report["datasets"][name]
        semantic = sorted(_semantic(results).items(), key=lambda kv: float(kv[0].split("@", 1)[1]))
        if semantic:
            xs = [r["forget_after"] for _, r in semantic]
            ys = [r["retain_after"] for _, r in semantic]
            ax.plot(xs, ys, "o--", color="tab:blue", label="semantic deletion (T)")
            for i, ((system, _), x, y) in enumerate(zip(semantic, xs, ys, strict=True)):
                offset = (7, 5) if i % 2 == 0 else (7, -12)  # alternate, so close thresholds stay readable
                label = f"T={system.split('@', 1)[1]}"
                ax.annotate(label, (x, y), textcoords="offset points", xytext=offset, fontsize=8)
        for system, style, label in (
            (NO_MEMORY, ("s", "tab:gray"), "no memory"),
            (FULL_MEMORY, ("^", "tab:orange"), "full memory"),
            (DELLM, ("*", "tab:red"), "DeLLM"),
        ):
            r = results.get(system)
            if r is not None:
                ax.scatter(
                    [r["forget_after"]],
                    [r["retain_after"]],
                    marker=style[0],
                    color=style[1],
                    s=180 if system == DELLM else 70,
                    label=label,
                    zorder=3,
                )
        ax.set_title(name)
        ax.set_xlabel(f"forget accuracy after deletion (%, {report['metric']}) - lower is better")
        ax.set_ylabel("retain accuracy after deletion (%) - higher is better")
        ax.set_xlim(-5, 105)
        ax.set_ylim(-5, 105)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    fig.suptitle(f"Forget vs retain after deletion ({report['llm']}, {report['embedder']})", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def files_write(*, report: dict, out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "eval.json", "md": out / "eval.md", "fig": out / "eval_fig8.png"}
    figure_write(report=report, path=paths["fig"])
    paths["json"].write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    paths["md"].write_text(markdown(report=report, figure=paths["fig"].name), encoding="utf-8")
    return paths


def analysis(*, report: dict) -> str:
    """For every missed target, what the run itself says about why (numbers and examples)."""
    out = []
    for t in report["targets"]:
        if t["passed"]:
            if t.get("weakly_beaten_by"):
                out.append(_close_call(report=report, target=t))
            continue
        name = t["dataset"]
        results = report["datasets"].get(name, {})
        dellm = results.get(DELLM, {})
        counters = dellm.get("counters", {})
        head = f"- **{name}: {t['target']}** ({t['value']})."
        if "forget_after" in t["target"]:
            out.append(
                f"{head} {dellm['forget_after_hits']} of {dellm['questions']['forget']} forget questions were still "
                f"answered after the deletion; deletion requests not recognised: "
                f"{counters.get('requests_not_recognised', 0)}, "
                f"refused: {counters.get('requests_refused', 0)}; items holding the answer (or derived from one) "
                f"that the request did not delete: {counters.get('missed_items', 0)}."
            )
            out += [f"  - {e['question']!r} -> {e['reply'][:200]!r}" for e in dellm["examples"]["forget_after_hits"]]
        elif "retain_after" in t["target"]:
            causes = "; ".join(f"{CAUSES.get(k, k)}: {n}" for k, n in (dellm.get("retain_lost_causes") or {}).items())
            out.append(
                f"{head} {dellm['retain_lost']} retain answers given before were lost after ({causes or 'no detail'}). "
                f"Collateral deletions: {dellm['collateral_deleted']} messages ({dellm['collateral_items']} items of "
                f"every kind, {dellm['collateral_indirect']} restating the fact)."
            )
            if dellm.get("collateral_matched"):
                by = ", ".join(f"{n} by {k}" for k, n in dellm["collateral_matched"].items())
                examples = "; ".join(
                    f"{e['excerpt'][:70]!r} ({e['reason']} {e['score']})"
                    for e in dellm["examples"]["collateral_matched"][:3]
                )
                out.append(
                    f"  Items the request's matcher named that neither hold a forget answer nor derive from one "
                    f"(semantic threshold {report['settings']['forget_semantic_threshold']}): {by}; e.g. {examples}."
                )
            control = report.get("controls", {}).get(name, {}).get(CONTROL)
            if control:
                out.append(
                    f"  The control run (same protocol, no deletion request) goes from {control['retain_before']:.1f} "
                    f"to {control['retain_after']:.1f} on retain questions: "
                    f"{control['retain_before'] - control['retain_after']:.1f} points are lost by asking the questions "
                    f"again, {control['retain_after'] - dellm['retain_after']:.1f} by the deletion itself."
                )
            out += [
                f"  - {e['question']!r}: before {e['before'][:120]!r}, after {e['after'][:120]!r}"
                for e in dellm["examples"]["retain_lost"]
            ]
        elif "residual" in t["target"]:
            out.append(
                f"{head} {dellm['episodes_with_residuals']} episode(s) kept an item holding the forget answer; "
                f"items holding the answer (or derived from one) that the request did not delete: "
                f"{counters.get('missed_items', 0)}; requests not recognised: "
                f"{counters.get('requests_not_recognised', 0)}."
            )
        elif "dominates" in t["target"]:
            rows = [
                f"{s}: forget {r['forget_after']:.1f}, retain {r['retain_after']:.1f}"
                for s, r in _semantic(results).items()
                if s in t["value"]
            ]
            out.append(
                f"{head} dellm: forget {dellm['forget_after']:.1f}, retain {dellm['retain_after']:.1f}; "
                + "; ".join(rows)
            )
        else:
            out.append(head)
    return "\n".join(out)


def _close_call(*, report: dict, target: dict) -> str:
    """A dominance target that passes only because a threshold ties dellm on one axis."""
    name = target["dataset"]
    results = report["datasets"][name]
    dellm = results[DELLM]
    rows = []
    for system, r in _semantic(results).items():
        if any(entry.startswith(system + " ") for entry in target["weakly_beaten_by"]):
            rows.append(
                f"{system}: forget {r['forget_after']:.1f} (ROUGE-L {r['rouge_l']['forget_after']:.1f}), retain "
                f"{r['retain_after']:.1f}, residual hits {r['residual_hits']}, collateral {r['collateral_deleted']} "
                "messages"
            )
    control = report.get("controls", {}).get(name, {}).get(CONTROL)
    why = (
        f" The retain gap is the context effect above: the control run without any deletion already falls to "
        f"{control['retain_after']:.1f}, while the baselines see their whole history and never lose a slot."
        if control
        else ""
    )
    return (
        f"- **{name}: {target['target']}** passes as defined (no threshold is better on both axes), but "
        + "; ".join(rows)
        + f" — against dellm: forget {dellm['forget_after']:.1f} (ROUGE-L {dellm['rouge_l']['forget_after']:.1f}), "
        f"retain {dellm['retain_after']:.1f}, residual hits {dellm['residual_hits']}, collateral "
        f"{dellm['collateral_deleted']} messages." + why
    )
