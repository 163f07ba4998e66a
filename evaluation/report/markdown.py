"""The eval.md report: the run's settings, one table per dataset, the targets and the protocol."""

from __future__ import annotations

from ..systems import DELLM, FULL_MEMORY, NO_MEMORY
from .results import CAUSES, CONTROL, semantic_results


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _blast(result: dict) -> str:
    if result.get("blast_radius") is None:
        return "–"
    return f"{result['blast_radius']} ({_fmt(result['blast_radius_per_deletion'])}/request)"


def _order(results: dict) -> list[str]:
    fixed = [NO_MEMORY, FULL_MEMORY]
    semantic = sorted(semantic_results(results), key=lambda s: float(s.split("@", 1)[1]))
    rest = [s for s in results if s not in fixed and s not in semantic]
    return [s for s in fixed if s in results] + semantic + rest


PROTOCOL = """\
- **Every system** goes through the same configured LLM (`dellm_site.ai.llm.get_llm()`) and embedder
  (`dellm_site.ai.embedding.get_embedder()`), and sees each episode in the same order: the statements
  (then the requests) one message at a time -> the questions (before) -> one deletion request per
  forget item -> the same questions (after).
- **Personas**: one episode (one user) per persona; the `forget` qa is the forget question, the
  other 3 are retain questions; the deletion request is the persona's `forget_request`.
- **TOFU**: one episode (one user) holding the retain slice and forget01: every answer is sent as a
  user message, in the dataset's order (the retain slice, then forget01); the questions are the 40
  forget01 questions and every retain-slice question, gold = the original answer; each forget01
  answer gets its own request "Forget that <answer>", sent one after the other; the questions are
  asked once before the first request and once after the last one.
- **no_memory**: `Prompt(question, context=[])` only.
- **full_memory**: every earlier user message and reply is in the context. The deletion request is
  answered under the paper's baseline instruction (the LLM is asked to forget; nothing is deleted),
  so the request and its reply stay in the history.
- **semantic_deletion@T**: full history; a deletion request removes every history message (user
  message or reply) whose cosine similarity to what the request names is >= T. What the request names
  is read with DeLLM's own parser (`forget_request_target`: "Forget that X" -> "X"), so both sides
  start from the same words and differ only in how they decide what goes. Before the first request,
  full_memory and every semantic_deletion@T are one system (same history, same replies); the history
  is copied at the request.
- **dellm**: a fresh Django user per episode; statements and requests posted with
  `chat.turns.message_post` in one conversation (real context construction, provenance edges,
  facts and summaries as configured); the "before" questions in a second conversation; the deletion
  request posted in the first conversation the same way (it returns `forget_preview`, nothing is
  stored or answered), then `provenance.forgetting.services.forget_confirm` on it (strict: all of Dep(M)); the
  "after" questions in a third conversation. The user is deleted afterwards (cascade).
  The questions asked before and their replies are stored items, as in the paper. A reply that used
  the forget fact is in Dep of it and goes with it; the question messages stay unless the request's
  matcher names them (they hold no answer), and the replies that quoted retain facts stay. A stored
  question holds no information and never takes a context slot, so asked again, a question does not
  retrieve its earlier copies; an earlier reply yields to the statements it quoted. `--control` runs
  dellm on the same protocol without the deletion requests, to tell re-asking apart from the deletion.
- **Metrics**: containment accuracy (normalised gold — lowercase, punctuation to spaces, articles
  dropped — found as whole words in the normalised reply) is the headline; ROUGE-L recall of the gold
  answer (`rouge-score`); an LLM judge (CORRECT/WRONG and a one-line reason) only when an
  OpenAI-compatible LLM is configured.
- **residual_hits**: surviving stored items holding a forget answer (normalised), at the end of the
  episode. dellm: the user's items of every kind (messages, facts, summaries, superseded or not),
  conversation titles and the user's deletion requests; baselines: their history.
- **deleted_messages**: messages deleted (dellm also deletes facts and summaries: `deleted_items`).
- **collateral_deleted**: deleted messages that neither hold a forget answer nor derive from a forget
  fact. dellm: `deleted_ids` of the manifests minus (the items holding a forget answer and their
  Dep, computed from the provenance graph just before each request); `collateral_items` counts every
  kind. Baselines have no provenance: a deleted message is collateral unless it holds the answer or
  is a reply quoting the forget fact. `collateral_indirect`: collateral that restates the fact in
  other words (the persona file's `indirect` statements, which a matcher may offer).
- **blast radius** (dellm): per deletion request, the deleted replies that neither quote nor restate
  what it forgot (neither the forget answer nor a sentence of it or of a matched item), to messages
  that stay: replies deleted only because the forgotten item was in their context. The total, and
  per confirmed request. Smaller contexts that hold only what a message needs make it smaller.
- **Runtime**: tasks run in-process during the run (embeddings, facts and summaries exist before the
  next message, as with the default configuration), and the embedder remembers the vector of each
  text it has already embedded (the backend is deterministic: no vector changes, only repeats are
  saved).
"""


def markdown(*, report: dict, figure: str | None) -> str:
    """The eval.md text; ``figure`` is the figure's file name, linked when given."""
    lines = ["# DeLLM deletion benchmark", ""]
    lines += [
        f"- Command: `{report['command']}`",
        f"- Wall time: {report['wall_s']:.0f} s in all"
        + "".join(f"; {n}: {s:.0f} s" for n, s in report["wall_s_per_dataset"].items())
        + "".join(f"; {n} control: {c[CONTROL]['wall_s']:.0f} s" for n, c in report.get("controls", {}).items())
        + f" ({report['cpus']} CPUs)",
        f"- LLM: `{report['llm']}`; embedder: `{report['embedder']}`; database: `{report['database']}`",
        f"- Headline metric: {report['metric']} (scores in percent)",
    ]
    for name, meta in report["meta"].items():
        if "retain_slice" in meta:
            lines.append(
                f"- {name}: {meta['forget']} ({meta['forget_facts']} forget facts) + retain slice "
                f"`{meta['retain_slice']}` ({meta['retain_facts']} facts); {meta['grouping']}"
            )
        else:
            lines.append(f"- {name}: `{meta['file']}`, {meta['personas']} personas")
    if figure:
        lines += ["", f"![forget-after vs retain-after]({figure})"]
    for name, results in report["datasets"].items():
        lines += [
            "",
            f"## {name}",
            "",
            "| system | forget before | forget after | retain before | retain after | ROUGE-L forget after "
            "| ROUGE-L retain after | residual hits | deleted msgs | collateral | blast radius | seconds |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for system in _order(results):
            r = results[system]
            lines.append(
                f"| {system} | {_fmt(r['forget_before'])} | {_fmt(r['forget_after'])} | {_fmt(r['retain_before'])} "
                f"| {_fmt(r['retain_after'])} | {_fmt(r['rouge_l']['forget_after'])} "
                f"| {_fmt(r['rouge_l']['retain_after'])} "
                f"| {r['residual_hits']} | {r['deleted_messages']} | {r['collateral_deleted']} "
                f"| {_blast(r)} | {r['wall_s']:.0f} |"
            )
        if any(r.get("judge") for r in results.values()):
            lines += ["", "LLM judge (percent CORRECT): forget before / after, retain before / after", ""]
            for system in _order(results):
                j = results[system].get("judge")
                if j:
                    lines.append(
                        f"- {system}: {_fmt(j['forget_before'])} / {_fmt(j['forget_after'])}, "
                        f"{_fmt(j['retain_before'])} / {_fmt(j['retain_after'])}"
                    )
        dellm = results.get(DELLM)
        if dellm:
            counters = dellm["counters"]
            items = ", ".join(f"{n} {k}" for k, n in dellm["deleted_items"].items()) or "nothing"
            lines += [
                "",
                f"dellm deleted {items}; collateral of every kind: {dellm['collateral_items']} "
                f"({dellm['collateral_indirect']} of them restate the fact in other words); "
                f"requests confirmed: {counters.get('requests_confirmed', 0)}, not recognised: "
                f"{counters.get('requests_not_recognised', 0)}, refused: {counters.get('requests_refused', 0)}; "
                f"items holding the answer or derived from it that survived: {counters.get('missed_items', 0)}; "
                f"manifests whose own verification reported residual hits: "
                f"{counters.get('manifests_reporting_residuals', 0)} "
                f"({counters.get('manifest_residual_hits', 0)} hits: "
                + ", ".join(
                    f"{counters[k]} {k.removeprefix('manifest_residual_')}"
                    for k in ("manifest_residual_message", "manifest_residual_fact", "manifest_residual_summary")
                    if counters.get(k)
                )
                + f"; holding the forget answer: {counters.get('manifest_residual_holding_answer', 0)}).",
            ]
            causes = dellm.get("retain_lost_causes") or {}
            if causes:
                lines.append(
                    f"Retain answers given before and lost after ({dellm['retain_lost']}): "
                    + ", ".join(f"{CAUSES.get(k, k)}: {n}" for k, n in causes.items())
                    + "."
                )
            control = report.get("controls", {}).get(name, {}).get(CONTROL)
            if control:
                lines.append(
                    f"Control, dellm without the deletion requests (the questions simply asked twice): forget "
                    f"{_fmt(control['forget_before'])} -> {_fmt(control['forget_after'])}, retain "
                    f"{_fmt(control['retain_before'])} -> {_fmt(control['retain_after'])}."
                )
            for example in dellm["examples"].get("blast_radius", []):
                lines.append(f"- deleted only for its context: {example}")
            for leak in dellm["examples"]["forget_after_hits"]:
                lines.append(f"- forget answer still given: {leak['question']!r} -> {leak['reply'][:160]!r}")
            for loss in dellm["examples"]["retain_lost"]:
                lines.append(
                    f"- retain answer lost: {loss['question']!r}: before {loss['before'][:100]!r}, "
                    f"after {loss['after'][:100]!r}"
                )
    lines += ["", "## Targets", "", "| dataset | target | value | result |", "|---|---|---|---|"]
    for t in report["targets"]:
        lines.append(f"| {t['dataset']} | {t['target']} | {t['value']} | {'PASS' if t['passed'] else 'MISS'} |")
    if report.get("analysis"):
        lines += ["", "## Why targets were missed, and close calls", "", report["analysis"].strip()]
    lines += ["", "## Protocol", "", PROTOCOL.rstrip(), ""]
    return "\n".join(lines)
