"""Where a scale dataset lives, and how a full-scale load is paid once.

The quick scale (a few tens of thousands of items) is loaded in place on every run, into the current
database, beside whatever else is there (its users are named ``scale-…``; a run removes the previous
run's).

The full scale (over a million items) takes minutes to load, most of it the HNSW build, and the
benchmarks delete from it. So it is loaded once into a database of its own, ``<name>_scale_full``, whose
comment records the dataset's fingerprint (sizes, generator version, embedder, applied migrations) and
its load report; every run copies that database (``CREATE DATABASE … TEMPLATE … STRATEGY FILE_COPY``, a
file copy) to ``<name>_scale_run``, measures there and drops the copy. A changed fingerprint, or
``--reload``, loads it again.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from django.db import connection

from .scale import ScaleSpec, fingerprint, scale_load


@dataclass
class DatasetInfo:
    """How the dataset of this run was made ready."""

    where: str
    reused: bool
    fingerprint: str
    load: dict = field(default_factory=dict)
    copy_seconds: float | None = None
    original: str | None = None  # the database to switch back to


def _disconnect() -> None:
    """No connection of this process left open to the current database, pooled ones included (a pool keeps its
    connections to the database it was made for, and a database with connections can be neither copied nor
    dropped)."""
    connection.close()
    connection.close_pool()


def _use(name: str) -> None:
    _disconnect()
    connection.settings_dict["NAME"] = name


def _maintenance(statements: list[tuple[str, list]]) -> list:
    """Run statements on the server's maintenance database (no connection to ours may be open)."""
    out = []
    with connection._nodb_cursor() as cursor:
        for statement, params in statements:
            cursor.execute(statement, params)
            out.append(cursor.fetchall() if cursor.description else None)
    return out


def _comment(name: str) -> dict | None:
    rows = _maintenance(
        [("SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", [name])]
    )[0]
    if not rows or not rows[0][0]:
        return None
    try:
        return json.loads(rows[0][0])
    except ValueError:
        return None


def dataset_ready(*, spec: ScaleSpec, reload: bool, in_place: bool, stdout) -> DatasetInfo:
    """Make ``spec``'s dataset the current database's content (see the module's docstring)."""
    if in_place:
        report = scale_load(spec=spec, fresh=False, stdout=stdout)
        return DatasetInfo(where="in place", reused=False, fingerprint=fingerprint(spec), load=report.to_dict())
    original = connection.settings_dict["NAME"]
    template, run = f"{original}_scale_{spec.name}", f"{original}_scale_run"
    wanted = fingerprint(spec)
    stored = None if reload else _comment(template)
    reused = stored is not None and stored.get("fingerprint") == wanted
    if not reused:
        stdout.write(f"loading the {spec.name} scale dataset into {template} (once; later runs reuse it)...")
        _disconnect()
        _maintenance(
            [
                (f'DROP DATABASE IF EXISTS "{template}" WITH (FORCE)', []),
                (f'CREATE DATABASE "{template}" TEMPLATE "{original}" STRATEGY FILE_COPY', []),
            ]
        )
        _use(template)
        report = scale_load(spec=spec, fresh=True, stdout=stdout)
        _disconnect()
        stored = {"fingerprint": wanted, "load": report.to_dict()}
        _maintenance([(f'COMMENT ON DATABASE "{template}" IS %s', [json.dumps(stored)])])
        _use(original)
    _disconnect()
    started = time.perf_counter()
    _maintenance(
        [
            (f'DROP DATABASE IF EXISTS "{run}" WITH (FORCE)', []),
            (f'CREATE DATABASE "{run}" TEMPLATE "{template}" STRATEGY FILE_COPY', []),
        ]
    )
    copy_seconds = round(time.perf_counter() - started, 1)
    _use(run)
    return DatasetInfo(
        where=template, reused=reused, fingerprint=wanted, load=stored["load"], copy_seconds=copy_seconds,
        original=original,
    )


def dataset_release(info: DatasetInfo) -> None:
    """Back to the original database; the run's copy is dropped (the dataset itself is kept)."""
    if info.original is None:
        return
    run = connection.settings_dict["NAME"]
    _use(info.original)
    _maintenance([(f'DROP DATABASE IF EXISTS "{run}" WITH (FORCE)', [])])
