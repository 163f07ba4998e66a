"""The store D and the edges of G: every item that can enter a context is a Node, in one id space.

Messages (chat.Message), summaries and extracted facts are Node subclasses, so a provenance edge is a
plain pair of node ids and one traversal covers every kind.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector
from django.db import models
from pgvector.django import HnswIndex, VectorField

from .information import holds_information


class NodeKind(models.TextChoices):
    MESSAGE = "message", "Message"
    SUMMARY = "summary", "Summary"
    FACT = "fact", "Fact"


class NodeQuerySet(models.QuerySet):
    def for_user(self, user) -> NodeQuerySet:
        return self.filter(owner=user)

    def retrievable(self) -> NodeQuerySet:
        """Items that may be put into a future context."""
        return self.filter(retrievable=True)

    # A message node's role and conversation live on its chat.Message row (multi-table inheritance);
    # these lookups follow that one-to-one link by name, so the store never imports the chat app.
    def user_messages(self) -> NodeQuerySet:
        """The users' own messages (the sources of facts and summaries)."""
        return self.filter(kind=NodeKind.MESSAGE, message__role="user")

    def in_conversation(self, conversation_id: int) -> NodeQuerySet:
        """The messages of one conversation."""
        return self.filter(message__conversation_id=conversation_id)


class Node(models.Model):
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="nodes")
    kind = models.CharField(max_length=16, choices=NodeKind.choices)
    content = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    # False for items kept for display or history but never given to the LLM again.
    retrievable = models.BooleanField(default=True)
    # Holds information a later message may need (see memory.information); decided once, when stored.
    # Items that hold none (a question, "Noted, I will remember that.") never compete for context slots.
    informative = models.BooleanField(default=True)

    objects = NodeQuerySet.as_manager()

    class Meta:
        indexes = [
            models.Index(fields=["owner", "kind", "created_at"]),
            # Keyword matching for forget requests (Postgres full-text search).
            GinIndex(SearchVector("content", config="english"), name="node_content_fts"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.pk}"

    def save(self, *args, **kwargs):
        if self._state.adding:
            # A chat message's role lives on its chat.Message row; derived records have none.
            self.informative = holds_information(kind=self.kind, role=getattr(self, "role", None), text=self.content)
        if hasattr(self, "node_owner_id"):  # a subclass's own copy of the owner (see node_owner_field)
            self.node_owner_id = self.owner_id
        super().save(*args, **kwargs)


def node_owner_field() -> models.ForeignKey:
    """The node's owner again, on the table of a Node subclass (chat_message, memory_fact, memory_summary), in a
    column named ``owner_id`` like every other table of user data: each table can then be sharded by owner, its
    rows beside their memory_node rows. Set from the node on every save (``Node.save``); never edited."""
    return models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_column="owner_id", db_index=False,
        editable=False,
    )


class Embedding(models.Model):
    """The vector of one node, for semantic retrieval (cosine distance, HNSW index).

    ``owner``, ``kind`` and ``retrievable`` copy the node's owner, kind and ``retrievable AND informative`` (what
    context retrieval filters on), so the similarity search filters without a join to memory_node. The database
    keeps them (triggers of migration 0010, on every write path: an embedding stored or moved to another node
    takes its node's; a node whose flags change passes them on); Python never writes them after the insert."""

    node = models.OneToOneField(Node, on_delete=models.CASCADE, primary_key=True, related_name="embedding")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16, choices=NodeKind.choices, default="", editable=False)
    # The node may enter a context: retrievable and informative. Only these vectors are in the HNSW index.
    retrievable = models.BooleanField(default=False, editable=False)
    vector = VectorField(dimensions=settings.DELLM_EMBEDDING_DIMENSIONS)
    backend = models.CharField(max_length=200)
    # The forget resolver's second reading of the node's meaning (``DELLM_WIDE_EMBEDDER``, 768-d), for the
    # statements and facts a request can name; written after the first vector (``memory.embeddings.wide_store``),
    # and gone with the row. No index: it only rescores the candidates the first vector and the words found.
    wide = VectorField(dimensions=768, null=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            # Partial: the vectors of items that never enter a context (questions, acknowledgements, superseded
            # records; many of them identical) stay out of the graph, where they crowded a user's true nearest.
            HnswIndex(
                name="embedding_retrievable_hnsw",
                fields=["vector"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
                condition=models.Q(retrievable=True),
            )
        ]

    def __str__(self) -> str:
        return f"embedding of {self.node_id}"


def _owners_of(node_ids: set[int]) -> dict[int, int]:
    return dict(Node.objects.filter(pk__in=node_ids).values_list("pk", "owner_id"))


class EdgeQuerySet(models.QuerySet):
    def for_user(self, user) -> EdgeQuerySet:
        return self.filter(owner=user)

    def bulk_create(self, objs, *args, **kwargs):
        """Edges made without their owner get it from their dst (one query for the lot)."""
        objs = list(objs)
        missing = [edge for edge in objs if edge.owner_id is None]
        if missing:
            owners = _owners_of({edge.dst_id for edge in missing})
            for edge in missing:
                edge.owner_id = owners.get(edge.dst_id)
        return super().bulk_create(objs, *args, **kwargs)


class Edge(models.Model):
    """An edge src -> dst of the graph G: src was in the context given to the LLM for dst (or, for a
    derived record, src is one of its sources). Written in the transaction that stores dst; the
    traversal and every rule built on it (Dep, forgetting) live in the provenance app.

    ``owner`` is dst's owner (a context is always the user's own), stored on the edge so every read of the
    graph filters by it, like every other table of user data (the database can then be sharded by owner)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    src = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="out_edges")
    dst = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="in_edges")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = EdgeQuerySet.as_manager()

    class Meta:
        db_table = "provenance_edge"
        constraints = [
            models.UniqueConstraint(fields=["src", "dst"], name="edge_unique_src_dst"),
            models.CheckConstraint(condition=~models.Q(src=models.F("dst")), name="edge_no_self_loop"),
        ]
        # The unique constraint indexes (src, dst) for forward walks; this one serves backward walks.
        indexes = [models.Index(fields=["dst", "src"], name="edge_dst_src")]

    def __str__(self) -> str:
        return f"{self.src_id} -> {self.dst_id}"

    def save(self, *args, **kwargs):
        if self.owner_id is None and self.dst_id is not None:
            self.owner_id = self.dst.owner_id
        super().save(*args, **kwargs)


class DerivedStatus(models.TextChoices):
    ACTIVE = "active", "Active"
    SUPERSEDED = "superseded", "Superseded"  # kept as history, never given to the LLM again


class Fact(Node):
    """Something the user said about themselves, distilled from their messages (edges from the
    sources). Rectifying a fact supersedes it; erasing it goes through the forget flow."""

    status = models.CharField(max_length=16, choices=DerivedStatus.choices, default=DerivedStatus.ACTIVE)
    version = models.PositiveIntegerField(default=1)
    derivation = models.JSONField(default=dict)  # backend, model, prompt hash
    supersedes = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="superseded_by"
    )
    rectified = models.BooleanField(default=False)  # written by the user, not the extractor
    rebuilt_at = models.DateTimeField(auto_now_add=True)
    node_owner = node_owner_field()

    def save(self, *args, **kwargs):
        self.kind = NodeKind.FACT
        self.retrievable = self.status == DerivedStatus.ACTIVE
        super().save(*args, **kwargs)


class Summary(Node):
    """A rolling summary of one conversation, rebuilt every few messages and after deletions."""

    conversation = models.ForeignKey("chat.Conversation", on_delete=models.CASCADE, related_name="summaries")
    status = models.CharField(max_length=16, choices=DerivedStatus.choices, default=DerivedStatus.ACTIVE)
    version = models.PositiveIntegerField(default=1)
    derivation = models.JSONField(default=dict)
    source_count = models.PositiveIntegerField(default=0)
    rebuilt_at = models.DateTimeField(auto_now_add=True)
    node_owner = node_owner_field()

    def save(self, *args, **kwargs):
        self.kind = NodeKind.SUMMARY
        self.retrievable = self.status == DerivedStatus.ACTIVE
        super().save(*args, **kwargs)


class MemoryPreference(models.Model):
    """Whether the user's turns use memory: with it off, a reply is given no stored item and nothing
    (no fact, no summary) is derived from new messages; the messages themselves are still kept."""

    owner = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True, related_name="memory_preference"
    )
    enabled = models.BooleanField(default=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"memory {'on' if self.enabled else 'off'} for {self.owner_id}"


class TaskRun(models.Model):
    """One execution of a background job: kind, timing, attempts and outcome (admin-visible)."""

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        RETRYING = "retrying", "Retrying"
        FAILED = "failed", "Failed"

    task_id = models.CharField(max_length=64, db_index=True)
    kind = models.CharField(max_length=64, db_index=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    attempt = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    duration_ms = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)  # exception type and message; never user content

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["kind", "status"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.task_id} ({self.status})"
