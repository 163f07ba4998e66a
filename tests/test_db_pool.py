"""Connections come from a pool: closing one (as the end of every request, turn and task does) hands it back, and
the next caller gets the same open database backend instead of starting a new one."""

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)


def _backend() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def test_a_closed_connection_goes_back_to_the_pool_and_is_reused():
    assert connection.pool is not None
    _backend()
    connection.close()
    opened = connection.pool.get_stats().get("connections_num", 0)
    backends = set()
    for _ in range(10):
        backends.add(_backend())
        connection.close()
        assert connection.connection is None
    # Ten requests one after the other: served by connections the pool already had (without it, ten were started).
    assert connection.pool.get_stats().get("connections_num", 0) == opened
    assert len(backends) <= connection.pool.get_stats()["pool_size"]


def test_settings_made_on_a_new_connection_hold_on_every_reused_one():
    connection.close()
    with connection.cursor() as cursor:
        cursor.execute("SHOW hnsw.iterative_scan")
        assert cursor.fetchone()[0] == "strict_order"


def test_a_forked_task_process_makes_its_own_pool():
    from dellm_site.celery import inherited_pools_drop

    inherited = connection.pool
    _backend()
    connection.close()
    try:
        inherited_pools_drop()
        assert connection.pool is not inherited  # a new pool, with connections of its own
        _backend()
        connection.close()
    finally:
        inherited.close()
