"""How apps above provenance take part in a deletion without provenance importing them.

- A *scope* names a group of items the user can forget at once (the chat app registers
  ``"conversation"``): ``resolve(user, scope_id, lock) -> node ids``, raising NotFound for a foreign id.
  The ids are every node the scope's own removal would take with it; with ``lock`` the resolver also
  locks the scope until the transaction ends, so nothing is added to it while it is being wiped.
- ``erasure_pending`` is sent inside the wipe's transaction, before the rows go, with ``user``,
  ``node_ids`` and ``scope`` (``(name, id)`` or None). A receiver may return a callable; it runs in
  the same transaction after the rows are deleted and returns counts to add to the manifest (e.g.
  ``{"conversations": 1}``). The chat app re-titles conversations and removes a forgotten one this way.
- ``residue_scan`` is sent by verification with ``user`` and ``terms``; each receiver returns how
  many places of its own still hold a term (the chat app scans conversation titles).
- ``residue_titles_scan`` is sent by the possible-residue scan with ``user`` and ``query`` (a raw
  tsquery of distinctive lexemes, OR-ed); each receiver returns the ids of its records that match it
  (the chat app: conversations whose title does).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from django.dispatch import Signal

from dellm_site.types import AnyId

if TYPE_CHECKING:
    from dellm_site.types import User

erasure_pending = Signal()
residue_scan = Signal()
residue_titles_scan = Signal()

ScopeResolver = Callable[..., list[int]]
_scopes: dict[str, ScopeResolver] = {}


def scope_register(name: str, resolver: ScopeResolver) -> None:
    """Let ``mode=<name>`` requests name every item of one ``<name>`` (called from an AppConfig.ready)."""
    _scopes[name] = resolver


def scope_names() -> tuple[str, ...]:
    return tuple(sorted(_scopes))


def scope_resolve(*, name: str, user: User, scope_id: AnyId, lock: bool = False) -> list[int]:
    """The node ids in one scope of the user's (NotFound if it is not theirs); ``lock`` holds the scope."""
    return list(_scopes[name](user=user, scope_id=scope_id, lock=lock))


def erasure_run(*, user: User, node_ids: set[int], scope: tuple[str, int] | None, wipe: Callable[[], dict]) -> dict:
    """Tell the participants, wipe, let them finish; returns the wipe's counts plus theirs."""
    finishers = [
        response
        for _, response in erasure_pending.send(sender=__name__, user=user, node_ids=node_ids, scope=scope)
        if callable(response)
    ]
    counts = wipe()
    for finish in finishers:
        for store, count in (finish() or {}).items():
            counts[store] = counts.get(store, 0) + count
    return counts


def residue_count(*, user: User, terms: list[str]) -> int:
    """Hits for ``terms`` in the participants' own stores."""
    return sum(int(r or 0) for _, r in residue_scan.send(sender=__name__, user=user, terms=terms))


def residue_titles(*, user: User, query: str) -> list[int]:
    """Ids of the participants' titled records (conversations) whose title matches ``query``."""
    return [pk for _, found in residue_titles_scan.send(sender=__name__, user=user, query=query) for pk in found or ()]
