"""DeLLM settings: ``DJANGO_SETTINGS_MODULE=dellm_site.settings`` loads the base settings.

The base settings are read on first use, not when the package is imported, so ``dellm_site.settings.test``
can choose development mode for the suite before they are read.
"""

from importlib import import_module


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(import_module(f"{__name__}.base"), name)


def __dir__() -> list[str]:
    return dir(import_module(f"{__name__}.base"))
