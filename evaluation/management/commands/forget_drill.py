"""``manage.py forget_drill``: seed a synthetic person through every way in, forget them, and fail on any trace."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.drill import drill_run


class Command(BaseCommand):
    help = (
        "Seed a synthetic person over REST, the websocket and /v1, forget them through the front door, then search "
        "every store and read path; exits non-zero on any trace."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        """A seed for the person and account names, and whether to keep the account afterwards."""
        parser.add_argument("--seed", type=int, default=None, help="random seed (default: a fresh person each run)")
        parser.add_argument("--keep", action="store_true", help="keep the drill's account (default: delete it)")

    def handle(self, *args: Any, seed: int | None, keep: bool, **options: Any) -> None:
        """Run the drill, print what it seeded, did and searched; raise on a trace."""
        report = drill_run(seed=seed, keep=keep, log=self.stdout.write)
        missing = [where for where, present in report.seeded.items() if not present]
        if missing:
            raise CommandError(f"the drill could not seed: {', '.join(missing)}")
        if report.traces:
            raise CommandError(f"{len(report.traces)} trace(s) of the forgotten person survive")
        self.stdout.write(self.style.SUCCESS(f"no trace in {len(report.checked)} places"))
