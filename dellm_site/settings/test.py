"""Settings for the test suite: the base settings plus what only tests need.

Processes the tests start (uvicorn, Celery workers) run on ``dellm_site.settings``.
"""

from django.conf import global_settings

from .base import *  # noqa: F403
from .base import DATABASES, env

# A test run's database; set DELLM_TEST_DB_NAME to run suites of several checkouts side by side.
DATABASES["default"].setdefault("TEST", {})["NAME"] = env("DELLM_TEST_DB_NAME", default="test_dellm")

# MD5 makes creating users fast; the default hashers still verify passwords set by app processes.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher", *global_settings.PASSWORD_HASHERS]
