"""The Celery app, wired once from Django settings (CELERY_* names)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dellm_site.settings")

app = Celery("dellm")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
