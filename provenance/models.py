"""Forget requests (preview, execution, manifest) and the pseudonymous audit log.

The edges of G live with the nodes they join (``memory.models.Edge``); this app owns the rules over them."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class DeletionStatus(models.TextChoices):
    PREVIEWED = "previewed", "Previewed"
    EXECUTING = "executing", "Executing"  # audit written, wipe not yet committed
    VERIFYING = "verifying", "Verifying"  # wipe committed, verification scan pending
    COMPLETED = "completed", "Completed"
    EXPIRED = "expired", "Expired"


class DeletionRequest(models.Model):
    """One forget request: its preview, then the confirmed execution and its manifest.

    ``working`` holds what execution and verification need (the target text and vectors of the
    matched items). It exists only between preview and completion, and is emptied afterwards,
    so a finished request keeps ids and counts, never content."""

    id = models.UUIDField(primary_key=True, editable=False)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="deletion_requests"
    )
    status = models.CharField(max_length=16, choices=DeletionStatus.choices, default=DeletionStatus.PREVIEWED)
    mode = models.CharField(max_length=16)
    depth = models.PositiveIntegerField(null=True, blank=True)
    threshold = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    expires_at = models.DateTimeField()
    confirmed_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    # When the maintenance after the wipe (VACUUM, CHECKPOINT) ran; null while it is due (forgetting.maintenance).
    disk_reclaimed_at = models.DateTimeField(null=True, blank=True)
    plan = models.JSONField(default=dict)  # matched / tainted / derived: ids, reasons, paths; no content
    kept = models.JSONField(default=list)
    target_ids = models.JSONField(default=list)  # the confirmed set, fixed when execution starts
    working = models.JSONField(default=dict)
    manifest = models.JSONField(default=dict)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "-created_at"]), models.Index(fields=["status"])]
        # The deletion reviewer's: the review desk, its exports, and resuming or retrying a deletion.
        permissions = [("review_deletions", "Can review deletions: the review desk, exports, resume and retry")]

    def __str__(self) -> str:
        return f"forget {self.pk} ({self.status})"

    def _do_update(self, base_qs, *args, **kwargs):
        # Every save of a request updates its row through its owner (the column the tables of user data are
        # sharded by), so the statement reaches one shard.
        return super()._do_update(base_qs.filter(owner_id=self.owner_id), *args, **kwargs)

    def plan_drop_words(self) -> None:
        """Once the preview is over, possibly related items keep their ids and scores, not the request's
        words they were offered for (not saved here)."""
        related = [{"id": e["id"], "score": e.get("score")} for e in self.plan.get("related", [])]
        self.plan = {**self.plan, "related": related}

    def expire(self) -> None:
        """End a preview: it can no longer be confirmed, and its working text and words go now."""
        self.status = DeletionStatus.EXPIRED
        self.working = {}
        self.plan_drop_words()
        self.save(update_fields=["status", "working", "plan"])


class DeletionJob(models.Model):
    """The progress of a large deletion confirmed as a background job (``forgetting.jobs``). Written on a
    connection of its own, outside the deletion's transaction, so the panel can read it while the wipe (one
    transaction, all or nothing) is under way; holds counts only. No foreign key: a row may be written before
    the request's own row is visible to that connection."""

    class Stage(models.TextChoices):
        QUEUED = "queued", "Queued"
        LOCKING = "locking", "Locking"
        WIPING = "wiping", "Wiping"
        VERIFYING = "verifying", "Verifying"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"  # the request stays executing, resumable

    request_id = models.UUIDField(primary_key=True)
    stage = models.CharField(max_length=16, choices=Stage.choices, default=Stage.QUEUED)
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    error = models.CharField(max_length=200, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"job {self.request_id} ({self.stage} {self.done}/{self.total})"


class AuditRecord(models.Model):
    """What an auditor may see of a deletion: that and when it happened, by whom (a keyed pseudonym, never
    a username or id), how much from which store, with keyed hashes instead of ids. Written before the
    wipe, completed after it; outlives the account (no foreign key), never holds content.

    Tamper-evident: ``seq``, ``chain_prev``, ``chain_hash`` and ``seal`` chain the entries with keyed hashes
    (``forgetting.chain``), written in the transaction that writes the entry."""

    request_id = models.UUIDField(unique=True)
    requester_ref = models.CharField(max_length=64, db_index=True)
    mode = models.CharField(max_length=16)
    relaxation = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=DeletionStatus.choices)
    requested_at = models.DateTimeField()
    started_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    planned_count = models.PositiveIntegerField(default=0)
    deleted = models.JSONField(default=dict)  # counts per store
    item_refs = models.JSONField(default=list)  # keyed hashes of the deleted node ids
    residual_hits = models.IntegerField(null=True, blank=True)
    seq = models.PositiveBigIntegerField(unique=True)  # position in the chain, from 1
    chain_prev = models.CharField(max_length=64)
    chain_hash = models.CharField(max_length=64)
    seal = models.CharField(max_length=64)

    class Meta:
        ordering = ["-seq"]

    def __str__(self) -> str:
        return f"audit {self.request_id}"
