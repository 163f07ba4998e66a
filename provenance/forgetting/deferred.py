"""What a confirmation run in-process (without workers) finishes after its verification: the rebuilds' vectors
are computed in the background while the verification runs, then stored, and the rebuilds recorded on the
manifest, which then checks the rebuilt records (``execution.rebuilds_finished``), as with workers.

Until then the manifest lists those rebuilds as pending, so the verification keeps the request's words and
vectors for that check. Elsewhere (a worker's task) what is handed to ``later`` runs at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_held: ContextVar[list[Callable[[], None]] | None] = ContextVar("after_verification", default=None)


@contextmanager
def after_verification() -> Iterator[list[Callable[[], None]]]:
    """Hold back what ``later`` is given within it; run it, in order, when it ends (whether or not it raised)."""
    held: list[Callable[[], None]] = []
    token = _held.set(held)
    try:
        yield held
    finally:
        _held.reset(token)
        for finish in held:
            finish()


def later(finish: Callable[[], None]) -> None:
    """Run ``finish`` at the end of the enclosing ``after_verification``, or now where there is none."""
    held = _held.get()
    if held is None:
        finish()
    else:
        held.append(finish)
