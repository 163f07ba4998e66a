"""The systems compared, all through the configured LLM (``get_llm()``) and embedder (``get_embedder()``).

- ``no_memory``: the LLM sees only the question and the instruction (``Prompt(question, context=[])``).
- ``full_memory``: the LLM sees the whole history (every earlier user message and reply). The
  deletion request is just another message, answered under the paper's baseline instruction (the
  LLM is asked to forget); nothing is deleted, so the request and its reply stay in the history.
- ``semantic_deletion@T``: the whole history too; a deletion request removes every history message
  whose cosine similarity to what the request names is >= T.
- ``dellm``: the product, driven through its services: a fresh user per episode, every message
  posted with ``chat.turns.message_post`` (real context construction, provenance, facts and
  summaries), the deletion request posted the same way (it returns a forget preview), confirmed
  with ``provenance.forgetting.services.forget_confirm`` (strict), the questions asked the same way.

The modules: ``common`` (system names, ``Outcome``, the embedding cache), ``baselines`` (the first
three, on in-memory histories) and ``dellm`` (the product, through its services).
"""

from .baselines import Baselines
from .common import (
    DEFAULT_THRESHOLDS,
    DELLM,
    FULL_MEMORY,
    NO_MEMORY,
    SEMANTIC,
    USER_PREFIX,
    Answered,
    Outcome,
    embedding_cache,
    request_target,
    semantic_name,
)
from .dellm import DeLLMRunner, eval_users_remove

__all__ = [
    "DEFAULT_THRESHOLDS",
    "DELLM",
    "FULL_MEMORY",
    "NO_MEMORY",
    "SEMANTIC",
    "USER_PREFIX",
    "Answered",
    "Baselines",
    "DeLLMRunner",
    "Outcome",
    "embedding_cache",
    "eval_users_remove",
    "request_target",
    "semantic_name",
]
