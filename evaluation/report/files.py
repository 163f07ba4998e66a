"""Writes the three report files: eval.json, eval.md and eval_fig8.png."""

from __future__ import annotations

import json
from pathlib import Path

from .figure import figure_write
from .markdown import markdown


def files_write(*, report: dict, out: Path) -> dict[str, Path]:
    """Write eval.json, eval.md and eval_fig8.png into ``out``; their paths by kind ("json", "md", "fig")."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "eval.json", "md": out / "eval.md", "fig": out / "eval_fig8.png"}
    figure_write(report=report, path=paths["fig"])
    paths["json"].write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    paths["md"].write_text(markdown(report=report, figure=paths["fig"].name), encoding="utf-8")
    return paths

