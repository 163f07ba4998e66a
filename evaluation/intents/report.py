"""The saved deletion-request detector, measured: reports/intents.json and reports/intents.md.

Sets: the corpus's held-out families (next to its training families, which the model was fitted on), the persona
file (every ``forget_request`` a request; every statement, request and question not), a hand-written set in a
conversational style of its own (``handwritten.jsonl``), and the TOFU benchmark episode's messages. Each is scored
by the product's own ``intent_detect`` with the message's features (``intent_features``) passed in, and by the
rules-only fallback.
Nothing here trains or tunes anything.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dellm_site.ai.embedding import get_embedder
from provenance.forgetting.intent import MODEL_PATH, Intent, intent_classify, intent_detect, intent_model

from ..resolution import conversation_resolution_evaluate, resolution_evaluate
from .corpus import corpus_generate, corpus_hash
from .train import embed_texts, independent_training

HANDWRITTEN = Path(__file__).with_name("handwritten.jsonl")
# Written apart from the templates and the rules, each by its own author's brief: users with ten statements,
# requests naming one of them (or several: ``aj``, ``am``, ``ao`` and ``ap``, mostly as lists, and a few in most of
# the others), ordinary messages. The
# detector is trained on the sets named in ``TRAINING_SETS``
# (train.py). Mistakes are written out only for the sets that may be looked at while changing
# the code (``LOOKED_AT``); "e" and "f" are trained on but their resolution misses stay unread (the resolver is not
# trained, so they remain an unseen check of it), and "c", "h", "j", "p", "r", "t", "u", "w", "y", "z", "ab",
# "af", "ai", "al", "am", "an", "ap", "ar", "as", "at" and "av" are only ever scored. "at", "au" and "av" were
# first scored at d6a120f (recall 100% each, false alarms 0.3%, 0, 0; right item 88.0%, 85.3%, 92.0%, other item
# 0, 2.7%, 1.3%; requests naming several statements all matched 6 of 12, 7 of 14, 11 of 14). "aw" (dictated by
# voice), "ax" (a request beside other tasks, corrected as it is written) and "ay" (Scots, Irish, Welsh, Northern
# English, Australian and New Zealand English) were first scored at 47293b3: recognised 90.7%, 94.7%, 96.0%, false
# alarms 0, 0.3%, 0; right item 74.7%, 78.7%, 86.7%, other item 12.0%, 9.3%, 2.7%; then looked at. "az" (texting,
# emoji) and "ba" (long reflective messages) were first scored at 9f599e1: recognised 97.3%, 94.7%, false alarms
# 0.3%, 0.5%; right item 92.0%, 86.7%, other item 1.3%, 1.3%; only ever scored. "bb" (older writers and writers of
# English as a second language, formal or unsure) and "bc" (second thoughts in the middle of a chat, often only
# implied) were first scored at 2c6e411 with one change to the targets (a pronoun after "no need to"): recognised
# 94.7%, 96.0%, false alarms 0, 0 (one ordinary message of bc asked about); right item 90.7%, 86.7%, other item
# 4.0%, 4.0%; requests naming several statements all matched 7 of 12, 6 of 12. "bb" is then looked at, "bc" only
# ever scored. "bd" (other people: the same two or three people in several statements of a user, the request naming
# the person and which thing about them) and "be" (the thing named by the conversation it came up in, by a feeling
# or by what would follow if it got out) were first scored at 1e50328: recognised 93.3%, 100%, false alarms 0, 0;
# right item 88.0%, 74.7%, other item 6.7%, 5.3%; several statements all matched 6 of 13, 7 of 13. "bd" is then
# looked at, "be" only ever scored. "bf" (typed in a hurry, by dyslexic writers or with autocorrect off: "forgt",
# "delet", "rember", "an" for "and", run-on sentences) and "bg" (long statements of several sentences, named by a
# surrounding detail; ordinary messages from people whose work is deleting or keeping data) were first scored at
# 356c0ea: recognised 96.0%, 100%, false alarms 0, 0 (ordinary messages asked about: 4 and 13 of 370); right item
# 73.3%, 93.3%, other item 9.3%, 1.3%; several statements all matched 4 of 13, 9 of 13. Both are then looked at.
# "bh" (dictated by voice: fillers, self-corrections, no punctuation, homophones, "for get", numbers as words) and
# "bi" (requests naming several things at once: 40 of 75 name two to four statements) were first scored at da3339a:
# recognised 96.0%, 100%, false alarms 0, 0 (asked about: 1 and 0 of 370); right item 84.0%, 80.0%, other item
# 12.0%, 1.3%; several statements all matched 9 of 12, 27 of 40. "bh" is then looked at, "bi" only ever scored.
INDEPENDENT = {path.stem: path for path in sorted(Path(__file__).parent.glob("independent_*.jsonl"))}
HELD_OUT = ("independent_c", "independent_h", "independent_j", "independent_p", "independent_r", "independent_t",
            "independent_u", "independent_w", "independent_y", "independent_z", "independent_ab", "independent_af",
            "independent_ai", "independent_al", "independent_am", "independent_an", "independent_ap", "independent_ar",
            "independent_as", "independent_at", "independent_av", "independent_az", "independent_ba",
            "independent_bc", "independent_be", "independent_bi")
LOOKED_AT = ("independent_a", "independent_b", "independent_d", "independent_g", "independent_i", "independent_k",
             "independent_l", "independent_m", "independent_n", "independent_o", "independent_q", "independent_s",
             "independent_v", "independent_x", "independent_aa", "independent_ac", "independent_ad", "independent_ae",
             "independent_ag", "independent_ah", "independent_aj", "independent_ak", "independent_ao",
             "independent_aq", "independent_au", "independent_aw", "independent_ax", "independent_ay", "independent_bb",
             "independent_bd", "independent_bf", "independent_bg", "independent_bh")
EXAMPLES = 8
WORST = 10


@dataclass(frozen=True)
class Item:
    text: str
    label: int
    group: str  # a family, or where in the source file the text comes from
    kind: str
    targets: tuple[str, ...] | None = None  # expected targets, when known
    answer: str | None = None  # for persona requests: what the target must contain


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9€£$]+", " ", text.lower().replace("'", "").replace(",", "")).strip()


def persona_items(path: Path) -> list[Item]:
    """The persona file as labelled messages: each ``forget_request`` is a request, everything else is not."""
    items = []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        answer = row["qa"][row["forget"]]["answer"]
        items.append(Item(row["forget_request"], 1, "forget_request", "forget_request", answer=answer))
        items += [Item(t, 0, "persona", "statement") for t in row["persona"]]
        items += [Item(t, 0, "requests", "request") for t in row["requests"]]
        items += [Item(q["question"], 0, "qa", "question") for q in row["qa"]]
    return items


def tofu_items(folder: Path) -> list[Item]:
    """The TOFU benchmark episode's messages: its "Forget that <answer>" requests, and its statements and questions."""
    from evaluation.datasets import DEFAULT_TOFU_RETAIN, tofu_load

    episode = tofu_load(folder=folder, limit=None, retain=DEFAULT_TOFU_RETAIN).episodes[0]
    items = [Item(f.request, 1, "forget_request", "forget_request", answer=f.answer) for f in episode.forgets]
    items += [Item(t, 0, "statement", "statement") for t in dict.fromkeys(episode.statements)]
    return items + [Item(t, 0, "question", "question") for t in dict.fromkeys(q.question for q in episode.questions)]


def handwritten_items(path: Path = HANDWRITTEN) -> list[Item]:
    """The hand-written check set: requests and ordinary messages written in a style the templates do not use."""
    items = []
    for line in path.read_text().splitlines():
        if line.strip():
            row = json.loads(line)
            label = int(row["label"])
            targets = tuple(row["targets"]) if row.get("targets") else None
            items.append(Item(row["text"], label, "handwritten", "request" if label else "ordinary", targets))
    return items


def independent_rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def independent_items(rows: list[dict]) -> list[Item]:
    """An independent set's requests and ordinary messages (the users' statements are ordinary messages too)."""
    items = [Item(r["text"], 1, r.get("style", "request"), "request") for r in rows if r["type"] == "request"]
    items += [Item(r["text"], 0, r.get("kind", "ordinary"), "ordinary") for r in rows if r["type"] == "ordinary"]
    statements = [s for r in rows if r["type"] == "user" for s in r["statements"]]
    return items + [Item(s, 0, "statement", "statement") for s in statements]


def _score(items: list[Item], classify: Callable[[Item], Intent]) -> list[dict]:
    rows = []
    for item in items:
        intent = classify(item)
        targets_ok = None
        if item.label and intent.outcome != "none":
            if item.targets is not None:
                targets_ok = [_norm(t) for t in intent.targets] == [_norm(t) for t in item.targets]
            elif item.answer is not None:
                targets_ok = _norm(item.answer) in _norm(" ".join(intent.targets))
        rows.append({"item": item, "outcome": intent.outcome, "confidence": intent.confidence,
                     "targets": intent.targets, "targets_ok": targets_ok})
    return rows


def _rate(hits: int, total: int) -> float | None:
    return round(hits / total, 4) if total else None


def _summary(rows: list[dict]) -> dict:
    pos = [r for r in rows if r["item"].label]
    neg = [r for r in rows if not r["item"].label]
    checked = [r["targets_ok"] for r in pos if r["targets_ok"] is not None]
    return {
        "positives": len(pos),
        "negatives": len(neg),
        "recall": _rate(sum(r["outcome"] != "none" for r in pos), len(pos)),
        "recall_sure": _rate(sum(r["outcome"] == "forget" for r in pos), len(pos)),
        "false_alarms": _rate(sum(r["outcome"] == "forget" for r in neg), len(neg)),
        "ask_positives": _rate(sum(r["outcome"] == "ask" for r in pos), len(pos)),
        "ask_negatives": _rate(sum(r["outcome"] == "ask" for r in neg), len(neg)),
        "targets_checked": len(checked),
        "targets_right": _rate(sum(checked), len(checked)),
    }


def _errors(rows: list[dict]) -> dict:
    def show(r):
        return {"text": r["item"].text, "group": r["item"].group, "outcome": r["outcome"],
                "confidence": r["confidence"], "targets": r["targets"]}

    misses = [r for r in rows if r["item"].label and r["outcome"] == "none"]
    alarms = [r for r in rows if not r["item"].label and r["outcome"] == "forget"]
    asks = [r for r in rows if r["outcome"] == "ask"]
    wrong_targets = [r for r in rows if r["targets_ok"] is False]
    return {
        "misses": [show(r) for r in misses[:EXAMPLES]],
        "false_alarms": [show(r) for r in alarms[:EXAMPLES]],
        "asks": [show(r) for r in asks[:EXAMPLES]],
        "wrong_targets": [{**show(r), "expected": list(r["item"].targets or [r["item"].answer])}
                          for r in wrong_targets[:EXAMPLES]],
    }


def _breakdown(rows: list[dict], key: str) -> dict:
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups[getattr(r["item"], key)].append(r)
    return {name: _summary(group) for name, group in sorted(groups.items())}


def _worst(by_family: dict) -> list[dict]:
    def error(s):
        return (1 - s["recall"]) if s["positives"] else s["false_alarms"] + 0.5 * s["ask_negatives"]

    ranked = sorted(by_family.items(), key=lambda kv: -error(kv[1]))
    return [{"family": f, "error": round(error(s), 4), **s} for f, s in ranked[:WORST] if error(s) > 0]


def _timing(texts: list[str], vectors: dict[str, np.ndarray]) -> dict:
    intent_detect(texts[0], features=vectors[texts[0]])  # warm: the weights are read once
    with_features = []
    for text in texts:
        started = time.perf_counter()
        intent_detect(text, features=vectors[text])
        with_features.append((time.perf_counter() - started) * 1000)
    without = []
    for text in texts[:20]:
        started = time.perf_counter()
        intent_detect(text + " ?")  # a text the embedder has not just run
        without.append((time.perf_counter() - started) * 1000)
    quantiles = statistics.quantiles(with_features, n=20)
    return {
        "messages": len(with_features),
        "with_features_ms": {"mean": round(statistics.mean(with_features), 3), "p50": round(quantiles[9], 3),
                           "p95": round(quantiles[18], 3), "max": round(max(with_features), 3)},
        "without_features_ms": {"mean": round(statistics.mean(without), 1), "messages": len(without)},
    }


def intents_report(
    *, out: Path, personas: Path | None, tofu: Path | None = None, log: Callable[[str], None] = lambda _: None,
    only: tuple[str, ...] | None = None,
) -> dict:
    """Score the saved detector on every set (or on the sets named in ``only``: "heldout", "train", "handwritten",
    "personas", "tofu", "independent_<x>") and write ``out``/intents.json and ``out``/intents.md."""
    known = {"heldout", "train", "handwritten", "personas", "tofu", *INDEPENDENT}
    if only is not None and set(only) - known:
        raise ValueError(f"no such set: {', '.join(sorted(set(only) - known))}")
    wanted = set(only) if only is not None else known
    started = time.monotonic()
    model = intent_model()
    raw = json.loads(MODEL_PATH.read_text())
    examples = corpus_generate(raw["corpus"]["seed"])
    hash_now = corpus_hash(examples + independent_training("train"))
    sets = {
        "heldout": [Item(e.text, e.label, e.family, e.kind, e.targets or None) for e in examples if e.split == "test"],
        "train": [Item(e.text, e.label, e.family, e.kind, e.targets or None) for e in examples if e.split == "train"],
        "handwritten": handwritten_items(),
        **{name: independent_items(independent_rows(path)) for name, path in INDEPENDENT.items()},
    }
    if personas is not None and personas.exists():
        sets["personas"] = persona_items(personas)
    if tofu is not None and (tofu / "tofu_full.json").exists():
        sets["tofu"] = tofu_items(tofu)
    sets = {name: items for name, items in sets.items() if name in wanted}
    texts = list(dict.fromkeys(i.text for items in sets.values() for i in items))
    log(f"embedding {len(texts)} distinct messages")
    vectors = dict(zip(texts, embed_texts(texts), strict=True))
    matches = get_embedder().name == model.embedder
    results = {}
    for name, items in sets.items():
        full = _score(items, lambda i: intent_detect(i.text, features=vectors[i.text]))
        rules = _score(items, lambda i: intent_classify(i.text, None))
        results[name] = {
            "overall": _summary(full),
            "by_kind": _breakdown(full, "kind"),
            "rules_only": _summary(rules),
            # The held-out set's mistakes are not written out: nobody reads them while changing the code.
            "errors": {} if name in HELD_OUT else _errors(full),
        }
        if name in ("heldout", "train"):
            results[name]["worst_families"] = _worst(_breakdown(full, "group"))
            results[name]["families"] = len({i.group for i in items})
        log(f"{name}: {results[name]['overall']}")
    resolution = None
    if personas is not None and personas.exists() and "personas" in wanted:
        log("resolving each persona fact's deletion request in three phrasings")
        rows = [json.loads(line) for line in personas.read_text().splitlines() if line.strip()]
        resolution = resolution_evaluate(rows)
    log("resolving the independent sets' requests")
    independent = {name: conversation_resolution_evaluate(independent_rows(path)) for name, path in INDEPENDENT.items()
                   if name in wanted}
    for name in independent:
        if name not in LOOKED_AT:
            independent[name].pop("misses", None)
    report = {
        "resolution": resolution,
        "independent_resolution": independent,
        "model": {
            "embedder": model.embedder,
            "embedder_matches": matches,
            "thresholds": raw["thresholds"],
            "fallback_thresholds": raw["fallback"]["thresholds"],
            "corpus_hash": raw["corpus"]["hash"],
            "corpus_hash_now": hash_now,
            "validation_inside_training_families": raw["validation"],
            "validation_left_out_authors": raw.get("validation_authors"),
        },
        "sets": results,
        "timing": _timing([i.text for i in sets["heldout"][:500]], vectors) if "heldout" in sets else None,
        "wall_s": round(time.monotonic() - started, 1),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "intents.json").write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    (out / "intents.md").write_text(_markdown(report))
    report["files"] = [str(out / "intents.json"), str(out / "intents.md")]
    return report


def _pct(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _row(name: str, s: dict) -> str:
    return (f"| {name} | {s['positives']} | {s['negatives']} | {_pct(s['recall'])} | {_pct(s['recall_sure'])} | "
            f"{_pct(s['false_alarms'])} | {_pct(s['ask_positives'])} | {_pct(s['ask_negatives'])} | "
            f"{_pct(s['targets_right'])} |")


_SETS = ("heldout", "train", "personas", "handwritten", *INDEPENDENT, "tofu")
_HEADER = ("| set | requests | others | recall (forget+ask) | sure (forget) | false alarms (forget) | ask, requests | "
           "ask, others | targets right |\n|---|---|---|---|---|---|---|---|---|")


def _markdown(report: dict) -> str:
    m, sets = report["model"], report["sets"]
    lines = [
        "# Deletion-request detector",
        "",
        f"Embedder `{m['embedder']}` (configured one matches: {m['embedder_matches']}); thresholds: forget >= "
        f"{m['thresholds']['forget']}, ask >= {m['thresholds']['ask']} (rules-only fallback: forget >= "
        f"{m['fallback_thresholds']['forget']}, ask >= {m['fallback_thresholds']['ask']}). Corpus {m['corpus_hash']}"
        + ("" if m["corpus_hash"] == m["corpus_hash_now"] else f" (the generator now gives {m['corpus_hash_now']}!)")
        + ".",
        "",
        "Recall counts a request recognised as `forget` or `ask`; a false alarm is an ordinary message taken for "
        "a sure request (`forget`). The model was fitted on the training families, so their row is in-sample; the "
        "held-out families share no template, frame, reason or slot value with them.",
        "",
    ]
    if m.get("validation_left_out_authors"):
        v = m["validation_left_out_authors"]
        lines += [f"In training, each independent training set scored by a model fitted without it (what an author "
                  f"never seen gets; the ask threshold is set there): recall {_pct(v['recall'])}, sure "
                  f"{_pct(v['recall_sure'])}, false alarms {_pct(v['false_alarms'])}, ordinary messages asked about "
                  f"{_pct(v['ask_negatives'])}.", ""]
    lines += [_HEADER]
    for name in _SETS:
        if name in sets:
            lines.append(_row(name, sets[name]["overall"]))
    lines += ["", "Rules-only fallback (what runs with another embedder):", "", _HEADER]
    for name in _SETS:
        if name in sets:
            lines.append(_row(name, sets[name]["rules_only"]))
    for name in ("heldout", "train"):
        if name not in sets:
            continue
        lines += ["", f"## {name}: by kind", "", _HEADER]
        lines += [_row(kind, s) for kind, s in sets[name]["by_kind"].items()]
    for name in ("personas", "tofu", *INDEPENDENT):
        if name in sets:
            lines += ["", f"## {name}: by kind", "", _HEADER]
            lines += [_row(kind, s) for kind, s in sets[name]["by_kind"].items()]
    lines += ["", "## held-out: worst families", "", "| family | error | requests | others | recall | false alarms |",
              "|---|---|---|---|---|---|"]
    for w in sets.get("heldout", {}).get("worst_families", []):
        lines.append(f"| {w['family']} | {_pct(w['error'])} | {w['positives']} | {w['negatives']} | "
                     f"{_pct(w['recall'])} | {_pct(w['false_alarms'])} |")
    for name in ("heldout", "personas", "handwritten", "tofu", *(n for n in INDEPENDENT if n not in HELD_OUT)):
        if name not in sets:
            continue
        errors = sets[name]["errors"]
        for label, key in (("misses", "misses"), ("false alarms", "false_alarms"), ("asks", "asks"),
                           ("wrong targets", "wrong_targets")):
            if errors[key]:
                lines += ["", f"### {name}: {label}", ""]
                for e in errors[key]:
                    extra = f" expected {e['expected']}" if "expected" in e else ""
                    lines.append(f"- `{e['text']}` ({e['group']}): {e['outcome']} {e['confidence']:.2f}, "
                                 f"targets {e['targets']}{extra}")
    if report.get("resolution"):
        lines += ["", "## Finding what a request names (personas)", "",
                  "Each persona's statements stored as the chat stores them; each of its four facts asked to be "
                  "forgotten as the file's own request (verbatim, one fact per persona), by its value (\"Forget "
                  "everything about Lisbon\") and by its category (\"Please forget which city I live in\"). Right "
                  "item: the statement holding the fact is matched; other item: any other statement is (restatements "
                  "the file marks are not counted). Thresholds were chosen on the first half of the file.", "",
                  "| split / phrasing | requests | right item | other item | right item only offered as related |",
                  "|---|---|---|---|---|"]
        for key, s in report["resolution"]["splits"].items():
            lines.append(f"| {key} | {s['requests']} | {_pct(s['right_item_rate'])} | {_pct(s['other_item_rate'])} | "
                         f"{s['right_offered_as_related']} |")
        misses = report["resolution"]["misses"][:12]
        if misses:
            lines += ["", "Misses (first 12):", ""]
            lines += [f"- {m['split']} {m['style']}: `{m['request']}` -> right matched: {m['right_matched']}; "
                      f"others: {m['others']}" for m in misses]
    if report.get("independent_resolution"):
        lines += ["", "## Finding what a request names (independent sets)", "",
                  "Each user's ten statements stored as the chat stores them; each request names one of them, or "
                  "several (right item: every one named is matched; those requests are also counted apart, "
                  "\"naming several\", with the share of the statements they name that are matched). "
                  f"{', '.join(f'`{n}`' for n in LOOKED_AT)} may be looked at while changing the code; the "
                  "others' misses are not written out (the resolver was never tuned on them), and "
                  f"{', '.join(f'`{n}`' for n in HELD_OUT)} are only scored.", "",
                  "| set | requests | right item | other item | right item only offered as related |",
                  "|---|---|---|---|---|"]
        for key, found in report["independent_resolution"].items():
            s = found["all"]
            lines.append(f"| {key} | {s['requests']} | {_pct(s['right_item_rate'])} | {_pct(s['other_item_rate'])} | "
                         f"{s['right_offered_as_related']} |")
            if "several" in found:
                m = found["several"]
                lines.append(f"| {key}, naming several ({_pct(s['named_matched_rate'])} of all statements named "
                             f"matched) | {m['requests']} | {_pct(m['right_item_rate'])} | "
                             f"{_pct(m['other_item_rate'])} | {m['right_offered_as_related']} |")
        for name in LOOKED_AT:
            misses = report["independent_resolution"].get(name, {}).get("misses", [])[:15]
            if misses:
                lines += ["", f"{name} misses (first 15):", ""]
                lines += [f"- `{m['request']}` for `{m['statement']}` -> right matched: {m['right_matched']}; "
                          f"others: {m['others']}" for m in misses]
    t = report["timing"]
    if t is None:
        return "\n".join([*lines, ""])
    lines += ["", "## Time per message", "",
              f"With the message's layers at hand, as in a turn ({t['messages']} messages): "
              f"mean {t['with_features_ms']['mean']} ms, "
              f"p50 {t['with_features_ms']['p50']} ms, p95 {t['with_features_ms']['p95']} ms. Embedding the message "
              f"as well: mean {t['without_features_ms']['mean']} ms.", ""]
    return "\n".join(lines)
