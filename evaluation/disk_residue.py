"""How many copies of forgotten text stay in the database's files, and for how long.

Stores a unique marker through the chat services (a statement, and a reply in another conversation that
quotes it), forgets it through the forget services (which run the app's maintenance: VACUUM, CHECKPOINT,
WAL switch), then counts the marker's bytes in the database's relation files (tables, TOAST, indexes)
and in the write-ahead log, again after each round of further turns and maintenance. Every count is
taken right after a CHECKPOINT, so the files hold every page the server has in memory: the worst a copy
of the disk would hold at that moment. It needs the server's files on this machine (the embedded one).

A byte search cannot see a copy inside a compressed value (Postgres compresses values over ~2 kB, such as
a forget request's working set with its vectors); ``uncompressed`` stores the app's text and JSON columns
uncompressed for the run (ALTER TABLE ... SET STORAGE EXTERNAL, restored after), on a throwaway database.
"""

from __future__ import annotations

import secrets
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import connection

from chat import services, turns
from dellm_site.errors import ApplicationError
from provenance.forgetting import services as forget
from provenance.forgetting.maintenance import disk_reclaim, vacuum_tables

KINDS = {"r": "table", "t": "toast", "i": "index", "m": "view"}


@dataclass
class Count:
    stage: str
    relations: Counter = field(default_factory=Counter)  # "kind name" -> copies
    wal: int = 0
    wal_files: int = 0

    @property
    def by_kind(self) -> Counter:
        out: Counter = Counter()
        for key, n in self.relations.items():
            out[key.split(" ", 1)[0]] += n
        return out


def _files() -> tuple[Path, Path]:
    with connection.cursor() as cursor:
        cursor.execute("SHOW data_directory")
        data_dir = Path(cursor.fetchone()[0])
        cursor.execute("SELECT oid FROM pg_database WHERE datname = current_database()")
        base = data_dir / "base" / str(cursor.fetchone()[0])
    if not base.is_dir():
        raise ApplicationError(f"The database's files ({base}) are not on this machine; run it on the embedded server.")
    return base, data_dir / "pg_wal"


def _relation_names() -> dict[str, str]:
    """Relation file node -> "kind name", for every relation of the current database."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_relation_filenode(c.oid), c.relkind, c.relname FROM pg_class c "
            "WHERE pg_relation_filenode(c.oid) IS NOT NULL"
        )
        return {str(node): f"{KINDS.get(kind, kind)} {name}" for node, kind, name in cursor.fetchall()}


def disk_count(*, marker: str, stage: str) -> Count:
    """Copies of ``marker`` in the database's relation files and in pg_wal, after a CHECKPOINT."""
    with connection.cursor() as cursor:
        cursor.execute("CHECKPOINT")
    base, wal = _files()
    names = _relation_names()
    needle = marker.encode()
    count = Count(stage=stage)
    for path in base.iterdir():
        if path.is_file():
            copies = path.read_bytes().count(needle)
            if copies:
                node = path.name.split(".")[0].split("_")[0]
                count.relations[names.get(node, f"file {path.name}")] += copies
    for path in wal.iterdir():
        if path.is_file() and len(path.name) == 24:
            copies = path.read_bytes().count(needle)
            count.wal += copies
            count.wal_files += 1 if copies else 0
    return count


def _storage(*, storage: str) -> None:
    """Set how the app's text and JSON columns are stored: EXTERNAL (never compressed) or EXTENDED."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' "
            "AND table_name = ANY(%s) AND data_type IN ('text', 'character varying', 'jsonb', 'json')",
            [vacuum_tables()],
        )
        for table, column in cursor.fetchall():
            cursor.execute(f'ALTER TABLE "{table}" ALTER COLUMN "{column}" SET STORAGE {storage}')


def residue_measure(*, rounds: int, writes: int, vacuum_full: bool, uncompressed: bool = False) -> list[Count]:
    """Store a marker, forget it, and count its copies on disk: stored, forgotten, then after each round
    of ``writes`` further turns and the app's maintenance; with ``vacuum_full``, after VACUUM FULL too."""
    if uncompressed:
        _storage(storage="EXTERNAL")
    marker = f"zq{secrets.token_hex(7)}"  # one lowercase token, so the full-text index keeps it whole
    user = get_user_model().objects.create_user(username=f"residue-{secrets.token_hex(4)}")
    counts = []
    try:
        first = services.conversation_create(user=user)
        turns.message_post(user=user, conversation_id=first.pk, content=f"My locker code is {marker}.")
        second = services.conversation_create(user=user)
        turns.message_post(user=user, conversation_id=second.pk, content="What is my locker code?")
        counts.append(disk_count(marker=marker, stage="stored"))
        preview = forget.forget_preview(user=user, mode="keyword", query=marker)
        forget.forget_confirm(user=user, request_id=preview.pk)  # runs VACUUM, CHECKPOINT, WAL switch
        counts.append(disk_count(marker=marker, stage="forgotten + maintenance"))
        for round_ in range(1, rounds + 1):
            for i in range(writes):
                text = f"Note {round_}.{i}: I planted {i} tulips by the shed in week {round_}."
                turns.message_post(user=user, conversation_id=second.pk, content=text)
            disk_reclaim()
            counts.append(disk_count(marker=marker, stage=f"+{round_ * writes} turns + maintenance"))
        if vacuum_full:
            with connection.cursor() as cursor:
                for table in vacuum_tables():
                    cursor.execute(f'VACUUM FULL "{table}"')
            disk_reclaim()
            counts.append(disk_count(marker=marker, stage="VACUUM FULL + maintenance"))
    finally:
        user.delete()
        if uncompressed:
            _storage(storage="EXTENDED")
    return counts
