"""Maintenance after an erasure: reclaim the dead rows it leaves, so deleted content does not linger
in table pages longer than it must."""

from __future__ import annotations

from django.apps import apps
from django.db import connection

from memory.models import Edge, Node

from ..models import DeletionRequest


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
    """VACUUM (ANALYZE) every table an erasure touches; returns their names."""
    tables = vacuum_tables()
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f'VACUUM (ANALYZE) "{table}"')
    return tables
