"""Datasets of the deletion benchmark, as episodes.

An *episode* is what one user does: share ``statements`` (then ``requests``), ask ``questions``
(before), send one deletion request per ``forgets`` item, ask the same ``questions`` again (after).

- Persona facts (``personas/personas_dev.jsonl`` or any file in that format): one episode per
  persona; the ``forget`` qa is the forget question, the other three are retain questions.
- TOFU: one episode (one user) that shares every answer of the retain slice and of forget01 as a
  user message, in the dataset's order; each forget01 answer gets its own deletion request
  ``"Forget that <answer>"``; the questions are all forget01 and retain-slice questions, the gold
  answer being the original answer.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError

DEFAULT_TOFU_RETAIN = (3560, 3960)  # the 20 authors just before forget01 (= full[3960:4000])
TOFU_FORGET_REQUEST = "Forget that {answer}"


@dataclass(frozen=True)
class QA:
    """A question, its gold answer and whether the answer is to be forgotten."""

    question: str
    answer: str
    forget: bool  # a forget question (its answer is deleted) or a retain question
    fact: str = ""  # the statement the answer comes from, when the dataset says


@dataclass(frozen=True)
class ForgetItem:
    """One deletion request and the answer that must be gone after it."""

    request: str  # the natural-language deletion request, as the user sends it
    answer: str  # what must be gone afterwards
    fact: str = ""


@dataclass
class Episode:
    """What one user does: statements, questions, deletion requests, the questions again."""

    id: str
    statements: list[str]
    requests: list[str] = field(default_factory=list)
    questions: list[QA] = field(default_factory=list)
    forgets: list[ForgetItem] = field(default_factory=list)
    indirect: list[str] = field(default_factory=list)  # restatements of a forget fact (not required to go)

    @property
    def turns(self) -> int:
        """Messages one system handles in this episode (for the progress bar)."""
        return len(self.statements) + len(self.requests) + 2 * len(self.questions) + len(self.forgets)


@dataclass
class Dataset:
    """A named list of episodes, with what the report says about where they came from."""

    name: str
    episodes: list[Episode]
    meta: dict


def data_dir(option: str | None = None) -> Path:
    """The shared data folder: ``--data-dir``, else ``DELLM_EVAL_DATA_DIR``, else ``../shared/data``."""
    chosen = option or os.environ.get("DELLM_EVAL_DATA_DIR") or Path(settings.BASE_DIR).parent / "shared" / "data"
    return Path(chosen).expanduser().resolve()


def _need(path: Path, what: str) -> Path:
    if not path.is_file():
        raise CommandError(
            f"The {what} file is missing: {path} does not exist. Point the benchmark at the shared data "
            "folder with --data-dir or DELLM_EVAL_DATA_DIR (default: ../shared/data next to the project)."
        )
    return path


def personas_load(*, path: Path, name: str | None = None, limit: int | None = None) -> Dataset:
    """Persona facts (one JSON object a line), first ``limit`` personas."""
    _need(path, "persona dataset")
    episodes = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            if limit is not None and len(episodes) >= limit:
                break
            try:
                row = json.loads(line)
                forget_index = int(row["forget"])
                questions = [
                    QA(
                        question=qa["question"],
                        answer=str(qa["answer"]),
                        forget=i == forget_index,
                        fact=qa.get("fact", ""),
                    )
                    for i, qa in enumerate(row["qa"])
                ]
                target = questions[forget_index]
                episodes.append(
                    Episode(
                        id=str(row.get("id", f"line-{number}")),
                        statements=list(row["persona"]),
                        requests=list(row.get("requests", [])),
                        questions=questions,
                        forgets=[ForgetItem(request=row["forget_request"], answer=target.answer, fact=target.fact)],
                        indirect=[row["persona"][i] for i in row.get("indirect", [])],
                    )
                )
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                raise CommandError(f"{path}:{number} is not a persona record ({type(exc).__name__}: {exc}).") from exc
    if not episodes:
        raise CommandError(f"{path} holds no persona records.")
    return Dataset(
        name=name or path.name,
        episodes=episodes,
        meta={"file": str(path), "personas": len(episodes), "limit": limit, "full_run": limit is None},
    )


def tofu_load(*, folder: Path, limit: int | None = None, retain: tuple[int, int] = DEFAULT_TOFU_RETAIN) -> Dataset:
    """TOFU forget01 (first ``limit`` facts) plus the retain slice ``full[start:end]``, as one episode."""
    forget_rows = json.loads(_need(folder / "tofu_forget01.json", "TOFU forget01").read_text(encoding="utf-8"))
    full: list[dict] = []
    with _need(folder / "tofu_full.json", "TOFU full").open(encoding="utf-8") as handle:
        for line in handle:  # four lines, each a JSON array of 1,000 records
            if line.strip():
                full.extend(json.loads(line))
    start, end = retain
    if not (0 <= start <= end <= len(full)):
        raise CommandError(f"The TOFU retain slice {start}:{end} is outside full[0:{len(full)}].")
    forget_pairs = [(row["prompt"], row["response"]) for row in forget_rows][: limit if limit is not None else None]
    forget_set = set(forget_pairs)
    retain_pairs = [
        (row["question"], row["answer"])
        for row in full[start:end]
        if (row["question"], row["answer"]) not in forget_set
    ]
    # Shared in the dataset's order: the retain slice (authors before forget01), then forget01.
    statements = [answer for _, answer in retain_pairs] + [answer for _, answer in forget_pairs]
    questions = [QA(question=q, answer=a, forget=True, fact=a) for q, a in forget_pairs] + [
        QA(question=q, answer=a, forget=False, fact=a) for q, a in retain_pairs
    ]
    forgets = [ForgetItem(request=TOFU_FORGET_REQUEST.format(answer=a), answer=a, fact=a) for _, a in forget_pairs]
    return Dataset(
        name="tofu",
        episodes=[Episode(id="tofu-forget01", statements=statements, questions=questions, forgets=forgets)],
        meta={
            "folder": str(folder),
            "forget": f"forget01[0:{len(forget_pairs)}]",
            "retain_slice": f"full[{start}:{end}]",
            "forget_facts": len(forget_pairs),
            "retain_facts": len(retain_pairs),
            "limit": limit,
            "grouping": "one user holds the retain slice and forget01; one deletion request per forget01 answer",
        },
    )


def slice_parse(text: str) -> tuple[int, int]:
    """'3560:3960' -> (3560, 3960)."""
    try:
        start, end = (int(part) for part in text.split(":"))
    except ValueError:
        raise CommandError(f"--tofu-retain-slice must look like START:END, not {text!r}.") from None
    return start, end
