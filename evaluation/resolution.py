"""How well a request in words finds the item it names: the right-item and other-item rates.

For every persona (the personas file: ten first-person statements each) the statements are stored as the
chat would store them (messages with their embeddings, facts taken from them by the configured LLM), and
each of the persona's four facts is asked to be forgotten in three phrasings:

- ``verbatim``: the file's own ``forget_request`` (only for the fact it names);
- ``value``: "Forget everything about <answer>" (a name, a place, a number);
- ``category``: the question turned into what it asks about ("which city I live in", "the name of my pet").

Right item: the statement holding the fact is matched. Other item: any other statement of the persona is
matched (statements the file marks as restating the fact in other words are not counted). The matching
thresholds were chosen on the first half of the file; the second half is reported as held out.
"""

from __future__ import annotations

import re
from collections import defaultdict
from contextlib import ExitStack, contextmanager, nullcontext
from dataclasses import dataclass, field
from unittest import mock

from django.contrib.auth import get_user_model
from django.db import transaction

from chat.models import Conversation, Message, Role
from dellm_site.ai.embedding import get_embedder, get_wide_embedder
from dellm_site.ai.llm import get_llm
from dellm_site.errors import ApplicationError
from memory.embeddings import wide_store
from memory.graph import edges_record
from memory.models import Embedding, Fact
from provenance.forgetting import resolution as resolver
from provenance.forgetting.intent_targets import request_gist
from provenance.forgetting.matching import resolved_matches
from provenance.forgetting.services import request_targets

from .systems.common import embedding_cache

STYLES = ("verbatim", "value", "category")


def category_of(question: str) -> str:
    """'Which city does the user live in?' -> 'which city I live in'."""
    text = re.sub(r"\bthe user's\b", "my", question)
    text = re.sub(r"\b(?:does|did) the user\b", "I", text)
    text = re.sub(r"\bis the user\b", "I am", text)
    text = re.sub(r"\bthe user\b", "me", text).rstrip("?").strip()
    return text[:1].lower() + text[1:]


@dataclass
class Tally:
    requests: int = 0
    right: int = 0
    other: int = 0
    related_right: int = 0

    def as_dict(self) -> dict:
        n = self.requests or 1
        return {"requests": self.requests, "right_item_rate": round(self.right / n, 4),
                "other_item_rate": round(self.other / n, 4), "right_offered_as_related": self.related_right}


def _store(user, statements: list[str]) -> list[int]:
    embedder, llm = get_embedder(), get_llm()
    conversation = Conversation.objects.create(owner=user)
    ids = []
    for text, vector in zip(statements, embedder.embed(statements), strict=True):
        message = Message.objects.create(conversation=conversation, owner=user, role=Role.USER, content=text)
        Embedding.objects.create(node=message, owner=user, vector=vector.tolist(), backend=embedder.name)
        ids.append(message.pk)
        facts = llm.extract_facts(text)
        for fact_text, fact_vector in zip(facts, embedder.embed(facts), strict=True):
            fact = Fact.objects.create(owner=user, content=fact_text)
            edges_record(context_ids=[message.pk], dst_id=fact.pk, owner_id=user.pk)
            Embedding.objects.create(node=fact, owner=user, vector=fact_vector.tolist(), backend=embedder.name)
    wide_store(node_ids=list(Embedding.objects.filter(owner=user).values_list("node_id", flat=True)))
    return ids


def resolution_evaluate(personas: list[dict]) -> dict:
    """Right-item and other-item rates per split (tuned / held out) and phrasing, with the misses."""
    tallies: dict[str, Tally] = defaultdict(Tally)
    misses: list[dict] = []
    User = get_user_model()
    for index, persona in enumerate(personas):
        split = "tuned" if index < len(personas) // 2 else "held_out"
        with transaction.atomic():
            user = User.objects.create(username=f"resolution-{index}-{persona.get('id', '')}"[:150])
            ids = _store(user, persona["persona"])
            for number, qa in enumerate(persona["qa"]):
                forgotten = number == persona.get("forget")
                restated = {ids[k] for k in persona.get("indirect", [])} if forgotten else set()
                requests = {"value": f"Forget everything about {qa['answer']}.",
                            "category": f"Please forget {category_of(qa['question'])}."}
                if forgotten:
                    requests["verbatim"] = persona["forget_request"]
                for style, request in requests.items():
                    matched, related = resolved_matches(
                        user=user, targets=request_targets(request), fallback=request_gist(request), context=request
                    )
                    right = ids[qa["fact_index"]]
                    others = (set(matched) & set(ids)) - {right} - restated
                    for key in (f"{split}/{style}", f"{split}/all"):
                        tally = tallies[key]
                        tally.requests += 1
                        tally.right += right in matched
                        tally.other += bool(others)
                        tally.related_right += right in {r["id"] for r in related}
                    if right not in matched or others:
                        misses.append({"split": split, "style": style, "request": request, "fact": qa["fact"],
                                       "right_matched": right in matched,
                                       "others": sorted(persona["persona"][ids.index(o)] for o in others)})
            transaction.set_rollback(True)  # nothing of the check stays in the database
    return {"splits": {key: tally.as_dict() for key, tally in sorted(tallies.items())}, "misses": misses[:40]}


@contextmanager
def resolver_settings(overrides: dict[str, float | int]):
    """The resolver's constants (``provenance.forgetting.resolution``: ``MATCH_GAP``, ``WIDE_WEIGHT``...) set to
    ``overrides`` for the block, and put back after it. An unknown name is refused: a typo would score the shipped
    settings under another name."""
    unknown = sorted(name for name in overrides if not (name.isupper() and hasattr(resolver, name)))
    if unknown:
        raise ValueError(f"no such resolver setting: {', '.join(unknown)}")
    with mock.patch.multiple(resolver, **overrides) if overrides else nullcontext():
        yield


def conversation_resolution_evaluate(rows: list[dict], settings: list[dict] | None = None) -> dict | list[dict]:
    """Right-item and other-item rates for a set of users, each with ten statements and requests that name one
    or several of them.

    The format of ``evaluation/intents/independent_*.jsonl``: ``{"type": "user", "user", "statements"}`` and
    ``{"type": "request", "user", "target", "text"}`` (``target`` indexes the user's statements, or is a list of
    indexes for a request naming several). Right item: every statement named is matched; other item: any other
    statement is. A request naming several is also counted apart (``several``), with the share of the statements
    it names that are matched (``named_matched_rate``). A request whose text names nothing readable counts as a
    miss.

    With ``settings`` (a list of overrides of the resolver's constants, see ``resolver_settings``), the statements
    are stored once and every request is resolved under each in turn; one result per entry is returned, in order.
    """
    runs = settings if settings is not None else [{}]
    users = {row["user"]: row["statements"] for row in rows if row["type"] == "user"}
    requests = [row for row in rows if row["type"] == "request"]
    found = [_Found() for _ in runs]
    User = get_user_model()
    with transaction.atomic(), ExitStack() as stack:
        for embedder in {get_embedder(), get_wide_embedder()} - {None}:  # a request is read once for every setting
            stack.enter_context(embedding_cache(embedder))
        ids = {}
        for name, statements in users.items():
            user = User.objects.create(username=f"resolution-{name}"[:150])
            ids[name] = (user, _store(user, statements))
        for row in requests:
            user, stored = ids[row["user"]]
            indexes = row["target"] if isinstance(row["target"], list) else [row["target"]]
            for run, overrides in zip(found, runs, strict=True):
                with resolver_settings(overrides):
                    try:
                        matched, related = resolved_matches(
                            user=user, targets=request_targets(row["text"]), fallback=request_gist(row["text"]),
                            context=row["text"],
                        )
                    except ApplicationError:
                        matched, related = {}, []
                run.count(row["text"], [users[row["user"]][i] for i in indexes], {stored[i] for i in indexes},
                          stored, users[row["user"]], set(matched), {r["id"] for r in related})
        transaction.set_rollback(True)  # nothing of the check stays in the database
    results = [run.as_dict() for run in found]
    return results if settings is not None else results[0]


@dataclass
class _Found:
    """One setting's tallies over a request set."""

    tally: Tally = field(default_factory=Tally)
    several: Tally = field(default_factory=Tally)
    named: int = 0
    named_found: int = 0
    misses: list[dict] = field(default_factory=list)

    def count(self, request: str, named: list[str], right: set[int], stored: list[int], statements: list[str],
              matched: set[int], offered: set[int]) -> None:
        others = (matched & set(stored)) - right
        for counted in (self.tally, self.several) if len(right) > 1 else (self.tally,):
            counted.requests += 1
            counted.right += right <= matched
            counted.other += bool(others)
            counted.related_right += bool(right - matched) and (right - matched) <= offered
        self.named += len(right)
        self.named_found += len(right & matched)
        if not right <= matched or others:
            self.misses.append({"request": request, "statement": " | ".join(named),
                                "right_matched": right <= matched,
                                "others": sorted(statements[stored.index(o)] for o in others)})

    def as_dict(self) -> dict:
        found = {"all": {**self.tally.as_dict(), "named_matched_rate": round(self.named_found / (self.named or 1), 4)},
                 "misses": self.misses[:40]}
        if self.several.requests:
            found["several"] = self.several.as_dict()
        return found
