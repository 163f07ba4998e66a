"""The benchmark's targets, PASS or MISS per dataset, and what the run says about each miss."""

from __future__ import annotations

from ..systems import DELLM, NO_MEMORY
from .results import CAUSES, CONTROL, semantic_results

TARGET_POINTS = 2.0  # how far dellm may fall behind no_memory, or below its own retain score
PERSONA_RUN_LIMIT_S = 15 * 60


def targets(*, report: dict) -> list[dict]:
    """The benchmark's targets, PASS or MISS, per dataset (and the persona run's wall time)."""
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
        semantic = semantic_results(results)
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
                    f"(resolution {report['settings'].get('forget_resolution')}): {by}; e.g. {examples}."
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
                for s, r in semantic_results(results).items()
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
    for system, r in semantic_results(results).items():
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
