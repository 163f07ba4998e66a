"""Training the deletion-request detector: embeddings plus rule signals, logistic regression, calibration, thresholds.

Everything is chosen on the training families alone. The corpus's held-out protocol is repeated inside them (the
nested corpus: training families, frames, reasons and slot values split again into dev_train and dev_test), so
the regularisation, the calibration and the two thresholds are fitted to scores on families, frames and values the
model had not seen, as the held-out families will be. The training families are dealt into ``NESTED_FOLDS`` folds,
each held out once, and the thresholds are picked on all their scores together: which concept happens to land on
the validation side then moves them far less than with a single split. The final weights are then fitted on all
training families. The held-out families are not read here.

The independently written sets named in ``TRAINING_SETS``
(``independent_{a,b,d-g,i,k-o,q,s,v,x,aa,ac,ad,ae,ag,ah,aj,ak,ao,aq}.jsonl``: other authors' phrasings of requests,
ordinary messages, statements) join the training data, repeated ``INDEPENDENT_WEIGHT`` times so their few hundred
messages count against thousands of templated ones;
``independent_{c,h,j,p,r,t,u,w,y,z,ab,af,ai,al,am,an,ap,ar,as,at,au,av,aw,ax,ay,az,ba,bb,bc,bd,be,bf,bg,bh,bi}`` and
``handwritten.jsonl`` are never read here (they are the held-out checks of how the detector does on phrasings
nobody tuned it to; the resolver's code was changed with ``au``, ``aw``, ``ax``, ``ay``, ``bb``, ``bd``, ``bf``,
``bg`` and ``bh`` looked at).

The "ask" threshold is then checked against authors: each training set is left out in turn, a model with the chosen
weights' settings is fitted without it and scores it. Those scores are what a new author's messages get, and the
corpus's templated families are not (their negatives are near-copies of a few dozen concepts each). "ask" is lowered
to the lowest threshold at which at most ``AUTHOR_ASK_MAX_NEGATIVES`` of the left-out authors' ordinary messages
would be asked about; "forget" stays where the corpus put it.
"""

from __future__ import annotations

import platform
from collections.abc import Callable
from functools import cache

import numpy as np

from dellm_site.ai.embedding import get_embedder
from provenance.forgetting.intent import intent_features
from provenance.forgetting.intent_signals import SIGNAL_NAMES, signals

from .corpus import NESTED_FOLDS, SEED, Example, corpus_generate, corpus_hash

INDEPENDENT_WEIGHT = 10
TRAINING_SETS = ("independent_a", "independent_b", "independent_d", "independent_e", "independent_f", "independent_g",
                 "independent_i", "independent_k", "independent_l", "independent_m", "independent_n", "independent_o",
                 "independent_q", "independent_s", "independent_v", "independent_x", "independent_aa", "independent_ac",
                 "independent_ad", "independent_ae", "independent_ag", "independent_ah", "independent_aj",
                 "independent_ak", "independent_ao", "independent_aq")


def independent_training(split: str, sets: tuple[str, ...] = TRAINING_SETS) -> list[Example]:
    """The training sets' messages (``sets``) as examples of ``split`` (repeated, see INDEPENDENT_WEIGHT)."""
    from .report import INDEPENDENT, independent_items, independent_rows

    items = [item for name in sets for item in independent_items(independent_rows(INDEPENDENT[name]))]
    return [Example(i.text, i.label, f"independent/{i.group}", i.kind, split) for i in items] * INDEPENDENT_WEIGHT


# (C, signal boost) pairs tried for the full model; C alone for the rules-only one.
GRID = [(c, k) for c in (0.01, 0.03, 0.1, 0.3) for k in (1.0, 2.0, 4.0)]
FALLBACK_GRID = [(c, 1.0) for c in (0.1, 1.0, 10.0)]
# What the thresholds aim for on the validation families (every training family, scored by the fold that left it
# out). Their negatives include deliberately ambiguous ones ("delete the second stop in Cork", "forget that, I'll
# do it later"), each family a few dozen near-copies, so one such concept alone can hold most of a small allowance:
# "forget" asks for at most the 1% of false alarms allowed, and for a probability of at least SURE_FLOOR.
SURE_FLOOR = 0.8
SURE_MAX_FALSE_ALARMS = 0.01
ASK_MIN_RECALL = 0.995
ASK_MAX_NEGATIVES = 0.03
# On the authors left out one at a time (see above): the share of their ordinary messages (every one of them
# written to sound like a request: "forgot my keys", "delete a git branch") "ask" may catch.
AUTHOR_ASK_MAX_NEGATIVES = 0.015
# Without the embedding only the rules remain: "forget" needs more, and more is left to "ask".
FALLBACK_SURE_MAX_FALSE_ALARMS = 0.002
FALLBACK_ASK_MIN_RECALL = 0.97
FALLBACK_ASK_MAX_NEGATIVES = 0.10


def signal_matrix(texts: list[str]) -> np.ndarray:
    """The rule signals of every text, one row each, columns in ``SIGNAL_NAMES`` order."""
    return np.array([[found[name] for name in SIGNAL_NAMES] for found in map(_signals, texts)], dtype=np.float32)


@cache
def _signals(text: str) -> dict:
    return signals(text)  # the corpus scores every text for both heads and the validation split: once each


def embed_texts(texts: list[str], log: Callable[[str], None] | None = None, batch: int = 512) -> np.ndarray:
    """The detector's features of ``texts`` (``intent_features``: every layer of the configured embedder), in
    batches."""
    embedder = get_embedder()
    rows = []
    for start in range(0, len(texts), batch):
        features = intent_features(texts[start: start + batch])
        if features is None:
            raise ValueError(f"The embedder {embedder.name} has no layers to train the detector on.")
        rows.append(features)
        if log:
            log(f"  embedded {min(start + batch, len(texts))}/{len(texts)}")
    return np.vstack(rows) if rows else np.zeros((0, embedder.dimensions), dtype=np.float32)


def fit(x: np.ndarray, y: np.ndarray, c: float, dims: int, boost: float = 1.0, block: int | None = None) -> dict:
    """Logistic regression on ``x`` (its first ``dims`` columns the layers' states, ``block`` columns each);
    returns its weights and intercept."""
    from sklearn.linear_model import LogisticRegression

    mean = x.mean(axis=0)
    # One scale for each layer's block (some of its dimensions are constant), one per signal column; the signals
    # are then multiplied by ``boost``: a column scaled by k is penalised k^2 times less.
    spread = x.std(axis=0)
    spread[spread < 1e-6] = 1.0
    scale = spread / boost
    block = block or dims or 1
    for start in range(0, dims, block):
        scale[start: start + block] = float(np.sqrt(np.mean(x[:, start: start + block].var(axis=0))))
    model = LogisticRegression(C=c, max_iter=5000).fit((x - mean) / scale, y)
    # Fold the scaling into the weights: the detector needs only w . x + b.
    coef = model.coef_[0] / scale
    return {"coef": coef, "intercept": float(model.intercept_[0] - np.dot(coef, mean))}


def scores(head: dict, x: np.ndarray) -> np.ndarray:
    """The fitted regression's logits for the rows of ``x``."""
    return x @ head["coef"] + head["intercept"]


def _log_loss(y: np.ndarray, scores: np.ndarray) -> float:
    return float(np.mean(np.logaddexp(0.0, -scores * (2 * y - 1))))  # stable for large scores


def _platt(y: np.ndarray, scores: np.ndarray) -> tuple[float, float]:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=1e6, max_iter=1000).fit(scores.reshape(-1, 1), y)
    return float(model.coef_[0][0]), float(model.intercept_[0])


def thresholds_pick(y: np.ndarray, p: np.ndarray, max_fa: float, min_recall: float, max_neg_ask: float) -> dict:
    """The "forget" and "ask" thresholds for calibrated probabilities ``p`` of labelled validation messages."""
    pos, neg = p[y == 1], p[y == 0]
    grid = np.unique(np.concatenate([p, [0.5, 0.999]]))
    sure = next(t for t in grid if t >= SURE_FLOOR and np.mean(neg >= t) <= max_fa)
    # "ask" catches what "forget" misses, as long as few ordinary messages fall between the two thresholds.
    ask = max([t for t in grid if t <= sure and np.mean(pos >= t) >= min_recall] or [sure])
    while ask < sure and np.mean((neg >= ask) & (neg < sure)) > max_neg_ask:
        ask = grid[np.searchsorted(grid, ask) + 1]
    return {"forget": round(float(sure), 4), "ask": round(float(min(ask, sure)), 4)}


def rates(y: np.ndarray, p: np.ndarray, thresholds: dict) -> dict:
    """Recall (forget or ask), sure recall, false alarms (forget) and ask rates at ``thresholds``."""
    sure, ask = p >= thresholds["forget"], p >= thresholds["ask"]
    return {
        "recall": round(float(np.mean(ask[y == 1])), 4),
        "recall_sure": round(float(np.mean(sure[y == 1])), 4),
        "false_alarms": round(float(np.mean(sure[y == 0])), 4),
        "ask_positives": round(float(np.mean((ask & ~sure)[y == 1])), 4),
        "ask_negatives": round(float(np.mean((ask & ~sure)[y == 0])), 4),
    }


def _head(folds: list[tuple], final: tuple, dims: int, grid, targets, log, block: int | None = None) -> dict:
    """Choose (C, boost) and calibrate on the folds' dev parts together, pick thresholds there, then fit on the
    final training set. ``folds``: ((dev_train x, y), (dev_test x, y)) for each fold."""
    xf, yf = final
    yd = np.concatenate([dev[1] for _, dev in folds])
    best = None
    for c, boost in grid:
        dev_scores = np.concatenate([scores(fit(*train, c, dims, boost, block), dev[0]) for train, dev in folds])
        loss = _log_loss(yd, dev_scores)
        log(f"  C={c} signal boost={boost}: validation log loss {loss:.4f}")
        best = best if best and best[0] <= loss else (loss, c, boost, dev_scores)
    _, c, boost, dev_scores = best
    a, b = _platt(yd, dev_scores)
    calibrated = 1 / (1 + np.exp(-(a * dev_scores + b)))
    thresholds = thresholds_pick(yd, calibrated, *targets)
    return {"C": c, "boost": boost, **fit(xf, yf, c, dims, boost, block),
            "calibration": {"a": round(a, 6), "b": round(b, 6)}, "thresholds": thresholds,
            "validation": rates(yd, calibrated, thresholds), "dev": (yd, calibrated)}


def _round(values) -> list[float]:
    return [float(f"{v:.6g}") for v in values]


def _part(examples: list[Example], split: str, vectors: dict, rules_only: bool) -> tuple[np.ndarray, np.ndarray]:
    chosen = [e for e in examples if e.split == split]
    texts = [e.text for e in chosen]
    rules = signal_matrix(texts)
    x = rules if rules_only else np.hstack([np.stack([vectors[t] for t in texts]), rules])
    return x, np.array([e.label for e in chosen])


def _authors_left_out(head: dict, examples: list[Example], training_sets: tuple[str, ...], vectors: dict,
                      dims: int, block: int, log) -> dict:
    """Each training set scored by a model fitted without it (the head's C and boost, calibrated as the head is),
    and the lowest "ask" threshold below "forget" that asks about at most AUTHOR_ASK_MAX_NEGATIVES of their
    ordinary messages."""
    from .report import INDEPENDENT, independent_items, independent_rows

    corpus = [e for e in examples if e.split == "train" and not e.family.startswith("independent/")]
    a, b = head["calibration"]["a"], head["calibration"]["b"]
    ys, ps = [], []
    for left_out in training_sets:
        others = tuple(name for name in training_sets if name != left_out)
        x, y = _part(corpus + independent_training("train", others), "train", vectors, False)
        fitted = fit(x, y, head["C"], dims, head["boost"], block)
        items = independent_items(independent_rows(INDEPENDENT[left_out]))
        texts = [i.text for i in items]
        missing = [t for t in dict.fromkeys(texts) if t not in vectors]
        vectors.update(zip(missing, embed_texts(missing), strict=True))
        xs = np.hstack([np.stack([vectors[t] for t in texts]), signal_matrix(texts)])
        ys.append(np.array([i.label for i in items]))
        ps.append(1 / (1 + np.exp(-(a * scores(fitted, xs) + b))))
        log(f"  scored {left_out} with a model fitted without it")
    y, p = np.concatenate(ys), np.concatenate(ps)
    return {"y": y, "p": p, "ask": ask_for_authors(y, p, head["thresholds"]["forget"])}


def ask_for_authors(y: np.ndarray, p: np.ndarray, sure: float,
                    max_negatives: float = AUTHOR_ASK_MAX_NEGATIVES) -> float:
    """The lowest "ask" threshold (at most ``sure``) at which at most ``max_negatives`` of the ordinary messages
    (``y == 0``) score between it and ``sure``."""
    neg = p[y == 0]
    grid = np.unique(np.concatenate([p[p < sure], [sure]]))
    return float(next(t for t in grid if np.mean((neg >= t) & (neg < sure)) <= max_negatives))


def nested_corpus(seed: int = SEED, training_sets: tuple[str, ...] = TRAINING_SETS) -> list[list[Example]]:
    """The nested validation corpus, one list per fold (the independent sets are on every fold's dev_train side)."""
    extra = independent_training("dev_train", training_sets)
    return [corpus_generate(seed, nested=True, fold=fold) + extra for fold in range(NESTED_FOLDS)]


def intent_train(
    seed: int = SEED, log: Callable[[str], None] = lambda _: None, training_sets: tuple[str, ...] = TRAINING_SETS,
    vectors: dict[str, np.ndarray] | None = None,
) -> dict:
    """Generate the corpus, embed its training families, fit both heads; returns the model as a JSON-ready dict."""
    import sklearn

    examples = corpus_generate(seed) + independent_training("train", training_sets)
    folds = nested_corpus(seed, training_sets)
    nested = [e for fold in folds for e in fold]
    train = [e for e in examples if e.split == "train"]
    log(f"corpus {corpus_hash(examples)}: {len(examples)} examples, {len(train)} in training families; "
        f"nested validation corpus {corpus_hash(nested)}: {len(nested)} examples")
    embedder = get_embedder()
    # ``vectors``: texts already embedded (the cross-check trains five times on nearly the same corpus).
    vectors = {} if vectors is None else vectors
    texts = [t for t in dict.fromkeys([e.text for e in train] + [e.text for e in nested]) if t not in vectors]
    vectors.update(zip(texts, embed_texts(texts, log), strict=True))
    # Every layer's states side by side (``intent_features``): ``dims`` columns, ``embedder.dimensions`` per layer.
    dims = len(next(iter(vectors.values())))
    layers = dims // embedder.dimensions
    heads = {}
    for name, rules_only, grid, targets in (
        ("full", False, GRID, (SURE_MAX_FALSE_ALARMS, ASK_MIN_RECALL, ASK_MAX_NEGATIVES)),
        ("fallback", True, FALLBACK_GRID,
         (FALLBACK_SURE_MAX_FALSE_ALARMS, FALLBACK_ASK_MIN_RECALL, FALLBACK_ASK_MAX_NEGATIVES)),
    ):
        log(f"{name} model ({'signals only' if rules_only else 'layers + signals'})")
        parts = [(_part(fold, "dev_train", vectors, rules_only), _part(fold, "dev_test", vectors, rules_only))
                 for fold in folds]
        heads[name] = _head(parts, _part(examples, "train", vectors, rules_only), 0 if rules_only else dims, grid,
                            targets, log, embedder.dimensions)
    full, fallback = heads["full"], heads["fallback"]
    if len(training_sets) > 1:
        authors = _authors_left_out(full, examples, training_sets, vectors, dims, embedder.dimensions, log)
        full["thresholds"]["ask"] = round(min(full["thresholds"]["ask"], authors["ask"]), 4)
        full["validation"] = rates(*full["dev"], full["thresholds"])
        full["validation_authors"] = rates(authors["y"], authors["p"], full["thresholds"])
        log(f"  left-out authors at the thresholds {full['thresholds']}: {full['validation_authors']}")
    return {
        "version": 2,
        "embedder": embedder.name,
        "dimensions": embedder.dimensions,
        "layers": layers,
        "feature_names": [f"layers[{layers}x{embedder.dimensions}]", *SIGNAL_NAMES],
        "coef_embedding": _round(full["coef"][:dims]),
        "coef_signals": _round(full["coef"][dims:]),
        "intercept": round(full["intercept"], 6),
        "calibration": full["calibration"],
        "thresholds": full["thresholds"],
        "C": full["C"],
        "signal_boost": full["boost"],
        "validation": full["validation"],
        **({"validation_authors": full["validation_authors"]} if "validation_authors" in full else {}),
        "fallback": {
            "coef_signals": _round(fallback["coef"]),
            "intercept": round(fallback["intercept"], 6),
            "calibration": fallback["calibration"],
            "thresholds": fallback["thresholds"],
            "C": fallback["C"],
            "validation": fallback["validation"],
        },
        "corpus": {
            "seed": seed,
            "hash": corpus_hash(examples),
            "nested_hash": corpus_hash(nested),
            "examples": len(examples),
            "train_examples": len(train),
            "train_families": len({e.family for e in train}),
            "validation_examples": len(nested),
            "independent_sets": list(training_sets),
        },
        "trained_with": (
            f"scikit-learn {sklearn.__version__}, numpy {np.__version__}, python {platform.python_version()}"
        ),
    }


def intent_cross_check(seed: int = SEED, log: Callable[[str], None] = lambda _: None) -> dict:
    """Leave one author out: for each set of ``TRAINING_SETS``, a model trained on the corpus and the other sets,
    scored on the one left out (its requests, its ordinary messages and its users' statements). It tells how the
    detector does on an author it never saw, which the shipped model (trained on them all) cannot."""
    from provenance.forgetting.intent import intent_detect, intent_model_using

    from .report import INDEPENDENT, _score, _summary, independent_items, independent_rows

    results, vectors = {}, {}
    for left_out in TRAINING_SETS:
        log(f"trained without {left_out}")
        model = intent_train(seed, log, tuple(name for name in TRAINING_SETS if name != left_out), vectors)
        items = independent_items(independent_rows(INDEPENDENT[left_out]))
        missing = [t for t in dict.fromkeys(i.text for i in items) if t not in vectors]
        vectors.update(zip(missing, embed_texts(missing), strict=True))
        with intent_model_using(model):
            results[left_out] = _summary(_score(items, lambda i: intent_detect(i.text, features=vectors[i.text])))
        log(f"  {left_out}: {results[left_out]}")
    return results
