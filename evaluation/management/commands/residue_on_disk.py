"""Count the copies of forgotten text left in the database's files and WAL (see evaluation.disk_residue).

Run it on an embedded server of its own, so no other activity moves the numbers:
    DELLM_DATA_DIR=$(mktemp -d) DJANGO_DEBUG=1 python manage.py migrate
    DELLM_DATA_DIR=<same> DJANGO_DEBUG=1 python manage.py residue_on_disk --writes 50 --vacuum-full [--uncompressed]
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from dellm_site.errors import ApplicationError
from evaluation.disk_residue import residue_measure


class Command(BaseCommand):
    help = "Store a marker, forget it, and count its copies in table/index files and pg_wal over further writes."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--rounds", type=int, default=3, help="rounds of further turns after the forget")
        parser.add_argument("--writes", type=int, default=50, help="turns per round")
        parser.add_argument("--vacuum-full", action="store_true", help="finally VACUUM FULL the app's tables")
        parser.add_argument(
            "--uncompressed",
            action="store_true",
            help="store text/JSON uncompressed during the run, so copies in large values are seen (throwaway DB only)",
        )

    def handle(self, *args, rounds: int, writes: int, vacuum_full: bool, uncompressed: bool, **options) -> None:
        try:
            counts = residue_measure(rounds=rounds, writes=writes, vacuum_full=vacuum_full, uncompressed=uncompressed)
        except ApplicationError as exc:
            raise CommandError(exc.detail) from exc
        self.stdout.write(f"{'stage':<32} {'tables':>6} {'toast':>6} {'indexes':>7} {'wal':>5} {'wal files':>9}")
        for count in counts:
            kinds = count.by_kind
            self.stdout.write(
                f"{count.stage:<32} {kinds['table']:>6} {kinds['toast']:>6} {kinds['index']:>7} "
                f"{count.wal:>5} {count.wal_files:>9}"
            )
        for count in counts:
            where = ", ".join(f"{name}: {n}" for name, n in sorted(count.relations.items()))
            self.stdout.write(f"  {count.stage}: {where or 'none'}")
