"""Settings for the test suite: the base settings plus what only tests need.

Processes the tests start (uvicorn, Celery workers) run on ``dellm_site.settings``.
"""

import os

from django.conf import global_settings

# The suite and the servers it starts run in development mode (dev key, static files read from static/);
# tests of production mode set DJANGO_DEBUG=0 for their own processes.
os.environ.setdefault("DJANGO_DEBUG", "1")
# The resolver's second reading of meaning (all-mpnet-base-v2 through torch) is off for the suite and the servers
# and workers it starts, as by default: every statement stored would pay for it. Its tests turn it on for themselves.
os.environ.setdefault("DELLM_WIDE_EMBEDDER", "off")

from .base import *  # noqa: E402, F403
from .base import DATABASES, env  # noqa: E402

# A test run's database; set DELLM_TEST_DB_NAME to run suites of several checkouts side by side.
DATABASES["default"].setdefault("TEST", {})["NAME"] = env("DELLM_TEST_DB_NAME", default="test_dellm")

# MD5 makes creating users fast; the default hashers still verify passwords set by app processes.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher", *global_settings.PASSWORD_HASHERS]

# No maintenance thread outliving a test (it would vacuum while later tests run); tests run it explicitly.
DELLM_DISK_RECLAIM_IN_PROCESS = False
# The suite's own process loads models when a test first needs them, and so do the servers and workers it starts
# (tests/conftest.py's app_env turns their warm start off; the warm-start tests turn it on).
DELLM_WARM_AT_START = False
