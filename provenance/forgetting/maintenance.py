"""Maintenance after an erasure: make the space of the deleted rows reusable and let the write-ahead log
that recorded them be recycled sooner.

What this does not do: VACUUM marks dead rows' space free, it does not overwrite it, so their bytes
stay in the table files until new rows reuse the space (or VACUUM FULL rewrites the table, which locks
it); a WAL segment is reused, not erased, once a checkpoint no longer needs it, so its bytes stay
until new WAL overwrites it. README, "What deletion removes, and what stays on disk", has the numbers.
"""

from __future__ import annotations

import logging

from django.apps import apps
from django.db import DatabaseError, connection

from memory.models import Edge, Node

from ..models import DeletionRequest

logger = logging.getLogger(__name__)

# Each needs a superuser or a granted role (pg_checkpoint, EXECUTE on pg_switch_wal); without it, skipped.
WAL_STATEMENTS = ("CHECKPOINT", "SELECT pg_switch_wal()")


def vacuum_tables() -> list[str]:
    """Every table an erasure can leave dead rows in: the nodes of every kind, their vectors and
    edges, the forget requests, and every table of rows owned by a user (titles, for one)."""
    tables = {Edge._meta.db_table, DeletionRequest._meta.db_table}
    for model in apps.get_models():
        owned = any(f.name == "owner" and f.is_relation for f in model._meta.concrete_fields)
        if issubclass(model, Node) or owned:
            tables.add(model._meta.db_table)
    return sorted(tables)


def disk_reclaim() -> list[str]:
    """VACUUM (ANALYZE) every table an erasure touches, then CHECKPOINT and switch to a new WAL segment,
    so the segments holding the deleted rows are no longer needed and get recycled (where the database
    role may; otherwise logged and skipped). Returns the tables vacuumed."""
    tables = vacuum_tables()
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f'VACUUM (ANALYZE) "{table}"')
        for statement in WAL_STATEMENTS:
            try:
                cursor.execute(statement)
            except DatabaseError as exc:
                logger.warning("after an erasure, %r was not run: %s", statement, str(exc).strip())
    return tables
