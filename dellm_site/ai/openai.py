"""Any OpenAI-compatible chat-completions server, through the official client, streaming."""

from __future__ import annotations

import json
from collections.abc import Iterator

import openai

from .llm import LLM, LLMError
from .prompts import FORGET_TOOL, FORGET_TOOL_INSTRUCTION


class OpenAILLM(LLM):
    def __init__(
        self, model: str, api_key: str, base_url: str | None = None, timeout: float = 60.0, max_retries: int = 2
    ):
        self.model = model
        self.name = f"openai:{model}"
        self._client = openai.OpenAI(
            api_key=api_key or "missing", base_url=base_url, timeout=timeout, max_retries=max_retries
        )

    def derivation(self, instruction: str) -> dict:
        return {**super().derivation(instruction), "model": self.model}

    def stream_messages(self, messages: list[dict]) -> Iterator[str]:
        try:
            stream = self._client.chat.completions.create(model=self.model, messages=messages, stream=True)
            for chunk in stream:
                for choice in chunk.choices:
                    if choice.delta and choice.delta.content:
                        yield choice.delta.content
        except openai.APITimeoutError as exc:
            raise LLMError("The language model did not answer in time.") from exc
        except openai.AuthenticationError as exc:
            raise LLMError("The language model refused the API key (check OPENAI_API_KEY).") from exc
        except openai.APIConnectionError as exc:
            raise LLMError("Could not reach the language model (check OPENAI_BASE_URL).") from exc
        except openai.APIStatusError as exc:
            raise LLMError(f"The language model returned an error ({exc.status_code}).") from exc
        except openai.APIError as exc:  # e.g. an error event in the middle of the stream
            raise LLMError(f"The language model failed while answering: {exc.message}") from exc

    def forget_targets(self, text: str) -> list[str] | None:
        """One function-calling request: a call to ``forget_memory`` means yes (with its targets)."""
        try:
            response = self._client.chat.completions.create(
                model=self.model,
                messages=[{"role": "system", "content": FORGET_TOOL_INSTRUCTION}, {"role": "user", "content": text}],
                tools=[FORGET_TOOL],
                tool_choice="auto",
            )
        except openai.APIError as exc:
            raise LLMError(f"The language model failed while reading the message: {exc}") from exc
        for choice in response.choices:
            for call in choice.message.tool_calls or []:
                if call.function.name != FORGET_TOOL["function"]["name"]:
                    continue
                try:
                    targets = json.loads(call.function.arguments or "{}").get("targets") or []
                except (ValueError, AttributeError):
                    return None  # a malformed call decides nothing; the user is asked instead
                return [str(t).strip() for t in targets if str(t).strip()] or None
        return []
