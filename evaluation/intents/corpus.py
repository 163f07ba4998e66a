"""The intent corpus: deletion requests and hard negatives, tagged by template family, split by family.

``corpus_generate(seed)`` is deterministic. About 30% of the families of each kind are held out ("test"); a
held-out family is filled only from the test part of every slot list and asked only in frames and reasons that
no training family uses, so a held-out score measures phrasings, frames and values the classifier never saw.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import negatives, positives
from .fill import fill
from .slots import split_list

SEED = 20240611
TEST_SHARE = 0.3
# The training families of each kind, dealt into this many validation folds: each fold holds one share out as
# "dev_test", so every training family is scored once by a model that never saw it.
NESTED_FOLDS = 3
PER_POSITIVE_FAMILY = 48
PER_NEGATIVE_FAMILY = 60


@dataclass(frozen=True)
class Example:
    text: str
    label: int  # 1: asks to forget something; 0: does not
    family: str
    kind: str
    split: str  # "train" or "test" ("dev_train" or "dev_test" in the nested corpus)
    targets: tuple[str, ...] = field(default=())  # what a positive names, as the user wrote it


def _by_split(values: list[str], core: list[str] | None = None) -> dict[str, list[str]]:
    train, test = split_list(values)
    dev_train, dev_test = split_list(train)
    core = core or []
    return {"train": core + train, "test": core + test, "dev_train": core + dev_train, "dev_test": core + dev_test}


_POS_FRAMES = _by_split(positives.FRAMES, positives.CORE_FRAMES)
_GERUND = _by_split(positives.GERUND_FRAMES)
_REASONS = _by_split(positives.REASONS)
_WRAPS = _by_split(positives.SENTENCE_WRAPS[3:], positives.SENTENCE_WRAPS[:3])
_HOWTO = _by_split(negatives.HOWTO, negatives.HOWTO_CORE)
_EDIT = _by_split(negatives.EDIT, negatives.EDIT_CORE)
_NEG_WRAPS = _by_split(["[hey|ok|so|um|quick question], {S}", "{S} [thanks|lol|:)]", "{S}!", "{S}?? "], ["{S}"] * 4)

_ING = {"get": "getting", "put": "putting", "cut": "cutting", "let": "letting", "bin": "binning", "scrap": "scrapping",
        "stop": "stopping", "drop": "dropping", "scrub": "scrubbing", "zap": "zapping", "strike": "striking",
        "memory-hole": "memory-holing", "un-remember": "un-remembering", "reset": "resetting",
        "shred": "shredding", "quit": "quitting", "forget": "forgetting", "rid": "ridding"}
_TYPOS = {"please": ["pls", "plz", "pleas"], "you": ["u", "yu"], "your": ["ur", "yor", "you're"],
          "don't": ["dont", "don;t", "do'nt"], "forget": ["forgt", "froget", "foget"], "delete": ["delet", "deleet"],
          "remove": ["remvoe", "remov"], "memory": ["memroy", "memeory"], "about": ["abt", "abotu"],
          "could": ["cud", "coud"], "that": ["tht", "taht"], "what": ["wat", "waht"], "I'd": ["id", "Id"],
          "erase": ["earse", "erace"], "anything": ["anythin", "anyting"], "remember": ["remeber", "rember"]}


_NEGATED = re.compile(r"(?:don'?t|do not|no longer)\b")
_BEFORE_NEGATION = re.compile(r"(?:^|[,.:!?-]|\b(?:please|just|so|pls|but|kindly))\s*(?:\[[^\]]*\]\s*)?$")


def _ing(vp: str) -> str | None:
    verb, _, rest = vp.partition(" ")
    if verb in ("don't", "dont", "do", "no"):
        return None
    if verb in _ING:
        ing = _ING[verb]
    elif verb.endswith("e") and not verb.endswith("ee"):
        ing = verb[:-1] + "ing"
    else:
        ing = verb + "ing"
    return f"{ing} {rest}".strip()


def _typo(word: str, rng: random.Random) -> str:
    if word.lower() in _TYPOS:
        return rng.choice(_TYPOS[word.lower()])
    if len(word) < 4 or not word.isalpha():
        return word
    i = rng.randrange(1, len(word) - 1)
    swapped = word[:i] + word[i + 1] + word[i] + word[i + 2:]
    dropped, doubled = word[:i] + word[i + 1:], word[:i] + word[i] + word[i:]
    return rng.choice([swapped, dropped, doubled])


def _misspell(skeleton: str, rng: random.Random) -> str:
    # Only the words around the slots: a target keeps its spelling, so what it names stays checkable.
    parts = re.split(r"(\{\w+\}|\s+)", skeleton)
    spots = [i for i, p in enumerate(parts) if p and not p.isspace() and not p.startswith("{")]
    for _ in range(1 if rng.random() < 0.8 else 2):
        if spots:
            i = rng.choice(spots)
            parts[i] = _typo(parts[i], rng)
    return "".join(parts)


def _surface(text: str, rng: random.Random) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    roll = rng.random()
    if roll < 0.25:
        text = text.lower()
    elif roll < 0.28:
        text = text.upper()
    elif roll < 0.4:
        text = text[:1].lower() + text[1:]
    else:
        text = text[:1].upper() + text[1:]
    if rng.random() < 0.2:
        text = text.rstrip(".!?")
    elif text[-1:].isalnum() and rng.random() < 0.3:
        text += "."
    if rng.random() < 0.08:
        text = text.replace(",", "")
    if rng.random() < 0.08:
        text = text.replace("'", "")
    return text


def _skeleton_positive(template: str, is_vp: bool, split: str, rng: random.Random) -> str:
    if is_vp:
        frames = _POS_FRAMES[split]
        if _NEGATED.match(template):
            # "could you don't keep X" is not English: a negated phrase goes only where a sentence may start.
            frames = [f for f in frames if _BEFORE_NEGATION.search(f.partition("{VP}")[0])]
        frame = rng.choice(frames)
        ing = _ing(template)
        if ing and rng.random() < 0.08:
            return rng.choice(_GERUND[split]).replace("{VPing}", ing)
        return frame.replace("{VP}", template)
    return rng.choice(_WRAPS[split]).replace("{S}", template)


def _skeleton_negative(template: str, frames: str | None, split: str, rng: random.Random) -> str:
    if frames == "howto":
        return rng.choice(_HOWTO[split]).replace("{VP}", template)
    if frames == "edit":
        return rng.choice(_EDIT[split]).replace("{VP}", template)
    return rng.choice(_NEG_WRAPS[split]).replace("{S}", template)


# Which side each family is on, fixed by name (family_split.json): adding a family never moves another across, so
# held-out scores stay comparable from one version of the corpus to the next. A family not listed there yet is
# placed by a hash of its name, held out with probability TEST_SHARE.
_SPLIT = json.loads((Path(__file__).parent / "family_split.json").read_text())
HELD_OUT_FAMILIES = frozenset(_SPLIT["held_out"])
_LISTED = HELD_OUT_FAMILIES | frozenset(_SPLIT["training"])


def _rank(seed: int, salt: str, family: str) -> float:
    return int.from_bytes(hashlib.sha256(f"{seed}:{salt}:{family}".encode()).digest()[:8], "big") / 2**64


def _family_splits(seed: int, nested: bool = False, fold: int = 0) -> dict[str, str]:
    """Each family's side: as family_split.json lists it, or, for a family not listed, by a hash of its name; in
    the nested corpus a training family's fold is fixed by a hash of its name too."""
    splits = {}
    for family, _kind, *_ in positives.FAMILIES + negatives.FAMILIES:
        held = family in HELD_OUT_FAMILIES or (family not in _LISTED and _rank(seed, "split", family) < TEST_SHARE)
        if nested:
            if not held:
                splits[family] = "dev_test" if int(_rank(seed, "dev", family) * NESTED_FOLDS) == fold else "dev_train"
        else:
            splits[family] = "test" if held else "train"
    return splits


def corpus_generate(seed: int = SEED, nested: bool = False, fold: int = 0) -> list[Example]:
    """Every example of the corpus, deterministic for a given ``seed``; duplicates (after casing) dropped.

    ``nested``: the same protocol inside the training families only, for validation while training: their
    families, frames, reasons and slot values split again into "dev_train" and "dev_test"; no held-out material.
    ``fold`` (below ``NESTED_FOLDS``) says which share of each kind's training families is "dev_test".
    """
    splits = _family_splits(seed, nested, fold)
    seen: set[str] = set()
    examples: list[Example] = []
    jobs = [(f, k, t, 1, vp) for f, k, t, vp in positives.FAMILIES] + [
        (f, k, t, 0, frames) for f, k, t, frames in negatives.FAMILIES
    ]
    for family, kind, templates, label, how in jobs:
        if family not in splits:
            continue
        split = splits[family]
        rng = random.Random(f"{seed}:{'dev:' if nested else ''}{family}")
        for _ in range(PER_POSITIVE_FAMILY if label else PER_NEGATIVE_FAMILY):
            template = rng.choice(templates)
            if label:
                skeleton = _skeleton_positive(template, how, split, rng)
            else:
                skeleton = _skeleton_negative(template, how, split, rng)
            skeleton = skeleton.replace("{reason}", rng.choice(_REASONS[split]))
            if rng.random() < 0.2:
                skeleton = _misspell(skeleton, rng)
            text, targets = fill(skeleton, rng, split)
            text = _surface(text, rng)
            key = re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()
            if key in seen:
                continue
            seen.add(key)
            examples.append(Example(text, label, family, kind, split, tuple(targets) if label else ()))
    return examples


def corpus_hash(examples: list[Example]) -> str:
    """A short fingerprint of the corpus: the same seed and templates give the same hash."""
    digest = hashlib.sha256()
    for example in examples:
        digest.update(json.dumps(asdict(example), sort_keys=True).encode())
    return digest.hexdigest()[:16]
