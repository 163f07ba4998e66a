"""``manage.py dellm_bench``: the performance benchmarks, written to reports/bench.json, bench.md and
bench_scaling.png. ``--scale full`` (the default; `make bench`) measures on a 1.1-million-item dataset,
``--quick`` (= ``--scale quick``) on a small one in under three minutes. See ``evaluation.bench``. The live
benchmarks (``evaluation.bench_live``: real server processes) run too, unless ``--no-live``; ``--only-live`` runs
just them and merges them into the bench.json already there.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from evaluation.bench.classic import classic_measure
from evaluation.bench.dataset import dataset_ready, dataset_release
from evaluation.bench.report import reports_write
from evaluation.bench.scale import SPECS
from evaluation.bench.scale_bench import scale_measure


class Command(BaseCommand):
    help = "Run the performance benchmarks and write reports/bench.json, bench.md and bench_scaling.png."

    def add_arguments(self, parser: CommandParser) -> None:
        """The scale, the first benchmarks' history size and runs, the output folder."""
        parser.add_argument("--scale", choices=sorted(SPECS), default="full", help="dataset size (default: full)")
        parser.add_argument("--quick", dest="scale", action="store_const", const="quick", help="= --scale quick")
        parser.add_argument("--messages", type=int, default=None,
                            help="history size of the one-user benchmarks (10,000; quick: 1,000)")
        parser.add_argument("--repeat", type=int, default=None, help="runs per one-user measurement (5; quick: 3)")
        parser.add_argument("--reload", action="store_true", help="load the full-scale dataset again")
        parser.add_argument("--skip-one-user", action="store_true", help="only the scale benchmarks")
        parser.add_argument("--only-retrieval", action="store_true",
                            help="of the scale benchmarks, only retrieval's (latency along the curve, recall)")
        parser.add_argument("--out", default=str(Path(settings.BASE_DIR) / "reports"))
        parser.add_argument("--no-live", dest="live", action="store_false", help="skip the live benchmarks")
        parser.add_argument("--only-live", action="store_true",
                            help="run only the live benchmarks, merged into the bench.json already there")

    def handle(self, *args: Any, scale: str, messages: int | None, repeat: int | None, reload: bool, out: str,
               skip_one_user: bool = False, **options: Any) -> None:
        """The one-user benchmarks, then the scale ones on their dataset; then the reports."""
        started = time.perf_counter()
        quick = scale == "quick"
        if options.get("only_live"):
            from evaluation.bench_live import live_benchmarks

            path = Path(out) / "bench.json"
            merged = json.loads(path.read_text()) if path.exists() else {}
            merged.update(live_benchmarks(quick=quick, log=self.stdout.write))
            self.stdout.write(reports_write(results=merged, out=Path(out), header=["Live benchmarks merged in."]))
            return
        spec = SPECS[scale]
        messages = messages or (1_000 if quick else 10_000)
        repeat = repeat or (3 if quick else 5)
        results: dict = {}
        params = {"messages": 0, "edges": 0}
        if not skip_one_user:
            self.stdout.write(f"one-user benchmarks ({messages} messages)...")
            results, params = classic_measure(messages=messages, repeat=repeat, stdout=self.stdout)
            self.stdout.write(f"  done in {time.perf_counter() - started:.0f} s")

        self.stdout.write(f"scale benchmarks ({scale})...")
        info = dataset_ready(spec=spec, reload=reload, in_place=quick, stdout=self.stdout)
        try:
            self.stdout.write(f"  dataset ready at {time.perf_counter() - started:.0f} s")
            results.update(scale_measure(spec=spec, quick=quick, stdout=self.stdout,
                                         only_retrieval=options.get("only_retrieval", False)))
            self.stdout.write(f"  measured at {time.perf_counter() - started:.0f} s")
        finally:
            dataset_release(info)
        if options.get("live", True):
            from evaluation.bench_live import live_benchmarks

            self.stdout.write("live benchmarks (server processes)...")
            results.update(live_benchmarks(quick=quick, log=self.stdout.write))
            self.stdout.write(f"  measured at {time.perf_counter() - started:.0f} s")
        load = info.load
        results["scale_load_s"] = {
            "value": load["seconds"]["total"], "unit": "s",
            "params": {"scale": scale, "reused_this_run": info.reused, "dataset": info.where,
                       "fingerprint": info.fingerprint, "copy_to_run_database_s": info.copy_seconds, **load},
        }
        elapsed = round(time.perf_counter() - started, 1)
        results["bench_wall_s"] = {"value": elapsed, "unit": "s", "params": {"scale": scale}}
        header = [
            f"One-user benchmarks: {params['messages']} messages, {params['edges']} edges, median of {repeat} runs.",
            f"Scale `{scale}`: {load['nodes']} items ({load['messages']} messages, {load['facts']} facts, "
            f"{load['summaries']} summaries) of {load['users']} users, {load['edges']} edges; loaded in "
            f"{load['seconds']['total']} s{' (reused this run)' if info.reused else ''}.",
            f"Whole run: {elapsed} s. Command: `make bench{' BENCH_ARGS=--quick' if quick else ''}`.",
        ]
        self.stdout.write(reports_write(results=results, out=Path(out), header=header))
