from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from provenance.forgetting import chain
from provenance.forgetting.audit import audit_chain_check, chain_key


class Command(BaseCommand):
    help = (
        "Re-check the audit log's keyed hash chain (or an export of it, --export FILE); names the first entry "
        "altered, removed or inserted and exits non-zero. --chain-key prints the key an auditor needs to verify "
        "an export offline (it reveals no pseudonym)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--export", type=Path, help="verify this CSV or JSON export instead of the database")
        parser.add_argument("--chain-key", action="store_true", help="print the chain key (hex) and exit")

    def handle(self, *args, **options):
        if options["chain_key"]:
            self.stdout.write(chain_key().hex())
            return
        if options["export"]:
            count, problem = chain.export_check(options["export"], chain_key())
        else:
            count, problem = audit_chain_check()
        if problem is not None:
            raise CommandError(f"audit log NOT intact after {count} entries: {problem}")
        self.stdout.write(f"audit log intact: {count} entries, chain verified")
