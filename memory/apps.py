from django.apps import AppConfig
from django.db.backends.signals import connection_created


def _configure_vector_search(sender, connection, **kwargs):
    # Filtered HNSW scans (owner, retrievable) must keep scanning until k rows pass the filter.
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET hnsw.iterative_scan = strict_order")


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = "Memory"

    def ready(self):
        connection_created.connect(_configure_vector_search, dispatch_uid="memory.vector_search")
