"""Django's PostgreSQL backend, on the embedded server that the first connection of a process starts.

Settings name the database and the server's data directory only:

    DATABASES = {"default": {"ENGINE": "dellm_site.db.embedded", "NAME": "dellm",
                             "OPTIONS": {"data_dir": BASE_DIR / ".data" / "pg"}}}

Importing settings (``manage.py check``, Celery's start-up, pytest's collection) starts nothing.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured
from django.db.backends.postgresql import base

from dellm_site import embedded_db


class DatabaseWrapper(base.DatabaseWrapper):
    display_name = "PostgreSQL (embedded)"

    def get_connection_params(self):
        data_dir = self.settings_dict["OPTIONS"].get("data_dir")
        if not data_dir:
            raise ImproperlyConfigured("The embedded database needs OPTIONS['data_dir'] (its PGDATA directory).")
        # HOST (the server's Unix-socket directory) and USER are only known once the server runs.
        self.settings_dict.update(embedded_db.start(data_dir))
        params = super().get_connection_params()
        params.pop("data_dir")
        # NAME None means the maintenance database (test database creation): nothing to create.
        embedded_db.ensure_database(
            self.settings_dict["NAME"], host=self.settings_dict["HOST"], user=self.settings_dict["USER"]
        )
        return params
