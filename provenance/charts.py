"""The review desk's chart, drawn on the server with matplotlib as inline SVG: each outcome has its own hatch
as well as its own shade, and the bars carry their counts, so the chart reads without colour."""

from __future__ import annotations

import io

import matplotlib as mpl
from matplotlib.figure import Figure

# Shade and hatch per outcome: greys and patterns, so print and colour-blind readers tell them apart.
STYLE = {
    "completed": ("#d9d9d9", ""),
    "residual hits": ("#8c8c8c", "xx"),
    "rebuild failed": ("#4d4d4d", "\\\\"),
    "rebuild pending": ("#bfbfbf", ".."),
    "in progress": ("#f0f0f0", "--"),
    "stuck": ("#262626", "//"),
    "expired": ("#ffffff", "oo"),
}


def requests_chart_svg(*, buckets: list[str], series: dict[str, list[int]], title: str) -> str:
    """Stacked bars of deletion requests per period and outcome, as an ``<svg>`` element."""
    figure = Figure(figsize=(8, 3.2), dpi=96)
    axes = figure.subplots()
    bottom = [0] * len(buckets)
    for outcome, counts in series.items():
        face, hatch = STYLE[outcome]
        bars = axes.bar(buckets, counts, bottom=bottom, label=outcome, color=face, hatch=hatch, edgecolor="black")
        axes.bar_label(bars, labels=[str(c) if c else "" for c in counts], label_type="center", fontsize=8,
                       bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "linewidth": 0})
        bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
    axes.set_title(title)
    axes.set_ylabel("deletion requests")
    axes.yaxis.get_major_locator().set_params(integer=True)
    axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8, frameon=False)
    axes.tick_params(axis="x", labelrotation=30, labelsize=8)
    figure.tight_layout()
    out = io.StringIO()
    with mpl.rc_context({"svg.fonttype": "none", "hatch.linewidth": 0.6}):
        figure.savefig(out, format="svg")
    text = out.getvalue()
    return text[text.index("<svg"):]
