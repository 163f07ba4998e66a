"""The scale generator: many users with small histories, a few heavy ones, bulk-loaded with COPY.

Each history is written as the chat would have written it: conversations of turns (a statement or a
question, then a reply), the reply's context edges from items retrieved for it (mostly the same topic,
recent and older ones, a few from elsewhere), the question always in the reply's context, a fact
extracted from some statements and one summary per conversation with an edge from each of its user
messages. ``Node.informative`` is decided by the app's own rule (``memory.information``); the full-text
data is the app's expression index, rebuilt after the load.

Vectors: the real embedder embeds a sample of distinct texts (``renderings`` of every statement and
question template of every topic, and the fixed replies). A generated statement or question takes one
real rendering of its template as anchor and adds Gaussian noise sized so that its cosine to the anchor
equals the mean cosine between two real renderings of that template (measured on the sample); one in ten
simply is a sampled text with its real vector. Replies, facts and summaries sit near what they were made
from (a quoted item, the statement, the mean of the conversation's statements), at cosine ~0.9.

Loading: users, conversations, nodes, messages, facts, summaries, embeddings and edges are written with
binary COPY in one transaction, with foreign-key triggers off (``session_replication_role``) and every
secondary index and unique constraint of those tables dropped first and rebuilt after, with a large
``maintenance_work_mem`` and a parallel worker. See ``dataset`` for how a full-scale load is kept.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np
from django.contrib.auth import get_user_model
from django.db import connection, transaction

from chat.services import conversation_title_from
from dellm_site.ai.embedding import get_embedder
from memory.information import holds_information

from . import scale_texts as texts

logger = logging.getLogger(__name__)

GENERATOR_VERSION = 2
PREFIX = "scale-"
# Context sizes a reply got: a statement's small context, a question's top-5 (items above the threshold).
STATEMENT_CONTEXT = ([0, 1, 2], [0.5, 0.35, 0.15])
QUESTION_CONTEXT = ([0, 1, 2, 3, 4, 5], [0.15, 0.25, 0.25, 0.15, 0.1, 0.1])
RECENT = 30  # "recent" context items: among the topic's last RECENT informative items
NEAR_COSINE = 0.9  # a reply, fact or summary to what it was made from
SUMMARY_MAX_SOURCES = 50
TOKENS_MESSAGES = 1000


@dataclass(frozen=True)
class ScaleSpec:
    """The sizes of one scale: ``small_users`` x ``small_items``, and one user per ``curve`` size (the
    largest is the heavy user)."""

    name: str
    small_users: int
    small_items: int
    curve: tuple[int, ...]
    topics: int
    renderings: int
    deletion_items: int = 100  # a benchmark deletion: Dep(M) of about this many items
    seed: int = 14

    @property
    def heavy_items(self) -> int:
        return max(self.curve)


SPECS = {
    "quick": ScaleSpec(
        "quick", small_users=100, small_items=100, curve=(1_000, 3_000, 10_000), topics=12, renderings=2,
        deletion_items=30,
    ),
    "full": ScaleSpec(
        "full", small_users=10_000, small_items=100, curve=(1_000, 3_000, 10_000, 30_000, 100_000), topics=40,
        renderings=4,
    ),
}


def tokens_username(spec: ScaleSpec) -> str:
    """The user whose history holds exactly TOKENS_MESSAGES messages (context tokens per turn)."""
    return f"{PREFIX}{spec.name}-m{TOKENS_MESSAGES}"


def username(spec: ScaleSpec, *, size: int | None = None, index: int | None = None) -> str:
    """The user of a curve ``size``, or small user number ``index``."""
    return f"{PREFIX}{spec.name}-n{size}" if size is not None else f"{PREFIX}{spec.name}-u{index:05d}"


# ---------------------------------------------------------------------------------------------- vectors


@dataclass
class Anchors:
    """Real embeddings of the sample: per template key, its renderings' texts and vectors and the noise
    that puts a synthetic vector as far from one of them as two real renderings are from each other."""

    texts: dict[tuple[int, str, int], list[str]]
    vectors: dict[tuple[int, str, int], np.ndarray]
    sigma: dict[tuple[int, str, int], float]
    fixed: dict[str, np.ndarray]
    sample_size: int
    mean_cosine: float


def sigma_for(cosine: float, dimensions: int) -> float:
    """Noise per coordinate such that normalise(v + noise) has ``cosine`` to a unit vector v."""
    cosine = min(max(cosine, 0.05), 0.999)
    return float(np.sqrt((1.0 / cosine**2 - 1.0) / dimensions))


def anchors_embed(spec: ScaleSpec) -> Anchors:
    """Embed the sample with the real embedder."""
    rng = random.Random(spec.seed)
    keyed: dict[tuple[int, str, int], list[str]] = {}
    for t, topic in enumerate(texts.TOPICS[: spec.topics]):
        for kind, templates in (("s", texts.STATEMENTS), ("q", texts.QUESTIONS)):
            for i, template in enumerate(templates):
                rendered = (texts.render(template, topic, rng) for _ in range(spec.renderings))
                keyed[(t, kind, i)] = list(dict.fromkeys(rendered))
    flat = [text for group in keyed.values() for text in group] + [texts.ACK, texts.NOTHING]
    embedded = get_embedder().embed(flat)
    vectors, sigma, cosines, at = {}, {}, [], 0
    dimensions = embedded.shape[1]
    for key, group in keyed.items():
        block = embedded[at : at + len(group)]
        at += len(group)
        vectors[key] = block
        pairs = [float(block[i] @ block[j]) for i in range(len(group)) for j in range(i + 1, len(group))]
        cosine = float(np.mean(pairs)) if pairs else 0.8
        cosines.append(cosine)
        sigma[key] = sigma_for(cosine, dimensions)
    fixed = {texts.ACK: embedded[at], texts.NOTHING: embedded[at + 1]}
    return Anchors(keyed, vectors, sigma, fixed, len(flat), float(np.mean(cosines)))


def _unit(v: np.ndarray) -> np.ndarray:
    return (v / max(float(np.linalg.norm(v)), 1e-9)).astype(np.float32)


# ---------------------------------------------------------------------------------------------- histories


@dataclass
class History:
    """One user's generated history, in local indices (0..n-1, chronological)."""

    kinds: list[str] = field(default_factory=list)
    roles: list[str | None] = field(default_factory=list)
    contents: list[str] = field(default_factory=list)
    informative: list[bool] = field(default_factory=list)
    conversation: list[int] = field(default_factory=list)  # local conversation index (messages, summaries)
    question: list[int] = field(default_factory=list)  # a reply's question (local), else -1
    source_count: list[int] = field(default_factory=list)
    vectors: list[np.ndarray] = field(default_factory=list)
    edges: list[tuple[int, int]] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    times: np.ndarray | None = None

    def cut_after_messages(self, messages: int) -> History:
        """The history up to and including its ``messages``-th message (edges only ever point forward)."""
        seen, end = 0, len(self.kinds)
        for i, kind in enumerate(self.kinds):
            seen += kind == "message"
            if seen == messages:
                end = i + 1
                break
        for name in ("kinds", "roles", "contents", "informative", "conversation", "question", "source_count",
                     "vectors"):
            setattr(self, name, getattr(self, name)[:end])
        self.edges = [(a, b) for a, b in self.edges if b < end]
        self.titles = self.titles[: max((c for c in self.conversation if c >= 0), default=-1) + 1]
        self.times = self.times[:end]
        return self


class _Writer:
    """Builds one history turn by turn, with the topic pools that contexts are drawn from."""

    def __init__(self, *, spec: ScaleSpec, anchors: Anchors, rng: random.Random, noise: np.random.Generator):
        self.spec, self.anchors, self.rng, self.noise = spec, anchors, rng, noise
        self.h = History()
        self.pools: dict[int, list[int]] = {}
        self.everything: list[int] = []
        self.dimensions = next(iter(anchors.fixed.values())).shape[0]

    def add(self, *, kind: str, role: str | None, text: str, vector: np.ndarray, conversation: int = -1,
            question: int = -1, sources: int = 0) -> int:
        h = self.h
        h.kinds.append(kind)
        h.roles.append(role)
        h.contents.append(text)
        h.informative.append(holds_information(kind=kind, role=role, text=text))
        h.conversation.append(conversation)
        h.question.append(question)
        h.source_count.append(sources)
        h.vectors.append(vector)
        return len(h.kinds) - 1

    def near(self, vector: np.ndarray, cosine: float = NEAR_COSINE) -> np.ndarray:
        sigma = sigma_for(cosine, self.dimensions)
        return _unit(vector + sigma * self.noise.standard_normal(self.dimensions, dtype=np.float32))

    def sentence(self, topic: int, kind: str) -> tuple[str, np.ndarray]:
        templates = texts.STATEMENTS if kind == "s" else texts.QUESTIONS
        i = self.rng.randrange(len(templates))
        key = (topic, kind, i)
        j = self.rng.randrange(len(self.anchors.texts[key]))
        anchor = self.anchors.vectors[key][j]
        if self.rng.random() < 0.1:
            return self.anchors.texts[key][j], anchor.astype(np.float32)
        text = texts.render(templates[i], texts.TOPICS[topic], self.rng)
        noise = self.anchors.sigma[key] * self.noise.standard_normal(self.dimensions, dtype=np.float32)
        return text, _unit(anchor + noise)

    def context(self, topic: int, weights: tuple[list[int], list[float]]) -> list[int]:
        k = self.rng.choices(*weights)[0]
        pool = self.pools.get(topic, [])
        picked: list[int] = []
        for _ in range(k):
            if self.everything and (not pool or self.rng.random() < 0.1):
                candidate = self.rng.choice(self.everything)  # retrieved from another topic
            elif not pool:
                break
            elif self.rng.random() < 0.6:
                candidate = self.rng.choice(pool[-RECENT:])
            else:
                candidate = self.rng.choice(pool)
            if candidate not in picked:
                picked.append(candidate)
        return picked

    def remember(self, topic: int, node: int) -> None:
        if self.h.informative[node]:
            self.pools.setdefault(topic, []).append(node)
            self.everything.append(node)

    def turn(self, *, topic: int, conversation: int) -> tuple[int, str | None]:
        """One turn; returns the user message and, for a statement, its text."""
        rng, h = self.rng, self.h
        statement = rng.random() < 0.55
        text, vector = self.sentence(topic, "s" if statement else "q")
        if not h.titles[conversation]:
            h.titles[conversation] = conversation_title_from(text)
        user = self.add(kind="message", role="user", text=text, vector=vector, conversation=conversation)
        context = self.context(topic, STATEMENT_CONTEXT if statement else QUESTION_CONTEXT)
        if statement:
            reply_text, reply_vector = (
                (texts.ACK, self.anchors.fixed[texts.ACK]) if rng.random() < 0.8
                else (texts.statement_reply(text), self.near(vector))
            )
        elif context:
            reply_text, reply_vector = texts.answer(h.contents[context[0]]), self.near(h.vectors[context[0]])
        else:
            reply_text, reply_vector = texts.NOTHING, self.anchors.fixed[texts.NOTHING]
        reply = self.add(
            kind="message", role="assistant", text=reply_text, vector=reply_vector, conversation=conversation,
            question=user,
        )
        h.edges += [(src, reply) for src in [user, *context]]
        self.remember(topic, user)
        self.remember(topic, reply)
        if statement and rng.random() < 0.5:
            fact = self.add(kind="fact", role=None, text=texts.fact(text), vector=self.near(vector))
            h.edges.append((user, fact))
            self.remember(topic, fact)
        return user, text if statement else None


def history_generate(*, spec: ScaleSpec, anchors: Anchors, items: int, seed: int) -> History:
    """A history of ``items`` items (messages, facts, summaries) over conversations of 6-20 turns."""
    rng = random.Random(seed)
    writer = _Writer(spec=spec, anchors=anchors, rng=rng, noise=np.random.default_rng(seed))
    h = writer.h
    favourites = rng.sample(range(spec.topics), min(6, spec.topics))
    while len(h.kinds) < items:
        conversation = len(h.titles)
        h.titles.append("")
        main = rng.choice(favourites)
        users, statements = [], []
        for _ in range(rng.randint(6, 20)):
            if len(h.kinds) >= items - 1:
                break
            topic = main if rng.random() < 0.8 else rng.choice(favourites)
            user, statement = writer.turn(topic=topic, conversation=conversation)
            users.append(user)
            if statement:
                statements.append(user)
        if statements and len(h.kinds) < items:
            sources = users[-SUMMARY_MAX_SOURCES:]
            mean = _unit(np.mean([h.vectors[s] for s in statements], axis=0))
            text = texts.summary(texts.TOPICS[main][0], [h.contents[s] for s in statements])
            node = writer.add(
                kind="summary", role=None, text=text, vector=writer.near(mean), conversation=conversation,
                sources=len(sources),
            )
            h.edges += [(s, node) for s in sources]
            writer.remember(main, node)
        if not users:
            h.titles.pop()
            break
    # Two years of history, in order.
    h.times = np.sort(np.random.default_rng(seed + 1).uniform(0, 730 * 86400, len(h.kinds)))
    return h


# ---------------------------------------------------------------------------------------------- loading

# The tables a load writes, parents first.
TABLES = [
    "auth_user", "chat_conversation", "memory_node", "chat_message", "memory_fact", "memory_summary",
    "memory_embedding", "provenance_edge",
]


def _secondary_indexes(cursor, tables: list[str]) -> list[tuple[str, str, str]]:
    """(table, name, statement to rebuild it) for every index but primary keys; a unique or exclusion
    constraint's index is rebuilt as the constraint."""
    cursor.execute(
        """
        SELECT t.relname, i.relname, c.conname, pg_get_constraintdef(c.oid), pg_get_indexdef(i.oid)
        FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
        LEFT JOIN pg_constraint c ON c.conindid = i.oid AND c.conrelid = t.oid
        WHERE t.relname = ANY(%s) AND NOT x.indisprimary AND t.relnamespace = 'public'::regnamespace
        ORDER BY t.relname, i.relname
        """,
        [tables],
    )
    out = []
    for table, index, constraint, constraint_def, index_def in cursor.fetchall():
        if constraint:
            out.append((table, constraint, f'ALTER TABLE "{table}" ADD CONSTRAINT "{constraint}" {constraint_def}'))
        else:
            out.append((table, index, index_def))
    return out


def _drop(cursor, table: str, name: str, statement: str) -> None:
    if statement.startswith("ALTER TABLE"):
        cursor.execute(f'ALTER TABLE "{table}" DROP CONSTRAINT "{name}"')
    else:
        cursor.execute(f'DROP INDEX "{name}"')


def _next_id(cursor, table: str, column: str = "id") -> int:
    cursor.execute(f'SELECT coalesce(max("{column}"), 0) + 1 FROM "{table}"')
    return cursor.fetchone()[0]


def _sequences_reset(cursor) -> None:
    for table in ("auth_user", "chat_conversation", "memory_node", "provenance_edge"):
        cursor.execute(
            f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), (SELECT coalesce(max(id), 1) FROM \"{table}\"))"
        )


@dataclass
class LoadReport:
    users: int = 0
    conversations: int = 0
    nodes: int = 0
    messages: int = 0
    facts: int = 0
    summaries: int = 0
    edges: int = 0
    informative: int = 0
    embedded_sample: int = 0
    sample_mean_cosine: float = 0.0
    seconds: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def _copy(cursor, table: str, columns: list[str], types: list[str], rows) -> int:
    count = 0
    statement = f'COPY "{table}" ({", ".join(columns)}) FROM STDIN (FORMAT BINARY{", FREEZE" if _FREEZE[0] else ""})'
    with cursor.copy(statement) as copy:
        copy.set_types(types)
        for row in rows:
            copy.write_row(row)
            count += 1
    return count


_FREEZE = [False]  # COPY FREEZE: only into tables truncated in the same transaction (a fresh dataset)


def scale_load(*, spec: ScaleSpec, fresh: bool, stdout=None) -> LoadReport:
    """Generate ``spec``'s histories and bulk-load them into the current database. ``fresh``: the user-data
    tables are emptied first (a dataset database of its own) and loaded with COPY FREEZE; otherwise the
    scale users of an earlier load are removed and the rest of the database is left as it is."""
    say = stdout.write if stdout is not None else logger.info
    report = LoadReport()
    started = time.perf_counter()
    anchors = anchors_embed(spec)
    report.embedded_sample, report.sample_mean_cosine = anchors.sample_size, round(anchors.mean_cosine, 3)
    report.seconds["embed_sample"] = round(time.perf_counter() - started, 1)
    say(f"  embedded {anchors.sample_size} sample texts in {report.seconds['embed_sample']} s")

    users = [(username(spec, size=size), size) for size in spec.curve]
    users += [(username(spec, index=i), spec.small_items) for i in range(spec.small_users)]
    tick = time.perf_counter()
    histories = [
        history_generate(spec=spec, anchors=anchors, items=items, seed=spec.seed * 1_000_003 + i)
        for i, (_, items) in enumerate(users)
    ]
    users.append((tokens_username(spec), 0))
    histories.append(
        history_generate(spec=spec, anchors=anchors, items=TOKENS_MESSAGES * 3 // 2, seed=spec.seed - 1)
        .cut_after_messages(TOKENS_MESSAGES)
    )
    report.seconds["generate"] = round(time.perf_counter() - tick, 1)
    say(f"  generated {sum(len(h.kinds) for h in histories)} items in {report.seconds['generate']} s")

    with transaction.atomic(), connection.cursor() as django_cursor:
        cursor = django_cursor.cursor  # the psycopg cursor underneath, for COPY
        tick = time.perf_counter()
        if not fresh:
            scale_users_remove()  # before the triggers go off: the ORM's part of it cascades
        # Pending foreign-key checks (of this transaction's earlier writes) would block ALTER TABLE: run them now.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET LOCAL maintenance_work_mem = '3GB'")
        cursor.execute("SET LOCAL max_parallel_maintenance_workers = 1")
        cursor.execute("SET LOCAL synchronous_commit = off")
        try:
            with transaction.atomic():
                cursor.execute("SET LOCAL session_replication_role = replica")  # no per-row FK triggers
        except Exception:  # not a superuser: the triggers run, the load is slower
            logger.info("session_replication_role not settable; foreign keys checked row by row")
        if fresh:
            cursor.execute(f"TRUNCATE {', '.join(TABLES)} CASCADE")
        _FREEZE[0] = fresh
        indexes = _secondary_indexes(cursor, TABLES)
        for table, name, statement in indexes:
            _drop(cursor, table, name, statement)
        report.seconds["prepare"] = round(time.perf_counter() - tick, 1)
        try:
            tick = time.perf_counter()
            _write(cursor, spec=spec, users=users, histories=histories, report=report)
            report.seconds["copy"] = round(time.perf_counter() - tick, 1)
            say(f"  copied {report.nodes} nodes, {report.edges} edges in {report.seconds['copy']} s")
        finally:
            _FREEZE[0] = False
        cursor.execute("SET LOCAL session_replication_role = DEFAULT")
        tick = time.perf_counter()
        # Cheap ones first; the vector index last (the longest).
        for _table, name, statement in sorted(indexes, key=lambda i: ("hnsw" in i[2] or "ivfflat" in i[2], i[1])):
            one = time.perf_counter()
            cursor.execute(statement)
            report.seconds[f"index {name}"] = round(time.perf_counter() - one, 1)
        report.seconds["indexes"] = round(time.perf_counter() - tick, 1)
        say(f"  rebuilt {len(indexes)} indexes in {report.seconds['indexes']} s")
        _sequences_reset(cursor)
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
    tick = time.perf_counter()
    with connection.cursor() as cursor:
        if connection.in_atomic_block:
            cursor.execute(f"ANALYZE {', '.join(TABLES)}")
        else:
            cursor.execute(f"VACUUM (ANALYZE) {', '.join(TABLES)}")
    report.seconds["analyze"] = round(time.perf_counter() - tick, 1)
    report.seconds["total"] = round(time.perf_counter() - started, 1)
    return report


def _write(cursor, *, spec: ScaleSpec, users, histories: list[History], report: LoadReport) -> None:
    from pgvector.psycopg.vector import register_vector_info
    from psycopg.types import TypeInfo

    register_vector_info(cursor, TypeInfo.fetch(cursor.connection, "vector"))
    now = datetime.now(UTC).replace(microsecond=0)
    epoch = now - timedelta(days=731)
    backend = get_embedder().name

    user_base = _next_id(cursor, "auth_user")
    report.users = _copy(
        cursor, "auth_user",
        ["id", "password", "is_superuser", "username", "first_name", "last_name", "email", "is_staff", "is_active",
         "date_joined"],
        ["int4", "text", "bool", "text", "text", "text", "text", "bool", "bool", "timestamptz"],
        ((user_base + u, "!", False, name, "", "", "", False, True, epoch) for u, (name, _) in enumerate(users)),
    )

    # Global ids in time order across users, as if they had all been chatting at once.
    sizes = [len(h.kinds) for h in histories]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    order = np.argsort(np.concatenate([h.times for h in histories]), kind="stable")
    node_base = _next_id(cursor, "memory_node")
    global_id = np.empty(len(order), dtype=np.int64)
    global_id[order] = node_base + np.arange(len(order), dtype=np.int64)
    owner_of = np.repeat(np.arange(len(histories)), sizes)
    local_of = np.arange(len(order)) - offsets[owner_of]

    conversation_base = _next_id(cursor, "chat_conversation")
    conversation_offsets = np.concatenate([[0], np.cumsum([len(h.titles) for h in histories])]).astype(np.int64)

    def when(h: History, i: int) -> datetime:
        return epoch + timedelta(seconds=float(h.times[i]))

    def conversations():
        for u, h in enumerate(histories):
            first: dict[int, int] = {}
            last: dict[int, int] = {}
            for i, c in enumerate(h.conversation):
                if c >= 0:
                    first.setdefault(c, i)
                    last[c] = i
            for c, title in enumerate(h.titles):
                yield (int(conversation_base + conversation_offsets[u] + c), title, when(h, first[c]),
                       when(h, last[c]), user_base + u, None, False)

    report.conversations = _copy(
        cursor, "chat_conversation",
        ["id", "title", "created_at", "updated_at", "owner_id", "external_key", "temporary"],
        ["int8", "text", "timestamptz", "timestamptz", "int4", "text", "bool"],
        conversations(),
    )

    def in_order():
        for g in order:
            u = int(owner_of[g])
            yield u, histories[u], int(local_of[g]), int(global_id[g])

    report.nodes = _copy(
        cursor, "memory_node",
        ["id", "owner_id", "kind", "content", "created_at", "retrievable", "informative"],
        ["int8", "int4", "text", "text", "timestamptz", "bool", "bool"],
        ((gid, user_base + u, h.kinds[i], h.contents[i], when(h, i), True, h.informative[i])
         for u, h, i, gid in in_order()),
    )
    report.informative = sum(sum(h.informative) for h in histories)

    def conversation_id(u: int, h: History, i: int) -> int:
        return int(conversation_base + conversation_offsets[u] + h.conversation[i])

    report.messages = _copy(
        cursor, "chat_message",
        ["node_ptr_id", "role", "conversation_id", "question_id", "reply_removed", "owner_id"],
        ["int8", "text", "int8", "int8", "bool", "int4"],
        ((gid, h.roles[i], conversation_id(u, h, i),
          int(global_id[offsets[u] + h.question[i]]) if h.question[i] >= 0 else None, False, user_base + u)
         for u, h, i, gid in in_order() if h.kinds[i] == "message"),
    )
    derivation = {"backend": "scale-generator", "version": GENERATOR_VERSION}
    report.facts = _copy(
        cursor, "memory_fact",
        ["node_ptr_id", "status", "version", "derivation", "rectified", "rebuilt_at", "supersedes_id", "owner_id"],
        ["int8", "text", "int4", "jsonb", "bool", "timestamptz", "int8", "int4"],
        ((gid, "active", 1, derivation, False, when(h, i), None, user_base + u)
         for u, h, i, gid in in_order() if h.kinds[i] == "fact"),
    )
    report.summaries = _copy(
        cursor, "memory_summary",
        ["node_ptr_id", "status", "version", "derivation", "source_count", "rebuilt_at", "conversation_id",
         "owner_id"],
        ["int8", "text", "int4", "jsonb", "int4", "timestamptz", "int8", "int4"],
        ((gid, "active", 1, derivation, h.source_count[i], when(h, i), conversation_id(u, h, i), user_base + u)
         for u, h, i, gid in in_order() if h.kinds[i] == "summary"),
    )
    # The node's kind and flag on its embedding, as the database's trigger would have set them (it is off here).
    _copy(
        cursor, "memory_embedding",
        ["node_id", "vector", "backend", "created_at", "owner_id", "kind", "retrievable"],
        ["int8", "vector", "text", "timestamptz", "int4", "text", "bool"],
        ((gid, h.vectors[i], backend, when(h, i), user_base + u, h.kinds[i], h.informative[i])
         for u, h, i, gid in in_order()),
    )
    edge_base = _next_id(cursor, "provenance_edge")

    def edges():
        n = edge_base
        for u, h in enumerate(histories):
            for src, dst in h.edges:
                yield (n, when(h, dst), int(global_id[offsets[u] + dst]), int(global_id[offsets[u] + src]),
                       user_base + u)
                n += 1

    report.edges = _copy(
        cursor, "provenance_edge", ["id", "created_at", "dst_id", "src_id", "owner_id"],
        ["int8", "timestamptz", "int8", "int8", "int4"], edges(),
    )


def scale_users_remove() -> int:
    """Remove every scale user and all they own, in bulk (SQL, not the ORM's row-by-row cascade)."""
    User = get_user_model()
    owners = list(User.objects.filter(username__startswith=PREFIX).values_list("pk", flat=True))
    if not owners:
        return 0
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("CREATE TEMP TABLE scale_gone AS SELECT id FROM memory_node WHERE owner_id = ANY(%s)", [owners])
        cursor.execute("DELETE FROM provenance_edge WHERE src_id IN (SELECT id FROM scale_gone) "
                       "OR dst_id IN (SELECT id FROM scale_gone)")
        cursor.execute("DELETE FROM memory_embedding WHERE owner_id = ANY(%s)", [owners])
        for table in ("chat_message", "memory_fact", "memory_summary"):
            cursor.execute(f"DELETE FROM {table} WHERE node_ptr_id IN (SELECT id FROM scale_gone)")
        cursor.execute("DELETE FROM memory_node WHERE owner_id = ANY(%s)", [owners])
        cursor.execute("DELETE FROM chat_conversation WHERE owner_id = ANY(%s)", [owners])
        cursor.execute("DROP TABLE scale_gone")
        User.objects.filter(pk__in=owners).delete()  # what is left (requests, audit, tokens) through the ORM
    return len(owners)


def fingerprint(spec: ScaleSpec) -> str:
    """What a stored dataset must match to be reused: the sizes, the generator, the embedder and the schema."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT app, name FROM django_migrations ORDER BY app, name")
        migrations = cursor.fetchall()
    embedder = get_embedder()
    payload = {"spec": asdict(spec), "generator": GENERATOR_VERSION, "embedder": embedder.name,
               "dimensions": embedder.dimensions, "migrations": migrations}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]
