"""The live benchmarks' instant LLM: the offline backend in everything but the reply, which costs nothing.

``turn_overhead_p50_ms`` and ``ws_turns_per_s`` measure the server's own work in a chat turn (store, embed,
retrieve, record, queue), so the reply is a fixed acknowledgement, streamed at once. The offline backend would
embed the context's sentences to quote the nearest ones: work of the LLM, not of the server. Fact extraction and
summaries (the tasks a turn queues) stay the offline backend's.
"""

from __future__ import annotations

from collections.abc import Iterator

from dellm_site.ai.local import ACKNOWLEDGEMENT, LocalLLM
from dellm_site.ai.prompts import Prompt


class InstantLLM(LocalLLM):
    def __init__(self, **options):
        super().__init__(**options)
        self.name = "bench:instant"

    def stream(self, prompt: Prompt) -> Iterator[str]:
        yield ACKNOWLEDGEMENT

    def stream_messages(self, messages: list[dict]) -> Iterator[str]:
        yield ACKNOWLEDGEMENT
