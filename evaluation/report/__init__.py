"""The report of a run: per-system results, the targets, and reports/eval.json, eval.md and eval_fig8.png.

The modules: ``results`` (one system on one dataset), ``targets`` (PASS or MISS, and why), ``markdown``
(eval.md), ``figure`` (eval_fig8.png) and ``files`` (writes all three).
"""

from .files import files_write
from .results import CONTRACT_KEYS, CONTROL, METRICS, system_result

__all__ = ["CONTRACT_KEYS", "CONTROL", "METRICS", "files_write", "system_result"]
