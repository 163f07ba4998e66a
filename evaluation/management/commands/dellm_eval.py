"""The deletion benchmark: the paper's tables and Figure 8, on the persona facts and TOFU.

Writes reports/eval.json (per dataset and system: forget and retain scores before and after the
deletion, residual hits, deleted and collateral messages, and more; then the targets, PASS or MISS),
reports/eval.md (the same as tables, with the protocol) and reports/eval_fig8.png (forget-after
against retain-after). Run it through `make eval`, which points it at a database of its own
(dellm_eval): it creates one user per episode and deletes it afterwards.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.datasets import DEFAULT_TOFU_RETAIN, data_dir, personas_load, slice_parse, tofu_load
from evaluation.intents.report import intents_report
from evaluation.report import METRICS
from evaluation.runner import evaluate


class Command(BaseCommand):
    """``manage.py dellm_eval``: load the datasets, run the systems, print the targets."""

    help = "Run the deletion benchmark and write reports/eval.json, eval.md and eval_fig8.png."

    def add_arguments(self, parser: CommandParser) -> None:
        """The datasets, the systems, the metric and the output folder."""
        parser.add_argument(
            "--dataset",
            choices=["personas", "tofu", "all"],
            default=None,
            help="which shared dataset to run (default: all, or none when --dataset-file is given)",
        )
        parser.add_argument(
            "--dataset-file",
            action="append",
            default=[],
            metavar="PATH",
            help="a file in the personas JSONL format, reported under its file name (repeatable)",
        )
        parser.add_argument(
            "--data-dir",
            default=None,
            help="the shared data folder (default: $DELLM_EVAL_DATA_DIR, else ../shared/data)",
        )
        parser.add_argument("--limit", type=int, default=None, help="first N personas / first N TOFU forget facts")
        parser.add_argument(
            "--tofu-retain-slice",
            default="{}:{}".format(*DEFAULT_TOFU_RETAIN),
            help="TOFU retain facts, as START:END into full (default: %(default)s)",
        )
        parser.add_argument(
            "--systems",
            default=None,
            help="comma list (default: all): no_memory, full_memory, semantic_deletion@T, dellm",
        )
        parser.add_argument("--metric", choices=METRICS, default="containment", help="headline metric")
        parser.add_argument(
            "--semantic-query",
            choices=["target", "request"],
            default="target",
            help="semantic deletion compares the history with what the request names (default) "
            "or with the whole request",
        )
        parser.add_argument(
            "--control",
            action="store_true",
            help="also run dellm without the deletion requests (questions asked twice), timed apart",
        )
        parser.add_argument("--no-judge", action="store_true", help="skip the LLM judge even with a real LLM")
        parser.add_argument("--no-embedding-cache", action="store_true", help="embed every repeated text again")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")
        parser.add_argument("--out", default=str(Path(settings.BASE_DIR) / "reports"), help="output folder")
        parser.add_argument("--intents", action="store_true", help="only score the deletion-request detector "
                            "(reports/intents.json, intents.md)")
        parser.add_argument("--intent-sets", default=None, metavar="NAMES",
                            help="with --intents: only these sets, comma-separated (heldout, train, handwritten, "
                            "personas, tofu, independent_<x>); the report then holds only them")

    def handle(self, *args: Any, **options: Any) -> None:
        """Load the selected datasets, run the benchmark and print each target's result (or, with
        --intents, evaluate how requests to forget are recognised and resolved)."""
        if options["intents"]:
            folder = data_dir(options["data_dir"])
            only = tuple(n.strip() for n in options["intent_sets"].split(",") if n.strip()) \
                if options["intent_sets"] else None
            try:
                report = intents_report(out=Path(options["out"]), personas=folder / "personas" / "personas_dev.jsonl",
                                        tofu=folder / "tofu", log=self.stdout.write, only=only)
            except ValueError as error:
                raise CommandError(str(error)) from error
            self.stdout.write(f"wrote {', '.join(report['files'])} in {report['wall_s']:.0f} s")
            return
        if options["limit"] is not None and options["limit"] < 1:
            raise CommandError("--limit must be 1 or more.")
        folder = data_dir(options["data_dir"])
        choice = options["dataset"] or ("all" if not options["dataset_file"] else None)
        datasets = []
        if choice in ("personas", "all"):
            datasets.append(
                personas_load(path=folder / "personas" / "personas_dev.jsonl", name="personas", limit=options["limit"])
            )
        if choice in ("tofu", "all"):
            retain = slice_parse(options["tofu_retain_slice"])
            datasets.append(tofu_load(folder=folder / "tofu", limit=options["limit"], retain=retain))
            self.stdout.write(f"TOFU: forget01 + retain slice full[{retain[0]}:{retain[1]}]")
        for raw in options["dataset_file"]:
            path = Path(raw).expanduser()
            datasets.append(personas_load(path=path, name=path.name, limit=options["limit"]))
        names = [d.name for d in datasets]
        if len(set(names)) != len(names):
            raise CommandError(f"Two datasets would be reported under the same name: {names}.")
        report = evaluate(
            datasets=datasets,
            systems=options["systems"],
            out=Path(options["out"]),
            command=self._command(options),
            metric=options["metric"],
            semantic_query=options["semantic_query"],
            use_judge=not options["no_judge"],
            progress=not options["no_progress"],
            cache_embeddings=not options["no_embedding_cache"],
            control=options["control"],
            log=lambda text: self.stdout.write(text),
        )
        for target in report["targets"]:
            mark = self.style.SUCCESS("PASS") if target["passed"] else self.style.WARNING("MISS")
            self.stdout.write(f"{mark} {target['dataset']}: {target['target']} ({target['value']})")
        self.stdout.write(f"wrote {', '.join(report['files'].values())} in {report['wall_s']:.0f} s")

    @staticmethod
    def _command(options: dict) -> str:
        parts = ["python", "manage.py", "dellm_eval"]
        defaults = {
            "tofu_retain_slice": "{}:{}".format(*DEFAULT_TOFU_RETAIN),
            "metric": "containment",
            "semantic_query": "target",
        }
        for key in ("dataset", "data_dir", "limit", "tofu_retain_slice", "systems", "metric", "semantic_query", "out"):
            value = options.get(key)
            if (
                value is None
                or defaults.get(key) == value
                or (key == "out" and value == str(Path(settings.BASE_DIR) / "reports"))
            ):
                continue
            parts += [f"--{key.replace('_', '-')}", str(value)]
        for raw in options.get("dataset_file") or []:
            parts += ["--dataset-file", raw]
        for flag in ("control", "no_judge", "no_embedding_cache", "no_progress"):
            if options.get(flag):
                parts.append(f"--{flag.replace('_', '-')}")
        return shlex.join(parts)
