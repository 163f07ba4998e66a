"""Score the forget resolver under several settings of its constants, on the request sets that may be looked at."""

from __future__ import annotations

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.intents.report import HELD_OUT, INDEPENDENT, LOOKED_AT, independent_rows
from evaluation.resolution import conversation_resolution_evaluate


class Command(BaseCommand):
    help = ("Resolve every request of the independent sets under each --set of the resolver's constants (the "
            "statements stored once a set, each text embedded once) and print right-item and other-item counts.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--set", action="append", default=[], metavar="JSON", dest="overrides",
                            help='overrides of provenance.forgetting.resolution, e.g. \'{"MATCH_GAP": 0.04}\'; '
                                 "repeat it; the shipped settings are always scored first")
        parser.add_argument("--sets", default=None, metavar="NAMES",
                            help="comma-separated independent sets (default: those that may be looked at)")
        parser.add_argument("--held-out", action="store_true",
                            help="also allow the sets kept for scoring only (score a choice there once, never tune)")
        parser.add_argument("--out", default=str(Path(settings.BASE_DIR) / "reports" / "resolution_sweep.json"))

    def handle(self, *args, **options) -> None:
        try:
            runs = [{}] + [json.loads(text) for text in options["overrides"]]
        except json.JSONDecodeError as exc:
            raise CommandError(f"--set is not JSON: {exc}") from exc
        if not all(isinstance(run, dict) for run in runs):
            raise CommandError("--set takes a JSON object of setting names and values")
        names = options["sets"].split(",") if options["sets"] else list(LOOKED_AT)
        unknown = [name for name in names if name not in INDEPENDENT]
        if unknown:
            raise CommandError(f"no such set: {', '.join(unknown)}")
        held = [name for name in names if name in HELD_OUT]
        if held and not options["held_out"]:
            raise CommandError(f"{', '.join(held)} are kept for scoring only; add --held-out to score a choice there")
        totals = [{"requests": 0, "right": 0, "other": 0} for _ in runs]
        per_set = {}
        for name in names:
            try:
                results = conversation_resolution_evaluate(independent_rows(INDEPENDENT[name]), settings=runs)
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
            per_set[name] = results
            counts = []
            for total, found in zip(totals, results, strict=True):
                n = found["all"]["requests"]
                right, other = round(found["all"]["right_item_rate"] * n), round(found["all"]["other_item_rate"] * n)
                total["requests"] += n
                total["right"] += right
                total["other"] += other
                counts.append(f"{right}/{other}")
            self.stdout.write(f"{name}: right/other of {n}: {'  '.join(counts)}")
        for run, total in zip(runs, totals, strict=True):
            self.stdout.write(f"{json.dumps(run)}: right {total['right']} and other {total['other']} of "
                              f"{total['requests']}")
        out = Path(options["out"])
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"settings": runs, "totals": totals, "sets": per_set}, indent=1) + "\n")
