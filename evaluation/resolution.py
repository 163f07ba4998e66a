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
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction

from chat.models import Conversation, Message, Role
from dellm_site.ai.embedding import get_embedder
from dellm_site.ai.llm import get_llm
from dellm_site.errors import ApplicationError
from memory.embeddings import wide_store
from memory.graph import edges_record
from memory.models import Embedding, Fact
from provenance.forgetting.intent_targets import request_gist
from provenance.forgetting.matching import resolved_matches
from provenance.forgetting.services import request_targets

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


def conversation_resolution_evaluate(rows: list[dict]) -> dict:
    """Right-item and other-item rates for a set of users, each with ten statements and requests that name one
    or several of them.

    The format of ``evaluation/intents/independent_*.jsonl``: ``{"type": "user", "user", "statements"}`` and
    ``{"type": "request", "user", "target", "text"}`` (``target`` indexes the user's statements, or is a list of
    indexes for a request naming several). Right item: every statement named is matched; other item: any other
    statement is. A request naming several is also counted apart (``several``), with the share of the statements
    it names that are matched (``named_matched_rate``). A request whose text names nothing readable counts as a
    miss.
    """
    users = {row["user"]: row["statements"] for row in rows if row["type"] == "user"}
    requests = [row for row in rows if row["type"] == "request"]
    tally, several, misses = Tally(), Tally(), []
    named = named_found = 0
    User = get_user_model()
    with transaction.atomic():
        ids = {}
        for name, statements in users.items():
            user = User.objects.create(username=f"resolution-{name}"[:150])
            ids[name] = (user, _store(user, statements))
        for row in requests:
            user, stored = ids[row["user"]]
            indexes = row["target"] if isinstance(row["target"], list) else [row["target"]]
            right = {stored[i] for i in indexes}
            try:
                matched, related = resolved_matches(
                    user=user, targets=request_targets(row["text"]), fallback=request_gist(row["text"]),
                    context=row["text"],
                )
            except ApplicationError:
                matched, related = {}, []
            others = (set(matched) & set(stored)) - right
            offered = {r["id"] for r in related}
            for counted in (tally, several) if len(indexes) > 1 else (tally,):
                counted.requests += 1
                counted.right += right <= set(matched)
                counted.other += bool(others)
                counted.related_right += bool(right - set(matched)) and (right - set(matched)) <= offered
            named += len(right)
            named_found += len(right & set(matched))
            if not right <= set(matched) or others:
                misses.append({"request": row["text"],
                               "statement": " | ".join(users[row["user"]][i] for i in indexes),
                               "right_matched": right <= set(matched),
                               "others": sorted(users[row["user"]][stored.index(o)] for o in others)})
        transaction.set_rollback(True)  # nothing of the check stays in the database
    found = {"all": {**tally.as_dict(), "named_matched_rate": round(named_found / (named or 1), 4)},
             "misses": misses[:40]}
    if several.requests:
        found["several"] = several.as_dict()
    return found
