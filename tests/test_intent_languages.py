"""Deletion requests with another language's words mixed in, chat shorthand and learner grammar."""

import pytest

from provenance.forgetting import intent
from provenance.forgetting.intent_languages import foreign_function_words, gloss
from provenance.forgetting.intent_signals import signals

# Written for this test: the word that asks for something to go is not English.
MIXED_REQUESTS = [
    "porfa bórralo, lo de mi hermano and the loan",
    "tolong hapus alamat rumah saya dari memory kamu",
    "esquece o que eu disse about my salary, ok?",
    "meri salary wali baat hata do please",
    "the thing about my landlord. usuń to, seriously",
    "oublie what I said about my doctor s'il te plaît",
    "olvida eso of my address pls",
    "supprime ce que j'ai dit sur mon salaire",
    "my ex ka naam, delete kar do yaar",
    "abeg forget am, the thing about my landlord",
    "xóa đi what I said about my visa",
    "zaboravi what I told you about my brother",
    "the address I gave you, wasurete kudasai",
]
# The same verbs in their everyday senses, or the user's own forgetting.
MIXED_ORDINARY = [
    "se me olvidó mi paraguas en el bus again",
    "bura lagta hai yaar, mera phone kho gaya",
    "nakalimutan ko yung payong ko sa jeep kanina",
    "como borrar el historial de Chrome?",
    "esqueci minha senha do banco, how do I reset it",
    "what does 'olvida' mean in English?",
    "aku lupa password wifi, how do I find it on my laptop",
    "unuttum my umbrella at the office again",
    "quên mất my keys, can you suggest a key finder",
]
# English idioms, shorthand and learner grammar that ask for something to be forgotten.
ENGLISH_REQUESTS = [
    "the bit about my overdraft - make it gone",
    "can you un-know what I said about my ex's new job",
    "my old phone number, act like you never saw it",
    "my student visa number, no need remember that",
    "pls rmv my home address",
    "my exam results I give you, you delete, ok?",
]
ENGLISH_ORDINARY = [
    "how do magicians make a coin disappear?",
    "I have a tattoo of my ex's name on my arm, I want to remove it",
    "I regret telling my cousin about the divorce, now everyone knows",
    "did I tell you my brother's name before? I don't remember if I did",
    "Translate into French: 'Please forget what I said yesterday.'",
    "forget it, I'll just phone the bank myself",
]


@pytest.mark.parametrize(
    "text, english",
    [
        ("porfa borra lo de Ramiro", "please delete the thing about Ramiro"),
        ("bórralo", "delete it"),
        ("apaga aí what I said", "delete that what I said"),
        ("aadhaar number hata do", "aadhaar number remove"),
        ("account delete kr do", "account delete"),
        ("that story. zapomnij.", "that story. forget."),
        ("não quero que saibas my pension", "I don't want you to know my pension"),
        ("del my student loan pls", "delete my student loan pls"),
        ("i no want that in your memory", "I don't want that in your memory"),
        ("se me olvidó el paraguas", "I forgot el paraguas"),
        ("kun je vergeten wat ik zei", "kun je forget wat ik zei"),
        ("please futa ile kitu", "please delete ile kitu"),
        ("o meseleyi unut", "o meseleyi forget"),
        ("pakidelete yung address ko", "please delete yung address ko"),
        ("supprime ça", "delete that"),
        ("abeg forget am", "please forget it"),
        ("the loan, jiwojwo", "the loan, erase"),
        ("fais comme si I never told you", "act as if I never told you"),
    ],
)
def test_gloss_reads_the_lexicon_in_english(text, english):
    assert gloss(text) == english


@pytest.mark.parametrize("text", [
    "Please delete my address", "I quite like the tire swing", "the deli sells tortillas", "he is a Delaware senator",
    "No need to remember that", "forget about it",
])
def test_gloss_leaves_english_alone(text):
    assert gloss(text) == text


@pytest.mark.parametrize("text", MIXED_REQUESTS + MIXED_ORDINARY)
def test_gloss_is_stable(text):
    assert gloss(gloss(text)) == gloss(text)


@pytest.mark.parametrize("text", MIXED_REQUESTS)
def test_mixed_requests_carry_a_deletion_verb(text):
    assert signals(text)["deletion_verb"]


def test_mixed_everyday_senses_read_as_such():
    assert signals("se me olvidó mi paraguas en el bus again")["self_forgetting"]
    assert signals("esqueci minha senha do banco, how do I reset it")["self_forgetting"]
    assert signals("como borrar el historial de Chrome?")["question"]


@pytest.mark.parametrize("text, name", [
    ("I have a tattoo of my ex's name on my arm, I want to remove it", "user_does_it"),
    ("I regret telling my cousin about the divorce", "told_someone_else"),
    ("did I tell you my brother's name before?", "asks_what_you_know"),
    ("Translate into French: 'Please forget what I said yesterday.'", "writing_task"),
    ("forget it, I'll just phone the bank myself", "never_mind"),
])
def test_ordinary_readings_have_their_signal(text, name):
    found = signals(text)
    assert found[name] and not found["rule_request"]


@pytest.mark.parametrize("text, rule", [
    ("from now on, my diagnosis from 2019 is something you don't know", True),
    ("going forward my son's suspension is off the books for you", True),
    ("Going forward, my daughter coming out is not something you're aware of.", True),
    ("from now on act as if the egg freezing idea was never mentioned", True),
    ("from now on, answer in French", False),
    ("going forward, skip the small talk", False),
    ("is that something you know about?", False),
])
def test_a_rule_taking_something_out_of_what_you_know_has_its_signal(text, rule):
    assert bool(signals(text)["no_longer_known"]) is rule


@pytest.mark.parametrize("text, dropped", [
    ("Ce que je t'ai dit sur la maladie de ma sœur Inès, please forget it, c'est pas mon histoire",
     {"ce", "que", "je", "sur", "la", "ma", "pas", "mon"}),
    ("Neha aur uss ladke wali baat remove karo, ghar ki baat hai", {"aur", "wali", "baat", "ki", "hai"}),
    # A few words that other languages use as well are no sign of one.
    ("my son left his car at the door", set()),
    ("forget what I said about Dan and the door, we might die", set()),
])
def test_function_words_of_a_language_mixed_in_are_found(text, dropped):
    found = foreign_function_words(text)
    assert dropped <= found if dropped else not found
    assert "inès" not in found and "neha" not in found


def test_i_dont_remember_is_not_stop_remembering():
    assert not signals("I don't remember if I told you")["stop_keeping"]
    assert signals("please don't remember my new address")["stop_keeping"]


@pytest.fixture(scope="module")
def vectors():
    texts = MIXED_REQUESTS + MIXED_ORDINARY + ENGLISH_REQUESTS + ENGLISH_ORDINARY
    return dict(zip(texts, intent.intent_features(texts), strict=True))


@pytest.mark.parametrize("text", MIXED_REQUESTS + ENGLISH_REQUESTS)
def test_mixed_and_idiomatic_requests_are_recognised(text, vectors):
    found = intent.intent_detect(text, features=vectors[text])
    assert found.outcome in ("forget", "ask"), found


@pytest.mark.parametrize("text", MIXED_ORDINARY + ENGLISH_ORDINARY)
def test_same_words_in_ordinary_messages_are_not_requests(text, vectors):
    assert intent.intent_detect(text, features=vectors[text]).outcome != "forget"


def test_a_mixed_request_is_embedded_as_written_and_ruled_on_as_its_gloss(vectors):
    text = MIXED_REQUESTS[0]
    assert gloss(text) != text
    # The message's own features serve: no second embedding of the gloss.
    assert intent.intent_detect(text, features=vectors[text]) == intent.intent_detect(text)
    assert signals(text) == signals(gloss(text))
    assert signals(text)["rule_request"]


def test_everything_the_user_said_is_a_target_not_a_question_about_memory():
    assert not signals("forget everything I just said")["generic_memory_question"]
    assert not signals("delete everything i've told you today")["generic_memory_question"]
    assert signals("forget everything I just said")["rule_request"]
    assert signals("do you forget everything I say?")["generic_memory_question"]
    assert signals("Can you forget things the way humans do?")["generic_memory_question"]


def test_a_stated_fact_after_that_is_a_clause_not_a_dismissal():
    for text in ("Forget that I'm vegan, so I have to be careful with food",
                 "Forget that my sister lives in Porto",
                 "Forget that Nikolai Abilov's father was a highly esteemed artist"):
        assert signals(text)["that_clause"], text
    for text in ("ok forget that, I'll do it later", "scrap that last idea", "delete that file from the repo",
                 "forget that stupid joke I made"):
        assert not signals(text)["that_clause"], text
    assert signals("ok forget that I'll do it later")["never_mind"]


def test_a_target_tidied_of_its_closing_quote_is_still_set_aside():
    text = 'Forget that the novel was called "Red Dust Road."'
    assert intent._set_aside(text, 'the novel was called "Red Dust Road"') == 'Forget that this"'
    assert intent._set_aside("Forget that I live in Porto", "I live in Porto") == "Forget that this"
    assert intent._set_aside("Forget it", "something else entirely") == "Forget it"


def test_a_long_stated_fact_to_forget_is_sure():
    text = ("Forget that Basil Mahfouz Al-Kuwaiti's writing style is known for its lyrical prose, intricate plot "
            "lines, and vividly drawn characters")
    assert intent.intent_detect(text).outcome == "forget"
    assert intent.intent_detect("ok forget that, I'll do it later").outcome == "none"


def test_tagalog_and_indonesian_requests_are_read_as_requests_by_the_rules_and_bad_in_hindi_is_not_a_verb():
    for text in ("pakiusap, kalimutan mo na yung tungkol sa utang ko kay Tita Baby", "wag mo na tandaan yung PIN ko",
                 "pakibura yung address ko", "tolong hapus nomor hp saya"):
        assert gloss(text) != text and signals(text)["rule_request"], text
    assert gloss("bura lagta hai yaar, mera phone kho gaya") == "bura lagta hai yaar, mera phone kho gaya"
    assert not signals("nakalimutan ko yung payong ko sa jeep kanina")["rule_request"]


def test_what_a_mixed_request_names_is_read_in_its_gloss():
    # "lo de Ramiro" is "the thing about Ramiro": the target is Ramiro, not the Spanish words around him.
    assert intent.intent_detect("porfa borra lo de Ramiro").targets == ["Ramiro"]
    assert intent.intent_detect("apaga aí what I said about Camila living in the US").targets == [
        "Camila living in the US"
    ]


def test_a_request_the_rules_read_only_through_the_gloss_is_at_least_asked_about():
    text = "pakiusap, kalimutan mo na yung tungkol sa utang ko kay Tita Baby"
    found = intent.intent_detect(text)
    assert signals(text)["rule_request"] and found.outcome in ("ask", "forget"), found
    assert found.targets and all("kalimutan" not in t for t in found.targets)
    # Ordinary messages in those languages are still answered.
    for other in ("nakalimutan ko yung payong ko sa jeep kanina", "como borrar el historial de Chrome?"):
        assert intent.intent_detect(other).outcome == "none", other
