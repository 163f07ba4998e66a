"""The Memory page: what the assistant has distilled about the user (facts with their history, one
summary per conversation), each linked to the messages it was built from.

The data comes from ``selectors.memory_overview``; correcting goes through
``POST /api/memory/facts/{id}/rectify/`` and erasing through the Forget panel (``/api/forget/``),
both driven by static/js/memory.js. After a deletion (``?after=<request id>``) the template shows
what became of each derived record with the provenance app's ``rebuild_status`` tag."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from .models import DerivedStatus
from .selectors import conversation_titles, memory_overview, message_conversations


def _derivation_label(derivation: dict) -> str:
    if derivation.get("backend") == "user":
        return "written by you"
    parts = [derivation.get("backend") or "unknown backend"]
    if derivation.get("model"):
        parts.append(str(derivation["model"]))
    if derivation.get("prompt_hash"):
        parts.append("prompt " + str(derivation["prompt_hash"])[:12])
    return " · ".join(parts)


def _with_links(row: dict, conversations: dict[int, int]) -> dict:
    """A record with its sources as (id, link) pairs (None when the source is not a message)."""
    sources = [
        {"id": pk, "href": f"/c/{conversations[pk]}/#m{pk}" if pk in conversations else None} for pk in row["sources"]
    ]
    return {**row, "source_links": sources, "derivation_label": _derivation_label(row["derivation"] or {})}


def _fact_groups(facts: list[dict]) -> list[dict]:
    """Each current fact (the newest of its chain) with the versions it superseded, newest first.
    Active facts come first; a superseded fact whose successor is gone heads its own group."""
    by_id = {f["id"]: f for f in facts}
    superseded_by = {f["supersedes"] for f in facts if f["supersedes"] is not None}
    groups = []
    for fact in facts:  # newest first
        if fact["id"] in superseded_by:
            continue
        history, seen, previous = [], {fact["id"]}, fact["supersedes"]
        while previous in by_id and previous not in seen:
            seen.add(previous)
            history.append(by_id[previous])
            previous = by_id[previous]["supersedes"]
        groups.append({"fact": fact, "history": history, "erase_ids": [fact["id"]] + [h["id"] for h in history]})
    groups.sort(key=lambda g: g["fact"]["status"] != DerivedStatus.ACTIVE)  # stable: newest first within each
    return groups


def _summary_groups(summaries: list[dict], titles: dict[int, str]) -> list[dict]:
    """One entry per conversation: its active summary and its older versions, newest first."""
    groups: dict[int, dict] = {}
    for summary in summaries:  # newest first
        group = groups.setdefault(
            summary["conversation"],
            {"conversation": summary["conversation"], "title": titles.get(summary["conversation"]), "current": None,
             "history": []},
        )
        if summary["status"] == DerivedStatus.ACTIVE and group["current"] is None:
            group["current"] = summary
        else:
            group["history"].append(summary)
    for group in groups.values():
        current = [group["current"]["id"]] if group["current"] else []
        group["erase_ids"] = current + [s["id"] for s in group["history"]]
    return list(groups.values())


@login_required
def memory_page(request):
    overview = memory_overview(user=request.user)
    source_ids = {pk for row in overview["facts"] + overview["summaries"] for pk in row["sources"]}
    conversations = message_conversations(user=request.user, node_ids=source_ids)
    titles = conversation_titles(user=request.user)
    facts = [_with_links(f, conversations) for f in overview["facts"]]
    summaries = [_with_links(s, conversations) for s in overview["summaries"]]
    return render(
        request,
        "memory/memory.html",
        {
            "fact_groups": _fact_groups(facts),
            "summary_groups": _summary_groups(summaries, titles),
            "max_chars": settings.DELLM_MAX_MESSAGE_CHARS,
            "active_facts": sum(1 for f in facts if f["status"] == DerivedStatus.ACTIVE),
            "after": request.GET.get("after"),
            "versions": {f["id"]: f["version"] for f in facts} | {s["id"]: s["version"] for s in summaries},
        },
    )
