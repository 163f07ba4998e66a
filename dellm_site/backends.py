"""Pluggable backends configured as ``{"BACKEND": "dotted.path", "OPTIONS": {...}}``."""

from __future__ import annotations

import threading
from functools import cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.utils.module_loading import import_string

_lock = threading.Lock()


@cache
def _build(setting_name: str, backend: str, options: tuple):
    cls = import_string(backend)
    return cls(**dict(options))


def get_backend(setting_name: str):
    """Return the (cached) backend instance configured by ``settings.<setting_name>``."""
    config = getattr(settings, setting_name, None)
    if not isinstance(config, dict) or "BACKEND" not in config:
        raise ImproperlyConfigured(f"{setting_name} must be a dict with a BACKEND key.")
    options = tuple(sorted((config.get("OPTIONS") or {}).items()))
    with _lock:
        try:
            return _build(setting_name, config["BACKEND"], options)
        except ImportError as exc:
            raise ImproperlyConfigured(f"{setting_name}: cannot import {config['BACKEND']}: {exc}") from exc


def _reset(**kwargs):
    if kwargs.get("setting", "").startswith("DELLM_"):
        _build.cache_clear()


setting_changed.connect(_reset)
