"""The local embedder runs all-MiniLM-L6-v2 in numpy: its vectors are sentence-transformers' (the reference, with
torch: a test dependency only), it loads without torch and without a model hub."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from dellm_site.ai.embedding import LocalEmbedder

LONG = " ".join(f"On day {i} I walked the dog along the river, then baked rye bread and read about comets." for i in
                range(40))  # ~900 tokens: cut at max_seq_length (256)
SENTENCES = [
    "I keep bees in my garden.",
    "Where do I live?",
    "Forget everything I told you about my sister's wedding.",
    "My favourite dish is pad thai, but I'm allergic to peanuts!",
    "What's the capital of France?",
    LONG,
    LONG + " And one more thing that falls beyond the cut.",
    "Ünïcödé: café, naïve, smörgåsbord, Straße, ÆØÅ.",
    "我住在北京，喜欢喝茶。",
    "東京で寿司を食べました 🍣🎉",
    "Привет, как дела?",
    "مرحبا بالعالم",
    "emoji only: 😀😃😄😁",
    "",
    "   ",
    "?",
    "a",
    "\t\n  leading and trailing whitespace \n",
    "URL https://example.com/path?q=1&r=2 and e-mail someone@example.org, code `x = y + 1`.",
    "Numbers 3.14159, 2,718 and 1e-9; dates 2024-05-01.",
    "ALL CAPS SHOUTING ABOUT THE WEATHER",
    "supercalifragilisticexpialidocious " * 30,
]


@pytest.fixture(scope="module")
def reference():
    """The same model through sentence-transformers (torch): the reference."""
    pytest.importorskip("sentence_transformers")
    return LocalEmbedder(engine="sentence-transformers")


@pytest.fixture(scope="module")
def embedder():
    return LocalEmbedder()


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def test_the_numpy_vectors_are_sentence_transformers_vectors(embedder, reference):
    ours = embedder.embed(SENTENCES)
    theirs = reference.embed(SENTENCES)
    assert ours.shape == theirs.shape == (len(SENTENCES), 384) and ours.dtype == np.float32
    similarity = cosines(ours, theirs)
    worst = int(np.argmin(similarity))
    assert similarity.min() >= 0.9999, f"cosine {similarity[worst]:.6f} for {SENTENCES[worst][:60]!r}"
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)


def test_one_at_a_time_and_in_a_batch_of_mixed_lengths_give_the_same_vectors(embedder, reference):
    """Padding and the order of a batch change nothing: each text alone, in a 150-text batch of mixed lengths (more
    than one forward pass), and the reference on that same batch agree."""
    rng = np.random.default_rng(7)
    batch = [SENTENCES[i] for i in rng.integers(0, len(SENTENCES), size=150)]
    together = embedder.embed(batch)
    alone = np.stack([embedder.embed_one(text) for text in SENTENCES])
    index = {text: i for i, text in enumerate(SENTENCES)}
    assert cosines(together, alone[[index[text] for text in batch]]).min() >= 0.99999
    assert cosines(together, reference.embed(batch)).min() >= 0.9999


def test_every_layers_pooled_states_are_the_references_and_the_last_is_the_embedding(embedder, reference):
    """The deletion-request detector reads every layer's mean-pooled states: the numpy engine's equal those of
    sentence-transformers' own model, the last layer's row is the text's vector, and a text embedded alone keeps
    its layers for a while (a turn's message is not run through the model again)."""
    ours, theirs = embedder.embed_layers(SENTENCES), reference.embed_layers(SENTENCES)
    assert ours.shape == theirs.shape == (len(SENTENCES), 6, 384)
    for layer in range(6):
        assert cosines(ours[:, layer], theirs[:, layer]).min() >= 0.9999, layer
    np.testing.assert_allclose(np.linalg.norm(ours, axis=2), 1.0, atol=1e-5)
    assert cosines(ours[:, -1], embedder.embed(SENTENCES)).min() >= 0.99999
    # Earlier layers are not the last one: they hold something else.
    assert cosines(ours[:, 0], ours[:, -1]).max() < 0.9
    text = "I keep bees in my garden, behind the shed."
    embedder.embed_one(text)
    assert text in embedder._recent and len(embedder._recent) <= embedder.RECENT_LAYERS
    embedder.embed([f"batch {i}" for i in range(3)])
    assert not any(key.startswith("batch ") for key in embedder._recent)  # a batch does not evict a turn's message


def test_long_texts_are_cut_where_sentence_transformers_cuts_them(embedder, reference):
    model, library = embedder._load(), reference._load().library
    assert model.max_length == library.max_seq_length == 256
    ours = model.tokenize([LONG, "Where do I live?", ""])
    theirs = library.tokenize([LONG, "Where do I live?", ""])
    for row, ids in enumerate(ours):
        expected = theirs["input_ids"][row][theirs["attention_mask"][row].bool()].tolist()
        assert ids == expected
    assert len(ours[0]) == 256 and ours[2] == [101, 102]  # [CLS] [SEP]


def test_tokens_are_counted_as_sentence_transformers_counts_them_uncut(embedder, reference):
    for text in (LONG * 3, "Where do I live?", "", "東京で寿司を食べました 🍣🎉"):
        assert embedder.count_tokens(text) == reference.count_tokens(text)
    assert embedder.count_tokens(LONG * 3) > 2000


def test_the_local_embedder_loads_without_torch_or_a_model_hub():
    code = (
        "import sys; from dellm_site.ai.embedding import LocalEmbedder; "
        "v = LocalEmbedder().embed(['I keep bees.', 'Where do I live?']); "
        "assert v.shape == (2, 384), v.shape; "
        "loaded = [m for m in ('torch', 'sentence_transformers', 'transformers', 'huggingface_hub') "
        "if m in sys.modules]; "
        "assert not loaded, loaded; print('ok')"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


def test_erf_is_within_float32_noise_of_scipys():
    from scipy.special import erf

    from dellm_site.ai.minilm import _erf

    grid = np.linspace(-8, 8, 400_001, dtype=np.float32)
    error = np.abs(_erf(grid.copy()).astype(np.float64) - erf(grid.astype(np.float64)))
    assert error.max() < 1e-6


def test_no_texts_give_no_vectors(embedder):
    assert embedder.embed([]).shape == (0, 384)


def test_an_unknown_engine_is_refused():
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured, match="engine"):
        LocalEmbedder(engine="onnx")
