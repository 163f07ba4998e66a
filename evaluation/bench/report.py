"""bench.json, bench.md (a table of every benchmark with its target, baseline and ratio) and the scaling plot."""

from __future__ import annotations

import json
from pathlib import Path

# The targets the scale benchmarks are held to: (comparison, bound).
TARGETS = {
    "dep_plan_p95_ms": ("<=", 20),
    "forget_preview_p95_ms": ("<=", 150),
    "forget_confirm_p50_ms": ("<=", 1000),
    "retrieval_heavy_user_p95_ms": ("<=", 15),
    "retrieval_many_users_p95_ms": ("<=", 15),
    "retrieval_recall_at_5": (">=", 0.95),
    "context_tokens_ratio_full_memory_1k": (">=", 50),
    "turn_overhead_p50_ms": ("<=", 40),
    "ws_turns_per_s": (">=", 30),
    "first_turn_after_start_ms": ("<=", 1000),
}
PLOT = "bench_scaling.png"


def meets(name: str, value) -> bool | None:
    """Whether ``value`` meets the target of ``name`` (None: no target, or no value)."""
    if name not in TARGETS or not isinstance(value, int | float):
        return None
    op, bound = TARGETS[name]
    return value <= bound if op == "<=" else value >= bound


def scaling_plot(curve: dict, path: Path) -> None:
    """Latency against history size, log-log: retrieval (and its exact scan), preview, confirm, turn overhead."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    items = curve["items"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    series = [
        ("retrieval_p95_ms", "retrieval p95", "o-"),
        ("retrieval_exact_p95_ms", "retrieval p95, exact scan (baseline)", "o:"),
        ("preview_p95_ms", "forget preview p95 (~100 items)", "s-"),
        ("confirm_p50_ms", "forget confirm p50 (~100 items)", "^-"),
        ("turn_overhead_p50_ms", "turn overhead p50", "d-"),
    ]
    for key, label, style in series:
        points = [(x, y) for x, y in zip(items, curve.get(key, []), strict=False) if y]
        if points:
            ax.plot(*zip(*points, strict=True), style, label=label)
    first = next((y for y in curve.get("preview_p95_ms", []) if y), None)
    if first:
        ax.plot([items[0], items[-1]], [first, first * items[-1] / items[0]], color="grey", linewidth=0.8,
                linestyle="--", label="linear growth (from preview's first point)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("items in the user's history")
    ax.set_ylabel("milliseconds")
    ax.set_title("DeLLM latency against history size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _cell(value) -> str:
    return "" if value is None else str(value)


def reports_write(*, results: dict, out: Path, header: list[str]) -> str:
    """Write bench.json, bench.md and (with a scaling curve) bench_scaling.png; returns the markdown."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(results, indent=2, default=str))
    lines = ["# DeLLM benchmarks", "", *header, "", "| name | value | p50 | p95 | target | met | baseline | ratio |",
             "|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        if name == "scaling_curve":
            continue
        target = " ".join(map(str, TARGETS[name])) if name in TARGETS else ""
        ok = meets(name, r.get("value"))
        lines.append(
            f"| {name} | {_cell(r.get('value'))} {r.get('unit', '')} | {_cell(r.get('p50'))} | {_cell(r.get('p95'))} "
            f"| {target} | {'' if ok is None else ('yes' if ok else 'no')} | {_cell(r.get('baseline'))} "
            f"| {_cell(r.get('ratio'))} |"
        )
    curve = results.get("scaling_curve", {}).get("params")
    if curve:
        scaling_plot(curve, out / PLOT)
        lines += ["", "## Scaling with history size", "", f"![latency against history size]({PLOT})", "",
                  "| items | retrieval p95 ms | exact scan p95 ms | preview p95 ms | confirm p50 ms "
                  "| turn overhead p50 ms |",
                  "|---|---|---|---|---|---|"]
        for i, items in enumerate(curve["items"]):
            keys = ("retrieval_p95_ms", "retrieval_exact_p95_ms", "preview_p95_ms", "confirm_p50_ms",
                    "turn_overhead_p50_ms")
            row = [curve[k][i] if i < len(curve[k]) else None for k in keys]  # a retrieval-only run: no others
            lines.append(f"| {items} | " + " | ".join(_cell(v) for v in row) + " |")
    text = "\n".join(lines) + "\n"
    (out / "bench.md").write_text(text)
    return text
