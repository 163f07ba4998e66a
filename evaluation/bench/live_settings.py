"""Settings of the server and worker processes ``ws_turns_per_s`` starts: the app's, with the instant LLM."""

from dellm_site.settings.base import *  # noqa: F403

DELLM_LLM = {"BACKEND": "evaluation.bench.instant.InstantLLM", "OPTIONS": {}}
