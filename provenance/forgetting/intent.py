"""Recognising a deletion request in a chat message (never sent to the LLM, never stored).

``intent_detect`` scores a message with a logistic regression over its embedder's layers (each layer's token states,
mean-pooled: the last is the sentence embedding; the earlier ones carry more of how a sentence asks) and a dozen rule
signals (``intent_signals``), calibrated to a probability, and names what it asks to forget (``intent_targets``).
The weights live in ``intent_model.json``, written by ``python manage.py intent_train``; nothing is trained here.
"""

from __future__ import annotations

import json
import logging
import math
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np
from django.conf import settings

from dellm_site.ai.embedding import get_embedder
from dellm_site.errors import ApplicationError

from .intent_languages import gloss
from .intent_signals import has_cue, keeps_only, signals, typos_spelt_out
from .intent_targets import extract_targets, is_vague, request_gist, request_without_other_tasks

__all__ = [
    "Intent", "MODEL_PATH", "forget_request_target", "intent_classify", "intent_detect", "intent_features",
    "intent_model", "intent_model_using", "is_vague",
]

MODEL_PATH = Path(__file__).with_name("intent_model.json")
# An unsure message with no word the rules know as asking for something to go is asked about from this probability,
# and only when it is longer than a bare fragment ("Secret plan.", "My medical history.": a topic, no request; of
# the requests of every independent set, none of three words or fewer is recalled only this way).
# Nor when it is long: such a request is a short wish ("I'd rather that stayed between us"); a long message with no
# such word tells something ("My CPF is ..., and I'm leaving it here because ..."). Of the 59 independent sets'
# requests recalled only this way (42), none is longer than 26 words; of their other messages asked about this way,
# 9 of 27 are 30 words or longer, most of them statements of several sentences holding a secret.
UNCUED_ASK = 0.5
FRAGMENT_WORDS = 3
UNCUED_MAX_WORDS = 30
FORGET, ASK, NONE = "forget", "ask", "none"
logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Intent:
    outcome: str  # "forget" (sure) | "ask" (unsure) | "none"
    confidence: float  # calibrated probability that the message asks to forget something
    targets: list[str] = field(default_factory=list)  # what it names, one entry per target


@dataclass(frozen=True)
class _Head:
    coef_embedding: np.ndarray | None
    coef_signals: np.ndarray
    intercept: float
    a: float
    b: float
    sure: float
    ask: float

    def logit(self, rules: np.ndarray, features: np.ndarray | None) -> float:
        score = float(rules @ self.coef_signals) + self.intercept
        if features is not None:
            score += float(features @ self.coef_embedding)
        return score


@dataclass(frozen=True)
class IntentModel:
    embedder: str
    dimensions: int
    layers: int  # how many of the embedder's layers are read (their mean-pooled states, ``intent_features``)
    signal_names: tuple[str, ...]
    corpus_hash: str
    full: _Head
    fallback: _Head

    @property
    def features(self) -> int:
        return self.layers * self.dimensions


def _head(raw: dict, embedding: list[float] | None) -> _Head:
    return _Head(
        coef_embedding=None if embedding is None else np.asarray(embedding, dtype=np.float32),
        coef_signals=np.asarray(raw["coef_signals"], dtype=np.float32),
        intercept=float(raw["intercept"]),
        a=float(raw["calibration"]["a"]),
        b=float(raw["calibration"]["b"]),
        sure=float(raw["thresholds"]["forget"]),
        ask=float(raw["thresholds"]["ask"]),
    )


def intent_model() -> IntentModel:
    """The detector's weights, read once from the JSON that ``intent_train`` wrote (or those ``intent_model_using``
    puts in place for a while)."""
    return _using[-1] if _using else intent_model_load(MODEL_PATH)


_using: list[IntentModel] = []


@contextmanager
def intent_model_using(raw: dict):
    """Score with the weights ``raw`` (a model as ``intent_train`` returns it) inside the block: the training
    command's cross-check measures a model trained without one set on that set, without writing it anywhere."""
    _using.append(intent_model_parse(raw))
    try:
        yield _using[-1]
    finally:
        _using.pop()


@cache
def intent_model_load(path: Path) -> IntentModel:
    return intent_model_parse(json.loads(Path(path).read_text()))


def intent_model_parse(raw: dict) -> IntentModel:
    return IntentModel(
        embedder=raw["embedder"],
        dimensions=int(raw["dimensions"]),
        layers=int(raw["layers"]),
        signal_names=tuple(raw["feature_names"][1:]),
        corpus_hash=raw["corpus"]["hash"],
        full=_head(raw, raw["coef_embedding"]),
        fallback=_head(raw["fallback"], None),
    )


def intent_features(texts: list[str]) -> np.ndarray | None:
    """The detector's view of ``texts``: every layer's mean-pooled states, one row per text (shape (len(texts),
    layers x dimensions)); None from an embedder without layers. A text the turn has just embedded is not run
    through the model again (``LocalEmbedder.embed_layers`` keeps the last ones)."""
    layers = get_embedder().embed_layers(list(texts))
    return None if layers is None else layers.reshape(len(layers), -1)


def _features_for(model: IntentModel, text: str) -> np.ndarray | None:
    try:
        embedder = get_embedder()
    except Exception:  # a misconfigured embedder must not stop a chat message; the rules still work
        logger.warning("intent: no embedder available; using the rule signals alone", exc_info=True)
        return None
    if embedder.name != model.embedder or embedder.dimensions != model.dimensions:
        return None
    try:
        features = intent_features([text])
    except ApplicationError:
        logger.warning("intent: embedding failed; using the rule signals alone", exc_info=True)
        return None
    return None if features is None or features.shape[1] != model.features else features[0]


def _thresholds(head: _Head) -> tuple[float, float]:
    """The trained thresholds, unless the deployment sets its own (DELLM_INTENT_SURE, DELLM_INTENT_ASK)."""
    sure = settings.DELLM_INTENT_SURE if settings.DELLM_INTENT_SURE is not None else head.sure
    ask = settings.DELLM_INTENT_ASK if settings.DELLM_INTENT_ASK is not None else head.ask
    return sure, min(ask, sure)


def intent_classify(text: str, features: np.ndarray | None) -> Intent:
    """Score ``text`` with its ``features`` (``intent_features`` of the trained embedder), or by the rule signals
    alone (None).

    "forget" when the probability reaches the sure threshold (its targets may be [] for "forget what I just said");
    "ask" between the two thresholds, only when the message names something; "none" otherwise.
    """
    if not (text or "").strip():
        return Intent(NONE, 0.0, [])
    model = intent_model()
    found = signals(text)
    rules = np.array([found.get(name, 0) for name in model.signal_names], dtype=np.float32)
    head = model.full if features is not None else model.fallback
    score = head.logit(rules, None if features is None else np.asarray(features, dtype=np.float32))
    confidence = 1.0 / (1.0 + math.exp(-(head.a * score + head.b)))
    sure, ask = _thresholds(head)
    outcome = FORGET if confidence >= sure else ASK if confidence >= ask else NONE
    glossed = gloss(text)
    if outcome == NONE and features is not None and found["rule_request"] and glossed != text:
        # Another language's words, or chat shorthand, that the rules read as a request ("pakiusap, kalimutan mo
        # na yung ..."): the classifier has seen little text like it, so the user is asked rather than answered.
        # Never more than "ask": no false alarm comes of it.
        outcome, confidence = ASK, max(confidence, ask)
    asks_about_memory = any(found.get(n) for n in ("question", "asks_what_you_know", "complaint_or_hypothetical",
                                                    "generic_memory_question"))
    if outcome != NONE and asks_about_memory and not has_cue(text):
        # A question or complaint about memory with no word that asks for anything to go ("what is stored
        # about me?", "you clearly don't know me at all").
        outcome, confidence = NONE, min(confidence, ask / 2)
    if outcome != NONE and keeps_only(text):
        # Every deletion verb negated ("don't erase what I told you about my ex"): a wish to keep.
        outcome, confidence = NONE, min(confidence, ask / 2)
    # What it names is read where the rules read the request: in the gloss ("porfa borra lo de Ramiro" -> "please
    # delete the thing about Ramiro" -> "Ramiro"); a message with no other language's words is its own gloss.
    # Another task in the same message ("... and also what's a good brunch place?") names nothing to forget.
    targets = extract_targets(request_without_other_tasks(glossed)) if outcome != NONE else []
    if outcome == ASK and not targets:
        # Unsure, and no target in a shape the rules read ("could you please not hold on to the name of my
        # antidepressant?"): what is left of the message once its asking words are gone is what to ask about.
        # Without a word the rules know to ask for anything to go, the layers must find a request more likely than
        # not (people have more ways to say it than any list holds, but a bare "Secret plan." is not one); the
        # rules alone always need such a word. With nothing left, there is nothing to ask about.
        cued = has_cue(text) or (features is not None and confidence >= UNCUED_ASK
                                 and FRAGMENT_WORDS < len(text.split()) < UNCUED_MAX_WORDS)
        gist = request_gist(text) if cued else ""
        targets, outcome = ([gist], ASK) if gist else ([], NONE)
    return Intent(outcome, round(confidence, 4), targets)


_SIDE_BY_SIDE = re.compile(r"\bthis(?:(?:(?:\s*,)?\s+(?:and|or|&|plus)\s+|\s*[,;]\s*)this\b)+")


def _set_aside(text: str, target: str) -> str:
    """``text`` with ``target`` replaced by "this"; a target tidied of a quote's closing punctuation ('... Road"'
    for '... Road."') is found by its first half and replaced over its own length."""
    if target in text:
        return text.replace(target, "this")
    start = text.find(target[: len(target) // 2])
    return text if start < 0 else text[:start] + "this" + text[start + len(target):]


def intent_detect(text: str, *, features: np.ndarray | None = None) -> Intent:
    """Does ``text`` ask the assistant to forget something, how sure is that, and what does it name?

    ``features``: the text's ``intent_features`` row when the caller has computed them in a batch; otherwise they
    are read from the embedder (a message the turn has just embedded is not run through the model again).
    With the embedder the weights were trained for (``intent_model().embedder``), its layers and the rule
    signals are scored together. With any other embedder (an OpenAI one, say), or when embedding fails, only the
    rule signals are scored, by a second set of weights trained on them alone, with more conservative thresholds:
    "forget" needs a higher probability and more requests come back as "ask".

    A message with words of another language that ask for something to go ("porfa borra lo de Ramiro") is embedded
    as written (the turn's own pass serves); the rule signals and the targets read its English gloss
    (``intent_languages.gloss``).
    """
    if not (text or "").strip():
        return Intent(NONE, 0.0, [])
    model = intent_model()
    if features is None or np.shape(features) != (model.features,):
        features = _features_for(model, text)
    intent = intent_classify(text, features)
    if intent.outcome != FORGET and features is not None:
        spelt = typos_spelt_out(text)
        if spelt != text:
            # A misspelt word that carries the request ("delet both", "wifi pasword remov pls", "dont rember it"):
            # the rules read it as the word, the embedding as some other word. Short of sure, the message is judged
            # again as it was meant, at the cost of one more embedding, only for a message with such a typo.
            return intent_detect(spelt)
    if intent.outcome == FORGET or features is None or not has_cue(text):
        return intent
    # A request beside another task ("Scrap the stuff about my brother owing me money. Also, when's the best time
    # of year for Zanzibar?"): the task's words drown the request's. Judged again without that task, a request that
    # is then sure is asked about: never more than "ask" ("Forgive and forget, my nan always said. ... Is it even
    # healthy to try?" reads as sure without its question), so no false alarm comes of it. One more embedding, only
    # for a message with a deletion word and a part that asks for something else.
    glossed = gloss(text)
    alone_text = request_without_other_tasks(glossed)
    if alone_text != glossed:
        alone = intent_classify(alone_text, _features_for(model, alone_text))
        # Only when it names a thing: with the question gone, "Forget it lah, I'll just take Grab." waves off an
        # idea, and is as sure as any request.
        # Nor when the rules read an everyday sense in it ("remove nail polish without remover?"): a how-to beside
        # a question is no request.
        if alone.outcome == FORGET and any(not is_vague(t) for t in alone.targets) and \
                not signals(alone_text)["ordinary_cue"]:
            return Intent(ASK, max(intent.confidence, _thresholds(model.full)[1]), alone.targets)
    # A long target ("forget that the author's father was a doctor in Taipei and ...") can drown the request in
    # its own topic. Judged again with the target set aside, a request that is then sure is asked about: never
    # more than "ask", so this second look cannot add a false alarm. Costs one more embedding, only here.
    targets = intent.targets or extract_targets(gloss(text))
    frame = text
    for target in targets:
        frame = _set_aside(frame, target) if len(target.split()) >= 4 else frame
    # Targets side by side ("forget that <fact>, and <fact>") are one thing set aside: "forget that this", which
    # reads as the request it is, where "forget that this and this" reads as nothing much.
    frame = _SIDE_BY_SIDE.sub("this", frame)
    if frame == text:
        return intent
    again = intent_classify(frame, _features_for(model, frame))
    found = signals(text)
    if again.outcome != NONE and found["rule_request"] and found["that_clause"]:
        # The frame alone ("forget that this") may be only asked about: "forget that" can also wave off what was
        # just said. Here its object is a stated fact ("forget that I work as a pilot"), and every rule reads a
        # request: as sure as the trained threshold, and "forget" unless the deployment asks for more
        # (DELLM_INTENT_SURE above it: then it is asked about, as any request short of that).
        confidence = max(again.confidence, model.full.sure)
        sure, _ = _thresholds(model.full)
        return Intent(FORGET if confidence >= sure else ASK, min(confidence, 1.0), targets)
    if again.outcome != FORGET:
        return intent
    if intent.outcome == ASK and found["rule_request"]:
        # Already unsure, and shaped like a request at every rule ("forget that ..."): sure.
        return Intent(FORGET, again.confidence, targets)
    if found["ordinary_cue"]:
        # The rules read an everyday sense ("erase pencil marks off a painted wall without taking the paint off?",
        # "delete every 'very' from this sentence"): "erase this?" is a request, the message is not.
        return intent
    return Intent(ASK, max(intent.confidence, _thresholds(model.full)[1]), targets)


def forget_request_target(text: str) -> str | None:
    """If ``text`` asks the assistant to forget something, return what (its targets joined by "; "), else None.

    "Forget that I live in Lisbon." -> "I live in Lisbon"; "Please delete my address and my salary" ->
    "my address; my salary"; an unsure request ("ask") counts as a request; "" when it names nothing it can read.
    """
    intent = intent_detect(text)
    return "; ".join(intent.targets) if intent.outcome != NONE else None
