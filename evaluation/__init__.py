"""The deletion benchmark (``python manage.py dellm_eval``): the paper's Table/Figure 8 protocol.

- ``datasets``: the persona facts and TOFU, turned into *episodes* (what one user says, asks and
  asks to forget).
- ``systems``: the baselines (no memory, full memory, semantic deletion at a threshold T), run in
  memory through the configured LLM and embedder (``systems.baselines``), and DeLLM itself, driven
  through its services (``systems.dellm``); what they share is in ``systems.common``.
- ``metrics``: containment accuracy, ROUGE-L recall, and an LLM judge when a real LLM is configured.
- ``report``: per-system results (``report.results``), the targets (``report.targets``), and
  ``reports/eval.json`` / ``eval.md`` / ``eval_fig8.png`` (``report.files``, ``report.markdown``,
  ``report.figure``).
- ``runner``: runs every selected system on every episode of every selected dataset.

The performance benchmarks (``python manage.py dellm_bench``) live in their command module alone.
"""
