"""The manifest of a deletion, typed: what was deleted, what was rebuilt, what the verification found.

It is stored as JSON on the request (``DeletionRequest.manifest``) and returned by the API as that
JSON; every reader and writer goes through these classes, so the shape is decided here only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

STORES = ("messages", "embeddings", "edges", "summaries", "facts", "conversations")


def _known(cls, data: dict) -> dict:
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


@dataclass
class RebuiltRecord:
    """A derived record (fact or summary) in the deleted set, and what became of it.

    ``status``: ``pending`` (a rebuild is queued), ``done`` (rebuilt as ``new_ids``), ``dropped``
    (nothing to rebuild from, or written by the user), ``erased`` (named by the user), ``failed``.
    ``retry``: what a rebuild needs to run again (``{"sources", "conversation"}``), kept while it may."""

    id: int
    kind: str
    status: str
    version: int = 1
    new_ids: list[int] = field(default_factory=list)
    reason: str | None = None
    error: str | None = None
    derivation: dict | None = None
    rebuilt_at: str | None = None
    retry: dict | None = None

    @classmethod
    def from_dict(cls, data: dict) -> RebuiltRecord:
        data = dict(data)
        if "new_id" in data:  # manifests written before rebuilt records always listed their ids
            legacy = data.pop("new_id")
            data.setdefault("new_ids", [] if legacy is None else [legacy])
        return cls(**_known(cls, data))

    def to_dict(self) -> dict:
        # Only a record that was rebuilt lists new ids; unset details are left out.
        return {k: v for k, v in asdict(self).items() if v is not None and not (k == "new_ids" and not v)}

    def update(self, entry: dict) -> None:
        """Take a rebuild's outcome (``{"status", "new_ids"?, "reason"?, ...}``)."""
        merged = RebuiltRecord.from_dict({**self.to_dict(), **entry})
        if merged.status not in ("pending", "failed"):
            merged.retry = None  # settled: nothing left to run again
        self.__dict__.update(merged.__dict__)


@dataclass
class Verification:
    """What the scan after the wipe found. ``residual_hits``: items holding the deleted words, or nearly
    the same meaning. ``possible_residue``: items that share only a distinctive part of it (a number, a
    name, rare words) or come close in meaning, each ``{id, kind, conversation, why, spans, similarity?}``
    (``spans``: where in that item the tokens are; the tokens themselves are not stored), with
    ``possible_residue_titles`` (conversations whose title does) and ``possible_residue_more`` (not listed)."""

    checked_stores: list[str] = field(default_factory=list)
    residual_hits: int = 0
    residual_ids: list[int] = field(default_factory=list)
    method: str = ""
    rebuilt_residual_hits: int | None = None
    possible_residue: list[dict] = field(default_factory=list)
    possible_residue_titles: list[int] = field(default_factory=list)
    possible_residue_more: int | None = None
    residual_title_hits: int | None = None
    rechecked_at: str | None = None

    @classmethod
    def from_dict(cls, data: dict | None) -> Verification | None:
        return None if not data else cls(**_known(cls, data))

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class Manifest:
    """A deletion's record. Filled in two steps: the wipe writes counts, ids and rebuilt records;
    verification adds the request's facts, the scan result and completion."""

    deleted: dict[str, int] = field(default_factory=dict)
    deleted_ids: list[int] = field(default_factory=list)
    rebuilt: list[RebuiltRecord] = field(default_factory=list)
    timings: dict[str, Any] = field(default_factory=dict)
    request_id: str | None = None
    status: str | None = None
    requested_at: str | None = None
    confirmed_at: str | None = None
    completed_at: str | None = None
    mode: str | None = None
    depth: int | None = None
    threshold: float | None = None
    strict: bool | None = None
    kept: list[int] | None = None
    matched: list[int] | None = None
    verification: Verification | None = None
    rebuilds_completed_at: str | None = None

    @classmethod
    def from_dict(cls, data: dict | None) -> Manifest:
        data = dict(data or {})
        data["rebuilt"] = [RebuiltRecord.from_dict(r) for r in data.get("rebuilt") or []]
        data["verification"] = Verification.from_dict(data.get("verification"))
        return cls(**_known(cls, data))

    def to_dict(self) -> dict:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "rebuilt":
                value = [r.to_dict() for r in value]
            elif f.name == "verification":
                value = value.to_dict() if value is not None else None
            # A completed manifest always says its depth, threshold and confirmation time, even if none.
            if value is not None or (self.status is not None and f.name in ("depth", "threshold", "confirmed_at")):
                out[f.name] = value
        return out

    @property
    def rebuilds_pending(self) -> bool:
        return any(r.status == "pending" for r in self.rebuilt)

    @property
    def rebuilt_ids(self) -> set[int]:
        """Ids of every record rebuilt in place of a deleted one."""
        return {i for r in self.rebuilt for i in r.new_ids}

    def rebuilt_record(self, old_id: int) -> RebuiltRecord | None:
        return next((r for r in self.rebuilt if r.id == old_id), None)
