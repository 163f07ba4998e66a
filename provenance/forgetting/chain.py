"""The audit log's keyed hash chain, in the standard library only, so that an auditor can check an export
offline with this one file: ``python3 chain.py audit.json --key-file chain.key``.

Each entry carries two keyed hashes (HMAC-SHA256 under the chain key):

- ``chain_hash`` over the previous entry's ``chain_hash`` (``chain_prev``) and the entry's fixed fields, those
  written when the deletion starts. It links the entries in order, so an entry removed or inserted breaks it.
- ``seal`` over ``chain_hash`` and the fields completed later (status, counts, references, residual hits). It is
  recomputed when the pipeline completes the entry, without touching the links of the entries after it.

Without the key neither can be recomputed, so an entry changed, added or taken out by whoever can write to the
database shows up as the first entry whose hashes or links do not check.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import hmac
import json
import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

GENESIS = "0" * 64
FIXED = ("seq", "request_id", "requester_ref", "mode", "relaxation", "requested_at", "started_at", "planned_count")
STATE = ("status", "completed_at", "deleted", "item_refs", "residual_hits")
HASHES = ("chain_prev", "chain_hash", "seal")
COLUMNS = (*FIXED, *STATE, *HASHES)
JSON_COLUMNS = ("relaxation", "deleted", "item_refs")


def timestamp(value: datetime | None) -> str | None:
    """One spelling of a moment for hashing and export: ISO 8601 in UTC, microseconds included."""
    return None if value is None else value.astimezone(UTC).isoformat(timespec="microseconds")


def _canonical(fields: dict) -> bytes:
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _mac(key: bytes, *parts: bytes) -> str:
    return hmac.new(key, b"\x1f".join(parts), hashlib.sha256).hexdigest()


def link_hash(key: bytes, entry: dict) -> str:
    """The hash that chains ``entry`` (export-shaped: plain JSON values) to the one before it."""
    return _mac(key, b"link", entry["chain_prev"].encode(), _canonical({k: entry[k] for k in FIXED}))


def seal_hash(key: bytes, entry: dict) -> str:
    """The hash over an entry's link and its completed fields."""
    return _mac(key, b"seal", entry["chain_hash"].encode(), _canonical({k: entry[k] for k in STATE}))


@dataclass(frozen=True)
class Problem:
    """The first entry where the chain does not check: ``kind`` is altered, removed or inserted."""

    kind: str
    seq: int
    request_id: str | None
    detail: str

    def __str__(self) -> str:
        where = f"entry #{self.seq}" + (f" (request {self.request_id})" if self.request_id else "")
        return f"{self.kind}: {where}: {self.detail}"


def chain_check(entries: list[dict], key: bytes, *, from_genesis: bool = True) -> tuple[int, Problem | None]:
    """Check entries ordered by ``seq``; returns how many checked and the first problem, if any.
    ``from_genesis``: the entries are the whole log (the first must be #1 on the genesis hash); otherwise a
    contiguous range that starts wherever its first entry says (an export for some dates)."""
    if not entries:
        return 0, None
    expected_seq = 1 if from_genesis else entries[0]["seq"]
    prev = GENESIS if from_genesis else entries[0]["chain_prev"]
    for i, entry in enumerate(entries):
        seq, request_id = entry["seq"], entry.get("request_id")
        linked = link_hash(key, entry) == entry["chain_hash"]
        sealed = seal_hash(key, entry) == entry["seal"]
        after = entries[i + 1] if i + 1 < len(entries) else None
        skipped = after is not None and after["chain_prev"] == prev  # the next entry links past this one
        if seq != expected_seq:
            if seq > expected_seq and linked and entry["chain_prev"] != prev:
                missing = f"#{expected_seq}" if seq == expected_seq + 1 else f"#{expected_seq} to #{seq - 1}"
                return i, Problem("removed", expected_seq, None, f"{missing} missing before entry #{seq}")
            return i, Problem("inserted", seq, request_id, f"expected entry #{expected_seq} here")
        if not linked or entry["chain_prev"] != prev:
            if skipped or (after is None and not sealed):
                return i, Problem("inserted", seq, request_id, "its hash is not one the server wrote")
            return i, Problem("altered", seq, request_id, "a field fixed at the start no longer matches its hash")
        if not sealed:
            return i, Problem("altered", seq, request_id, "a completed field no longer matches its seal")
        prev, expected_seq = entry["chain_hash"], seq + 1
    return len(entries), None


def export_seal(key: bytes, *, first: int | None, last: int | None, count: int, head: str) -> str:
    """Seals an export's extent, so that entries cut from its start or end show too."""
    return _mac(key, b"export", _canonical({"first": first, "last": last, "count": count, "head": head}))


def read_export(path: Path) -> tuple[list[dict], dict | None]:
    """The entries of a JSON or CSV export, and the JSON export's extent (``None`` for CSV)."""
    if path.suffix.lower() == ".csv":
        with path.open(newline="") as handle:
            rows = list(csv.DictReader(handle))
        entries = []
        for row in rows:
            entry: dict = {k: (row[k] if row[k] != "" else None) for k in COLUMNS}
            for k in JSON_COLUMNS:
                entry[k] = json.loads(row[k])
            for k in ("seq", "planned_count", "residual_hits"):
                entry[k] = None if entry[k] is None else int(entry[k])
            entries.append(entry)
        return entries, None
    data = json.loads(path.read_text())
    return data["entries"], data.get("extent")


def export_check(path: Path, key: bytes) -> tuple[int, Problem | None]:
    """Check an export file: its chain and, for JSON, its sealed extent."""
    entries, extent = read_export(path)
    count, problem = chain_check(entries, key, from_genesis=False)
    if problem is None and extent is not None:
        head = entries[-1]["chain_hash"] if entries else GENESIS
        expected = export_seal(
            key, first=entries[0]["seq"] if entries else None, last=entries[-1]["seq"] if entries else None,
            count=len(entries), head=head,
        )
        if extent.get("seal") != expected or extent.get("count") != len(entries):
            last = entries[-1] if entries else {"seq": 0, "request_id": None}
            problem = Problem("removed", last["seq"], last.get("request_id"), "the export's extent does not match")
    return count, problem


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Verify an audit log export (JSON or CSV) against its hash chain.")
    parser.add_argument("export", type=Path)
    parser.add_argument("--key-file", type=Path, help="file holding the chain key (hex); else $DELLM_AUDIT_CHAIN_KEY")
    args = parser.parse_args(argv)
    key_hex = args.key_file.read_text().strip() if args.key_file else os.environ.get("DELLM_AUDIT_CHAIN_KEY", "")
    if not key_hex:
        parser.error("give --key-file or set DELLM_AUDIT_CHAIN_KEY")
    count, problem = export_check(args.export, bytes.fromhex(key_hex))
    if problem is not None:
        print(f"FAILED after {count} entries: {problem}")
        return 1
    print(f"OK: {count} entries, chain intact")
    return 0


if __name__ == "__main__":
    sys.exit(main())
