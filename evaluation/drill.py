"""The forget drill: seed a synthetic person through every way in, forget them through the front door, then look
for them everywhere a trace could hide.

1. Seed: a new account (REST sign-up) says who they are over the REST chat, the websocket and ``/v1``, until the
   person's name, city and number are in messages, replies, embeddings, a fact, a summary, a conversation title,
   an edge, a pending (never confirmed) preview and the account export.
2. Forget: one request in words over the REST chat, then confirm; a possible residue that verification reports
   is forgotten as the Forget panel offers it (one follow-up preview of those items, confirmed).
3. Search: every text and JSON column of every table (SQL), the account's vectors (by similarity to what was
   said), every list and detail endpoint of the API, the export, the pages, a new question over REST and ``/v1``.

The requests go through Django's test client and the channels communicator, in this process, against the
configured database; the account is deleted at the end unless asked to keep it.
"""

from __future__ import annotations

import json
import random
import secrets
import string
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.db import connection
from django.test import Client
from pgvector.django import CosineDistance

from chat.models import Conversation, Message, Role
from dellm_site.ai.embedding import get_embedder
from dellm_site.ai.text import is_question
from memory.models import Edge, Embedding, Fact, Node, Summary
from provenance.models import DeletionRequest, DeletionStatus

WAIT_S = 60
_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"


@dataclass(frozen=True)
class Person:
    first: str
    last: str
    city: str
    number: str

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def needles(self) -> list[str]:
        """What must not survive, each searched for on its own."""
        return [self.first, self.last, self.city, self.number]


@dataclass
class DrillReport:
    person: Person
    seeded: dict[str, bool] = field(default_factory=dict)
    checked: list[str] = field(default_factory=list)
    traces: list[str] = field(default_factory=list)
    manifests: list[dict] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(self.seeded.values()) and not self.traces


def _word(rng: random.Random, syllables: int) -> str:
    return "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(syllables)).capitalize()


def person_make(*, rng: random.Random) -> Person:
    """A person no one in the database has mentioned: invented name and city, a random seven-digit number."""
    while True:
        person = Person(
            first=_word(rng, 3),
            last=_word(rng, 3) + "ski",
            city=_word(rng, 2) + "wick",
            number=str(rng.randint(10**6, 10**7 - 1)),
        )
        if not any(Node.objects.filter(content__icontains=n).exists() for n in person.needles):
            return person


class _Visitor:
    """One account's ways in: the REST API (token), the pages and the websocket (session), and /v1."""

    def __init__(self) -> None:
        hosts = [h for h in settings.ALLOWED_HOSTS if h and not h.startswith((".", "*"))]
        self.host = hosts[0] if hosts else "testserver"
        secure = {"wsgi.url_scheme": "https"} if settings.SECURE_SSL_REDIRECT else {}
        self.api = Client(HTTP_HOST=self.host, **secure)
        self.pages = Client(HTTP_HOST=self.host, **secure)
        self.token = ""

    def call(self, method: str, path: str, body: dict | None = None, expect: int | None = 200) -> Any:
        response = (
            getattr(self.api, method)(
                path,
                json.dumps(body) if body is not None else None,
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Token {self.token}",
            )
            if method == "post"
            else self.api.get(path, HTTP_AUTHORIZATION=f"Token {self.token}")
        )
        if expect is not None and response.status_code != expect:
            raise RuntimeError(f"{method.upper()} {path} answered {response.status_code}: {response.content[:300]!r}")
        return response.json() if response.content else None

    def v1(self, text: str) -> str:
        response = self.api.post(
            "/v1/chat/completions",
            json.dumps({"model": "dellm", "messages": [{"role": "user", "content": text}]}),
            content_type="application/json",
            HTTP_AUTHORIZATION=f"Bearer {self.token}",
        )
        if response.status_code != 200:
            raise RuntimeError(f"/v1 answered {response.status_code}: {response.content[:300]!r}")
        return response.json()["choices"][0]["message"]["content"]

    def page(self, path: str) -> str:
        return self.pages.get(path).content.decode(errors="replace")

    def websocket(self, conversation_id: int, text: str) -> list[dict]:
        from dellm_site.asgi import application  # the real router, origin check and session auth

        cookie = f"{settings.SESSION_COOKIE_NAME}={self.pages.cookies[settings.SESSION_COOKIE_NAME].value}"
        scheme = "https" if settings.SECURE_SSL_REDIRECT else "http"
        headers = [
            (b"cookie", cookie.encode()),
            (b"host", self.host.encode()),
            (b"origin", f"{scheme}://{self.host}".encode()),
        ]

        async def turn() -> list[dict]:
            communicator = WebsocketCommunicator(application, f"/ws/chat/{conversation_id}/", headers=headers)
            connected, _ = await communicator.connect(timeout=30)
            if not connected:
                raise RuntimeError("the websocket refused the drill's session")
            frames = []
            try:
                await communicator.send_json_to({"type": "message", "content": text})
                while not frames or frames[-1]["type"] not in ("reply", "error", "forget_preview", "forget_question"):
                    frames.append(await communicator.receive_json_from(timeout=WAIT_S))
            finally:
                await communicator.disconnect()
            return frames

        return async_to_sync(turn)()


def _wait(check: Callable[[], bool]) -> bool:
    """Background jobs (embeddings, facts, summaries) may run in a worker: give them time."""
    deadline = time.monotonic() + WAIT_S
    while True:
        if check():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)


def _holding(queryset, needles: list[str], column: str = "content"):
    from django.db.models import Q

    query = Q()
    for needle in needles:
        query |= Q(**{f"{column}__icontains": needle})
    return queryset.filter(query)


def drill_seed(*, visitor: _Visitor, person: Person, password: str, username: str) -> dict[str, Any]:
    """Sign up and tell DeLLM about the person over REST, the websocket and /v1; returns the account's ids."""
    visitor.token = visitor.call("post", "/api/auth/signup/", {"username": username, "password": password}, 201)[
        "token"
    ]
    login = visitor.pages.post("/accounts/login/", {"username": username, "password": password})
    if login.status_code != 302:
        raise RuntimeError(f"signing in answered {login.status_code}")
    home = visitor.call("post", "/api/conversations/", {}, 201)["id"]
    # Three statements in one conversation: its title, a summary (every few user messages) and facts.
    for text in (f"My name is {person.name}.", f"I live in {person.city}.", f"My locker number is {person.number}."):
        visitor.call("post", f"/api/conversations/{home}/messages/", {"content": text}, 201)
    other = visitor.call("post", "/api/conversations/", {}, 201)["id"]
    frames = visitor.websocket(other, "Where do I live?")
    if frames[-1]["type"] != "reply":
        raise RuntimeError(f"the websocket turn ended with {frames[-1]}")
    visitor.v1("What is my name?")
    visitor.v1("What is my locker number?")
    # A preview never confirmed: it holds the request's words until it expires or the words are forgotten.
    visitor.call("post", "/api/forget/preview/", {"mode": "keyword", "query": person.number}, 201)
    return {"home": home, "other": other}


def drill_seeded(*, visitor: _Visitor, person: Person, user) -> dict[str, bool]:
    """Where the person now is: each store and read path the drill must later find empty."""
    needles = person.needles
    mine = Node.objects.filter(owner=user)
    said = _holding(Message.objects.filter(owner=user, role=Role.USER), needles)
    return {
        "messages": said.exists(),
        "replies": _wait(lambda: _holding(Message.objects.filter(owner=user, role=Role.ASSISTANT), needles).exists()),
        "embeddings": _wait(lambda: Embedding.objects.filter(node__in=_holding(mine, needles)).count() >= said.count()),
        "fact": _wait(lambda: _holding(Fact.objects.filter(owner=user), needles).exists()),
        "summary": _wait(lambda: _holding(Summary.objects.filter(owner=user), needles).exists()),
        "conversation title": _holding(Conversation.objects.filter(owner=user), needles, "title").exists(),
        "edge": Edge.objects.filter(src__in=_holding(mine, needles)).exists(),
        "pending preview": any(
            needle in json.dumps(r.working)
            for r in DeletionRequest.objects.filter(owner=user, status=DeletionStatus.PREVIEWED)
            for needle in needles
        ),
        "export": any(n in json.dumps(visitor.call("get", "/api/account/export/")) for n in needles),
    }


def drill_forget(*, visitor: _Visitor, person: Person, conversation_id: int) -> list[dict]:
    """The request in words over the REST chat, confirmed; then the possible residue it reports, as the Forget
    panel offers it. Returns the manifests."""
    text = (
        f"Forget that my name is {person.name}, that I live in {person.city} "
        f"and that my locker number is {person.number}."
    )
    answer = visitor.call("post", f"/api/conversations/{conversation_id}/messages/", {"content": text})
    if "forget_preview" not in answer:
        raise RuntimeError(f"the request to forget was not recognised: {sorted(answer)}")
    manifests = [visitor.call("post", f"/api/forget/{answer['forget_preview']['request_id']}/confirm/", {})]
    residue = [
        e["id"] for e in manifests[0]["verification"].get("possible_residue", []) if e.get("excerpt") is not None
    ]
    if residue:
        preview = visitor.call("post", "/api/forget/preview/", {"mode": "ids", "message_ids": residue}, 201)
        manifests.append(visitor.call("post", f"/api/forget/{preview['request_id']}/confirm/", {}))
    for manifest in manifests:
        _wait(
            lambda m=manifest: bool(visitor.call("get", f"/api/forget/{m['request_id']}/").get("rebuilds_completed_at"))
        )
    return manifests


def _sql_hits(needles: list[str]) -> tuple[int, list[str]]:
    """Every text, varchar and JSON column of every table, searched for each needle."""
    hits = []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public' "
            "AND data_type IN ('text', 'character varying', 'jsonb', 'json')"
        )
        columns = cursor.fetchall()
        for table, column in columns:
            for needle in needles:
                cursor.execute(f'SELECT count(*) FROM "{table}" WHERE "{column}"::text ILIKE %s', [f"%{needle}%"])
                count = cursor.fetchone()[0]
                if count:
                    hits.append(f"SQL {table}.{column}: {count} row(s) hold {needle!r}")
    return len(columns), hits


def drill_search(*, visitor: _Visitor, person: Person, user, said: list[str], deleted: set[int]) -> tuple[list, list]:
    """Look for the person everywhere; returns (what was checked, the traces found)."""
    needles = person.needles
    checked, traces = [], []

    def look(where: str, text: str) -> None:
        checked.append(where)
        lowered = text.lower()
        traces.extend(f"{where} holds {n!r}" for n in needles if n.lower() in lowered)

    columns, hits = _sql_hits(needles)
    checked.append(f"SQL: {columns} text and JSON columns of every table")
    traces.extend(hits)

    # A vector near a statement of the person is a trace unless its item is a question (which holds none).
    limit = 1.0 - settings.DELLM_FORGET_VERIFY_SIMILARITY
    near: dict[int, str] = {}
    for vector in get_embedder().embed(said):
        near.update(
            Embedding.objects.filter(owner=user)
            .annotate(d=CosineDistance("vector", [float(x) for x in vector]))
            .filter(d__lte=limit)
            .values_list("node_id", "node__content")
        )
    checked.append(f"vectors: the account's embeddings within similarity {settings.DELLM_FORGET_VERIFY_SIMILARITY}")
    traces.extend(
        f"vector of item {pk} is near what was said" for pk, text in sorted(near.items()) if not is_question(text)
    )
    left = Node.objects.filter(pk__in=deleted).count() + Edge.objects.filter(src_id__in=deleted).count()
    checked.append("deleted ids: no item or edge left")
    if left:
        traces.append(f"{left} deleted item(s) or edge(s) still stored")

    def fetched(path: str):
        """GET ``path`` as the person, look through the answer for a trace, and return it."""
        answer = visitor.call("get", path)
        look(f"GET {path}", json.dumps(answer))
        return answer

    for conversation in fetched("/api/conversations/"):
        fetched(f"/api/conversations/{conversation['id']}/")
        for message in fetched(f"/api/conversations/{conversation['id']}/messages/"):
            fetched(f"/api/messages/{message['id']}/influence/")
        look(f"page /c/{conversation['id']}/", visitor.page(f"/c/{conversation['id']}/"))
    fetched("/api/memory/")
    for request in fetched("/api/forget/"):
        fetched(f"/api/forget/{request['request_id']}/")
    fetched("/api/account/export/")
    for path in ("/memory/", "/forget/history/?all=1", "/account/"):
        look(f"page {path}", visitor.page(path))

    question = "What is my name, where do I live and what is my locker number?"
    fresh = visitor.call("post", "/api/conversations/", {}, 201)["id"]
    answer = visitor.call("post", f"/api/conversations/{fresh}/messages/", {"content": question}, 201)
    look("a new question over REST", json.dumps(answer))
    used = set((answer.get("reply") or {}).get("context") or []) & deleted
    if used:
        traces.append(f"a new reply used deleted items {sorted(used)}")
    look("a new question over /v1", visitor.v1(question))
    return checked, traces


def drill_run(*, seed: int | None = None, keep: bool = False, log: Callable[[str], None] = print) -> DrillReport:
    """Seed, forget, search; the account is deleted afterwards unless ``keep``."""
    from django.contrib.auth import get_user_model

    rng = random.Random(seed)
    person = person_make(rng=rng)
    report = DrillReport(person=person)
    visitor = _Visitor()
    username = "drill-" + "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(10))
    password = secrets.token_urlsafe(18)
    log(f"person: {person.name} of {person.city}, number {person.number} (account {username})")
    ids = drill_seed(visitor=visitor, person=person, password=password, username=username)
    user = get_user_model().objects.get(username=username)
    report.seeded = drill_seeded(visitor=visitor, person=person, user=user)
    for where, present in report.seeded.items():
        log(f"  seeded {where:<20} {'yes' if present else 'NO: the drill could not put the person there'}")
    said = list(
        Message.objects.filter(owner=user, role=Role.USER)
        .filter(content__icontains=person.first)
        .values_list("content", flat=True)
    ) + [f"I live in {person.city}.", f"My locker number is {person.number}."]
    report.manifests = drill_forget(visitor=visitor, person=person, conversation_id=ids["home"])
    deleted = {i for m in report.manifests for i in m.get("deleted_ids", [])}
    for manifest in report.manifests:
        verification = manifest["verification"]
        log(
            f"  forgot {manifest['deleted']} ({manifest['mode']}); verification: {verification['residual_hits']} "
            f"residual hit(s), {len(verification.get('possible_residue', []))} possible residue"
        )
    report.checked, report.traces = drill_search(visitor=visitor, person=person, user=user, said=said, deleted=deleted)
    log(f"  searched {len(report.checked)} places:")
    for where in report.checked:
        log(f"    {where}")
    for trace in report.traces:
        log(f"  TRACE {trace}")
    if not keep:
        visitor.call("post", "/api/account/delete/", {"password": password})
        log(f"  account {username} deleted")
    return report
