"""DeLLM settings: ``DJANGO_SETTINGS_MODULE=dellm_site.settings`` loads the base settings."""

from .base import *  # noqa: F403
