"""Train the deletion-request detector and write its weights (provenance/forgetting/intent_model.json)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand

from evaluation.intents.corpus import SEED, corpus_generate, corpus_hash
from provenance.forgetting.intent import MODEL_PATH


class Command(BaseCommand):
    help = "Generate the intent corpus, embed it, train the detector and write its weights as JSON."

    def add_arguments(self, parser):
        parser.add_argument("--seed", type=int, default=SEED, help="corpus seed (default: %(default)s)")
        parser.add_argument("--out", default=str(MODEL_PATH), help="where to write the weights")
        parser.add_argument(
            "--corpus-only", action="store_true", help="only generate the corpus and print its size and hash"
        )

    def handle(self, *args, **options):
        if options["corpus_only"]:
            from evaluation.intents.train import independent_training

            examples = corpus_generate(options["seed"]) + independent_training("train")
            nested = corpus_generate(options["seed"], nested=True) + independent_training("dev_train")
            families = {e.family for e in examples}
            self.stdout.write(f"corpus {corpus_hash(examples)}: {len(examples)} examples, {len(families)} families; "
                              f"nested validation corpus {corpus_hash(nested)}: {len(nested)} examples")
            return
        from evaluation.intents.train import intent_train

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
