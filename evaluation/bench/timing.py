"""Runs, percentiles and the shape of one benchmark entry in bench.json."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable


def run_ms(fn: Callable[[], object]) -> tuple[float, object]:
    """One timed call: (milliseconds, its result)."""
    started = time.perf_counter()
    result = fn()
    return (time.perf_counter() - started) * 1000, result


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank percentile (q in 0..100) of ``values``."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def summary(values: list[float]) -> dict:
    """p50, p95 and the number of runs, rounded for the report."""
    return {"p50": round(statistics.median(values), 2), "p95": round(percentile(values, 95), 2), "runs": len(values)}


def entry(
    runs: list[float], *, stat: str, params: dict, baseline: list[float] | None = None, unit: str = "ms",
    baseline_is: str | None = None,
) -> dict:
    """A bench.json entry whose value is the ``stat`` ("p50" or "p95") of ``runs``; with ``baseline`` runs
    (measured side by side), the baseline's same statistic and the ratio baseline / value."""
    ours = summary(runs)
    out = {"value": ours[stat], "unit": unit, "p50": ours["p50"], "p95": ours["p95"], "runs": ours["runs"]}
    if baseline:
        theirs = summary(baseline)
        out["baseline"] = theirs[stat]
        out["ratio"] = round(theirs[stat] / ours[stat], 2) if ours[stat] else None
        params = {**params, "baseline_p50": theirs["p50"], "baseline_p95": theirs["p95"]}
        params["baseline_runs"] = theirs["runs"]
        if baseline_is:
            params["baseline"] = baseline_is
    out["params"] = params
    return out
