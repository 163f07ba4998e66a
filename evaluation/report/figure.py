"""The eval_fig8.png figure: the paper's Figure 8."""

from __future__ import annotations

from pathlib import Path

from ..systems import DELLM, FULL_MEMORY, NO_MEMORY
from .results import semantic_results


def figure_write(*, report: dict, path: Path) -> None:
    """The paper's Figure 8: forget-after (x) against retain-after (y), one panel per dataset."""
    # matplotlib is slow to import and needs its backend chosen before pyplot loads: only here.
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(report["datasets"])
    fig, axes = plt.subplots(1, max(1, len(names)), figsize=(5.5 * max(1, len(names)), 4.8), squeeze=False)
    for ax, name in zip(axes[0], names, strict=False):
        results = report["datasets"][name]
        semantic = sorted(semantic_results(results).items(), key=lambda kv: float(kv[0].split("@", 1)[1]))
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


