"""Train the deletion-request detector and write its weights (provenance/forgetting/intent_model.json)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from evaluation.intents.corpus import SEED, corpus_generate, corpus_hash
from provenance.forgetting.intent import MODEL_PATH


class Command(BaseCommand):
    help = "Generate the intent corpus, embed it, train the detector and write its weights as JSON."

    def add_arguments(self, parser):
        parser.add_argument("--seed", type=int, default=SEED, help="corpus seed (default: %(default)s)")
        parser.add_argument("--out", default=str(MODEL_PATH), help="where to write the weights")
        parser.add_argument(
            "--cross-check", action="store_true",
            help="leave each independent training set out in turn, train without it, score it; writes "
                 "reports/intents_cross.json and .md (no model is written)",
        )
        parser.add_argument(
            "--corpus-only", action="store_true", help="only generate the corpus and print its size and hash"
        )

    def handle(self, *args, **options):
        if options["corpus_only"]:
            from evaluation.intents.train import independent_training, nested_corpus

            examples = corpus_generate(options["seed"]) + independent_training("train")
            nested = [e for fold in nested_corpus(options["seed"]) for e in fold]
            families = {e.family for e in examples}
            self.stdout.write(f"corpus {corpus_hash(examples)}: {len(examples)} examples, {len(families)} families; "
                              f"nested validation corpus {corpus_hash(nested)}: {len(nested)} examples")
            return
        from evaluation.intents.train import intent_train

        if options["cross_check"]:
            self._cross_check(options["seed"])
            return

        started = time.monotonic()
        model = intent_train(options["seed"], log=self.stdout.write)
        out = Path(options["out"])
        out.write_text(json.dumps(model, indent=1) + "\n")
        seen = model["validation"]
        self.stdout.write(
            f"thresholds forget>={model['thresholds']['forget']} ask>={model['thresholds']['ask']}; on the validation "
            f"families: recall {seen['recall']:.2%}, false alarms {seen['false_alarms']:.2%}"
        )
        self.stdout.write(f"wrote {out} in {time.monotonic() - started:.0f} s (corpus {model['corpus']['hash']})")

    def _cross_check(self, seed: int) -> None:
        from evaluation.intents.train import intent_cross_check

        started = time.monotonic()
        results = intent_cross_check(seed, log=self.stdout.write)
        reports = Path(settings.BASE_DIR) / "reports"
        reports.mkdir(exist_ok=True)
        (reports / "intents_cross.json").write_text(json.dumps(results, indent=1) + "\n")
        lines = ["# Deletion-request detector: each independent set left out in turn", "",
                 "A model trained on the corpus and the other sets, scored on the set it never saw. Recall counts "
                 "`forget` or `ask`; false alarms are ordinary messages (and the users' statements) taken as sure.",
                 "", "| left out | requests | others | recall | sure | false alarms | ask, others |",
                 "|---|---|---|---|---|---|---|"]
        for name, s in results.items():
            lines.append(f"| {name} | {s['positives']} | {s['negatives']} | {100 * s['recall']:.1f}% | "
                         f"{100 * s['recall_sure']:.1f}% | {100 * s['false_alarms']:.1f}% | "
                         f"{100 * s['ask_negatives']:.1f}% |")
        (reports / "intents_cross.md").write_text("\n".join(lines) + "\n")
        self.stdout.write(f"wrote reports/intents_cross.json and .md in {time.monotonic() - started:.0f} s")
