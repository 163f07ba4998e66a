"""Run the selected systems on the selected datasets and write the reports."""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError
from django.db import connection
from tqdm import tqdm

from dellm_site.ai.embedding import Embedder, get_embedder
from dellm_site.ai.llm import get_llm
from dellm_site.celery import app as celery_app
from provenance.forgetting.resolution import MATCH_FLOOR, MATCH_MARGIN

from .datasets import Dataset
from .metrics import judge_for
from .report import CONTROL, METRICS, files_write, system_result
from .report.targets import analysis, targets
from .systems import (
    DEFAULT_THRESHOLDS,
    DELLM,
    FULL_MEMORY,
    NO_MEMORY,
    SEMANTIC,
    Baselines,
    DeLLMRunner,
    embedding_cache,
    eval_users_remove,
    semantic_name,
)

ALL_SYSTEMS = [NO_MEMORY, FULL_MEMORY, *(semantic_name(t) for t in DEFAULT_THRESHOLDS), DELLM]


def systems_parse(text: str | None) -> tuple[list[str], list[float]]:
    """'no_memory,semantic_deletion@0.4,dellm' -> (names in report order, thresholds).

    'semantic_deletion' alone means every default threshold; no text means every system.
    """
    if not text:
        return list(ALL_SYSTEMS), list(DEFAULT_THRESHOLDS)
    names, thresholds = [], []
    for raw in (part.strip() for part in text.split(",")):
        if not raw:
            continue
        if raw == SEMANTIC:
            thresholds += list(DEFAULT_THRESHOLDS)
        elif raw.startswith(SEMANTIC + "@"):
            try:
                value = float(raw.split("@", 1)[1])
            except ValueError:
                raise CommandError(f"Unknown system {raw!r}: the threshold must be a number.") from None
            if not 0.0 < value <= 1.0:
                raise CommandError(f"Unknown system {raw!r}: the threshold must be in (0, 1].")
            thresholds.append(value)
        elif raw in (NO_MEMORY, FULL_MEMORY, DELLM):
            names.append(raw)
        else:
            raise CommandError(
                f"Unknown system {raw!r}; choose from {', '.join(ALL_SYSTEMS)} (or semantic_deletion@T for any T)."
            )
    thresholds = sorted(set(thresholds))
    ordered = [n for n in (NO_MEMORY, FULL_MEMORY) if n in names] + [semantic_name(t) for t in thresholds]
    ordered += [DELLM] if DELLM in names else []
    if not ordered:
        raise CommandError("--systems selects no system.")
    return ordered, thresholds


@contextmanager
def _in_process_tasks() -> Iterator[None]:
    """Run Celery tasks in-process (embeddings, facts, summaries exist before the next message),
    without their per-task log lines."""
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    loggers = [logging.getLogger(name) for name in ("celery", "celery.app.trace", "celery.worker")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        celery_app.conf.task_always_eager = eager
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _progress(total: int, description: str, enabled: bool) -> tqdm:
    return tqdm(total=total, desc=description, unit="msg", disable=not enabled, dynamic_ncols=True, leave=True)


def evaluate(
    *,
    datasets: list[Dataset],
    systems: str | None = None,
    out: Path,
    command: str,
    metric: str = "containment",
    semantic_query: str = "target",
    use_judge: bool = True,
    progress: bool = True,
    cache_embeddings: bool = True,
    control: bool = False,
    log: Callable[[str], None] = print,
) -> dict:
    """Run every selected system on every episode of every dataset; write and return the report."""
    names, thresholds = systems_parse(systems)
    if metric not in METRICS:
        raise CommandError(f"--metric must be one of {', '.join(METRICS)}.")
    llm, embedder = get_llm(), get_embedder()
    judge = judge_for(llm) if use_judge else None
    if metric == "judge" and judge is None:
        raise CommandError("--metric judge needs an OpenAI-compatible LLM (DELLM_LLM=openai).")
    baselines_wanted = [n for n in names if n != DELLM]
    started = time.monotonic()
    report = {
        "llm": getattr(llm, "name", type(llm).__name__),
        "embedder": getattr(embedder, "name", type(embedder).__name__),
        "command": command,
        "database": connection.settings_dict.get("NAME"),
        "metric": metric,
        "systems": names,
        "cpus": os.cpu_count(),
        "settings": {
            "context_top_k": settings.DELLM_CONTEXT_TOP_K,
            "context_min_similarity": settings.DELLM_CONTEXT_MIN_SIMILARITY,
            "forget_resolution": {"match_margin": MATCH_MARGIN, "match_floor": MATCH_FLOOR},
            "derived_memory": settings.DELLM_DERIVED_MEMORY,
            "semantic_query": semantic_query,
            "embedding_cache": cache_embeddings,
        },
        "datasets": {},
        "meta": {},
        "wall_s_per_dataset": {},
    }
    if DELLM in names:
        left = eval_users_remove()
        if left:
            log(f"removed {left} eval user(s) left behind by an interrupted run")
    with _in_process_tasks():
        for dataset in datasets:
            log(f"{dataset.name}: " + ", ".join(f"{k}={v}" for k, v in dataset.meta.items() if v is not None))
            dataset_started = time.monotonic()
            outcomes: dict[str, list] = {n: [] for n in names}
            baselines = Baselines(
                llm=llm,
                embedder=embedder,
                no_memory=NO_MEMORY in names,
                full_memory=FULL_MEMORY in names,
                thresholds=thresholds,
                semantic_query=semantic_query,
            )
            total = sum(
                (baselines.units(e) if baselines_wanted else 0) + (e.turns if DELLM in names else 0)
                for e in dataset.episodes
            )
            with _progress(total, dataset.name, progress) as bar, _cached(embedder, cache_embeddings):
                baselines.tick = bar.update
                dellm = DeLLMRunner(tick=bar.update)
                for episode in dataset.episodes:
                    if baselines_wanted:
                        for name, outcome in baselines.run(episode).items():
                            outcomes[name].append(outcome)
                    if DELLM in names:
                        outcomes[DELLM].append(dellm.run(episode))
            report["datasets"][dataset.name] = {
                name: system_result(outcomes=outcomes[name], metric=metric, judge=judge) for name in names
            }
            seconds = round(time.monotonic() - dataset_started, 1)
            report["wall_s_per_dataset"][dataset.name] = seconds
            report["meta"][dataset.name] = {**dataset.meta, "wall_s": seconds}
            log(f"{dataset.name}: done in {seconds:.0f} s")
            if control and DELLM in names:
                control_started = time.monotonic()
                total = sum(e.turns for e in dataset.episodes)
                with (
                    _progress(total, f"{dataset.name} (control)", progress) as bar,
                    _cached(embedder, cache_embeddings),
                ):
                    runner = DeLLMRunner(tick=bar.update, delete=False)
                    done = [runner.run(episode) for episode in dataset.episodes]
                result = system_result(outcomes=done, metric=metric, judge=judge)
                result["wall_s"] = round(time.monotonic() - control_started, 1)
                report.setdefault("controls", {})[dataset.name] = {CONTROL: result}
                log(f"{dataset.name}: control done in {result['wall_s']:.0f} s")
    report["wall_s"] = round(time.monotonic() - started, 1)
    if judge is not None:
        report["judge_calls"] = judge.calls
    report["targets"] = targets(report=report)
    report["analysis"] = analysis(report=report)
    paths = files_write(report=report, out=out)
    report["files"] = {k: str(v) for k, v in paths.items()}
    return report


@contextmanager
def _cached(embedder: Embedder, enabled: bool) -> Iterator[Counter | None]:
    if not enabled:
        yield None
        return
    with embedding_cache(embedder) as stats:
        yield stats
