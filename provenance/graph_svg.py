"""A small picture of influence, drawn on the server as SVG: items in columns by how far they are from
where the picture starts, coloured by kind, with an arrow along every provenance edge between them.

- ``influence_svg``: what a message was built from (left), the message, and what it influenced (right,
  one column per step away).
- ``preview_svg``: a Forget preview's matched items (left) and the items tainted through them.

Every item is a link (to its message, or to the memory page for a fact or summary) with its kind, id
and excerpt as its name; the browser tests read the ``data-id``, ``data-src`` and ``data-dst`` attributes.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import TYPE_CHECKING

from memory.graph import context_ids
from memory.models import Edge
from memory.selectors import node_summaries

from .selectors import node_influence

if TYPE_CHECKING:
    from dellm_site.types import User

    from .models import DeletionRequest

# A picture stays legible: beyond this many items the rest are counted, not drawn.
MAX_NODES = 60
COLUMN, NODE_W, NODE_H, ROW, MARGIN, LEGEND_H = 150, 124, 30, 40, 10, 28
GUTTER = 26  # room on the left for the arrows between items of one column
KINDS = {  # kind: (label, stroke); the fill says what the item is to this picture (see ROLES_FILL)
    "user": ("You", "#2f5bd3"),
    "assistant": ("Reply", "#0f7b6c"),
    "fact": ("Fact", "#b54708"),
    "summary": ("Summary", "#7a3fc2"),
}
ROLES_FILL = {"source": "#ffffff", "focus": "#e8efff", "matched": "#ffe1e1", "influenced": "#fff4d6"}


@dataclass
class _Item:
    id: int
    column: int
    role: str  # a key of ROLES_FILL


def _kind(info: dict) -> str:
    return info.get("role") or info.get("kind") or "fact"


def _href(pk: int, info: dict) -> str:
    return f"/c/{info['conversation']}/#m{pk}" if info.get("conversation") else "/memory/"


def _edge_path(src: tuple[float, float], dst: tuple[float, float]) -> str:
    """A curve from ``src`` (an item's top-left corner) to the left of ``dst``: from the right of ``src``
    to a later column, round the left side within one column."""
    (x1, y1), (x2, y2) = src, dst
    y1, y2 = y1 + NODE_H / 2, y2 + NODE_H / 2
    if x1 == x2:
        return f"M{x1},{y1:.0f} C{x1 - GUTTER},{y1:.0f} {x2 - GUTTER},{y2:.0f} {x2},{y2:.0f}"
    x1 += NODE_W
    bend = max(40.0, abs(x2 - x1) / 2)
    return f"M{x1},{y1:.0f} C{x1 + bend:.0f},{y1:.0f} {x2 - bend:.0f},{y2:.0f} {x2},{y2:.0f}"


def _draw(*, user: User, items: list[_Item], label: str) -> str:
    """The SVG of ``items`` (in columns) and every edge between them."""
    hidden = max(0, len(items) - MAX_NODES)
    items = items[:MAX_NODES]
    infos = node_summaries(user=user, node_ids=[i.id for i in items])
    items = [i for i in items if str(i.id) in infos]  # an item deleted meanwhile is left out
    columns: dict[int, list[_Item]] = {}
    for item in sorted(items, key=lambda i: (i.column, i.id)):
        columns.setdefault(item.column, []).append(item)
    places = {}
    for number, (_, column) in enumerate(sorted(columns.items())):
        for row, item in enumerate(column):
            places[item.id] = (GUTTER + number * COLUMN, MARGIN + row * ROW)
    width = GUTTER + MARGIN + max(len(columns) - 1, 0) * COLUMN + NODE_W
    height = MARGIN * 2 + max((len(c) for c in columns.values()), default=1) * ROW + LEGEND_H
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="influence-graph" role="group" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" aria-label="{escape(label)}">',
        '<defs><marker id="graph-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#4b5563"/></marker></defs>',
        f'<rect class="graph-bg" width="{width}" height="{height}" fill="#ffffff"/>',
    ]
    ids = set(places)
    edges = Edge.objects.filter(src_id__in=ids, dst_id__in=ids).order_by("src_id", "dst_id")
    for src, dst in edges.values_list("src_id", "dst_id"):
        path = _edge_path(places[src], places[dst])
        parts.append(
            f'<path class="graph-edge" data-src="{src}" data-dst="{dst}" d="{path}" fill="none" '
            'stroke="#4b5563" stroke-width="1.4" marker-end="url(#graph-arrow)"/>'
        )
    for item in items:
        info = infos[str(item.id)]
        kind_label, stroke = KINDS.get(_kind(info), KINDS["fact"])
        x, y = places[item.id]
        name = f"{kind_label} #{item.id}: \u201c{info['excerpt']}\u201d"
        width_px = 3 if item.role == "focus" else 1.5
        parts.append(
            f'<a class="graph-node kind-{escape(_kind(info))} {item.role}" data-id="{item.id}" '
            f'href="{escape(_href(item.id, info))}" aria-label="{escape(name)}"><title>{escape(name)}</title>'
            f'<rect x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="6" fill="{ROLES_FILL[item.role]}" '
            f'stroke="{stroke}" stroke-width="{width_px}"/>'
            f'<text x="{x + 10}" y="{y + 20}" font-size="13" fill="#1d2330">{escape(kind_label)} '
            f'<tspan fill="#4b5563">#{item.id}</tspan></text></a>'
        )
    x = GUTTER
    legend_y = height - LEGEND_H + 10
    for kind_label, stroke in KINDS.values():
        parts.append(
            f'<rect x="{x}" y="{legend_y}" width="12" height="12" rx="2" fill="#ffffff" stroke="{stroke}" '
            f'stroke-width="2"/><text x="{x + 16}" y="{legend_y + 11}" font-size="12" fill="#1d2330">'
            f"{kind_label}</text>"
        )
        x += 16 + 9 * len(kind_label) + 14
    if hidden:
        parts.append(f'<text x="{x}" y="{legend_y + 11}" font-size="12" fill="#4b5563">and {hidden} more</text>')
    parts.append("</svg>")
    return "".join(parts)


def influence_svg(*, user: User, node_id: int) -> str:
    """The picture of one of the user's items: what it was built from, it, and what it influenced."""
    influenced = node_influence(user=user, node_id=node_id)
    items = [
        *(_Item(id=pk, column=0, role="source") for pk in context_ids(node_ids=[node_id], owner=user)[node_id]),
        _Item(id=node_id, column=1, role="focus"),
        *(_Item(id=e.id, column=1 + e.depth, role="influenced") for e in influenced),
    ]
    return _draw(user=user, items=items, label=f"How item {node_id} was built and what it influenced")


def preview_svg(*, user: User, request: DeletionRequest) -> str:
    """The picture of a Forget preview: what it matched, and what was built from that (tainted)."""
    plan = request.plan or {}
    matched = {e["id"] for e in plan.get("matched", [])}
    items = [
        *(_Item(id=pk, column=0, role="matched") for pk in sorted(matched)),
        *(_Item(id=e["id"], column=e["depth"], role="influenced") for e in plan.get("tainted", [])),
    ]
    return _draw(user=user, items=items, label="What this deletion matched and what was built from it")
