"""Whether a stored item holds information (memory.information): the rule is checked on examples it was
not written from: a hand-written set below, and every question and answer of the shared datasets."""

from __future__ import annotations

import json

import pytest

from chat.models import Conversation, Message, Role
from evaluation.datasets import data_dir
from memory.information import holds_information, only_states
from memory.models import Fact, Summary

# Written after the rule, without running it on them.
USER_INFORMS = [
    "we adopted a greyhound last spring, his name is Biscuit",
    "I'm allergic to penicillin.",
    "My landlord is raising the rent to 1450 euros in March.",
    "Just so you know, my brother Anil lives in Leeds now.",
    "ok so my flight to Denver leaves on the 14th",
    "Haha yes, I finally passed my driving test!",
    "Can you help me plan meals? I'm diabetic and cook for two.",
    "What should I wear to the interview, given that I'm a vegan and hate leather?",
    "Please remember that my gym locker code is 2291.",
    "i quit smoking 3 weeks ago and its going ok",
    "Thanks! Also, my daughter starts school in September.",
    "My partner and I are thinking of moving to Ghent.",
    "Is it normal that my knee hurts after running? I run 10k every Sunday.",
    "Marta",
    "Work has been rough, my manager keeps cancelling our one-on-ones.",
]
USER_ASKS_ONLY = [
    "What's the name of my dog?",
    "where did I say my sister works",
    "Can you recommend a good book for a long train ride?",
    "Suggest three names for a sourdough starter.",
    "Explain how compound interest works.",
    "How old am I again?",
    "Thanks!",
    "ok",
    "hello there",
    "Write a haiku about autumn rain.",
    "Do you know what my favourite colour is?",
    "Could you list the things you know about my family?",
    "Tell me something fun.",
]
REPLY_INFORMS = [
    "Your dog is called Biscuit.",
    "You mentioned you live in Leeds, so the Dales are close by.",
    "Sure: rinse the stain with cold water, then dab it with white vinegar.",
    "Here is a simple plan: oats for breakfast, lentil soup for lunch and a stir-fry in the evening.",
    "Got it, your flight leaves on the 14th.",
    "Of course. Penicillin allergy noted: amoxicillin is in the same family, so avoid it too.",
    "The capital of Australia is Canberra.",
]
REPLY_EMPTY = [
    "Thanks for letting me know!",
    "I'll keep that in mind.",
    "Sounds great!",
    "I don't have any record of your sister's workplace.",
    "Sorry, I couldn't find anything about that in what you've told me.",
    "You haven't mentioned your favourite colour yet.",
    "Is there anything else I can help you with?",
    "Good to hear, let me know if you need anything.",
    "I'm not sure.",
]


@pytest.mark.parametrize("text", USER_INFORMS)
def test_a_user_message_that_states_something_holds_information(text):
    assert holds_information(kind="message", role="user", text=text)


@pytest.mark.parametrize("text", USER_ASKS_ONLY)
def test_a_user_message_that_only_asks_holds_none(text):
    assert not holds_information(kind="message", role="user", text=text)


@pytest.mark.parametrize("text", REPLY_INFORMS)
def test_a_reply_with_content_holds_information(text):
    assert holds_information(kind="message", role="assistant", text=text)


@pytest.mark.parametrize("text", REPLY_EMPTY)
def test_a_reply_that_only_acknowledges_or_finds_nothing_holds_none(text):
    assert not holds_information(kind="message", role="assistant", text=text)


def test_the_offline_backends_stock_replies_hold_none():
    from dellm_site.ai.local import ACKNOWLEDGEMENT, NOTHING_RELEVANT

    assert not holds_information(kind="message", role="assistant", text=ACKNOWLEDGEMENT)
    assert not holds_information(kind="message", role="assistant", text=NOTHING_RELEVANT)
    assert holds_information(
        kind="message", role="assistant", text="From what you told me: \u201cI live in Lisbon.\u201d"
    )


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I have a tortoise.", True),
        ("My sister moved to Porto last year.", True),
        ("I have a tortoise. What should I feed it?", False),
        ("Recommend a vet near me.", False),
        ("Thanks!", False),
    ],
)
def test_a_message_that_only_states_something(text, expected):
    assert only_states(text) is expected


def test_facts_and_summaries_always_hold_information():
    assert holds_information(kind="fact", role=None, text="Is 37 years old.")
    assert holds_information(kind="summary", role=None, text="The user said: I live in Lisbon.")


@pytest.mark.django_db
def test_the_flag_is_set_once_when_an_item_is_stored(user):
    conversation = Conversation.objects.create(owner=user)
    question = Message.objects.create(conversation=conversation, role=Role.USER, content="Where do I live?")
    statement = Message.objects.create(conversation=conversation, role=Role.USER, content="I live in Lisbon.")
    noted = Message.objects.create(
        conversation=conversation, role=Role.ASSISTANT, content="Noted, I will remember that."
    )
    fact = Fact.objects.create(owner=user, content="Lives in Lisbon.")
    summary = Summary.objects.create(owner=user, conversation=conversation, content="The user said: I live in Lisbon.")
    assert [question.informative, statement.informative, noted.informative] == [False, True, False]
    assert fact.informative and summary.informative
    question.content = "I live in Lisbon."  # decided when stored: a later save does not decide again
    question.save()
    question.refresh_from_db()
    assert question.informative is False


def _tofu_rows() -> list[dict]:
    rows: list[dict] = []
    with (data_dir() / "tofu" / "tofu_full.json").open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                rows.extend(json.loads(line))
    return rows


def test_the_datasets_questions_hold_none_and_their_answers_do():
    """4,000 TOFU questions and answers and the persona file, none of which the rule was written from:
    at most one in 500 is misread either way."""
    rows = _tofu_rows()
    personas = [
        json.loads(line) for line in (data_dir() / "personas" / "personas_dev.jsonl").read_text().splitlines() if line
    ]
    questions = [r["question"] for r in rows] + [qa["question"] for p in personas for qa in p["qa"]]
    questions += [request for p in personas for request in p["requests"]]
    statements = [r["answer"] for r in rows] + [s for p in personas for s in p["persona"]]
    asked = [q for q in questions if holds_information(kind="message", role="user", text=q)]
    stated = [s for s in statements if not holds_information(kind="message", role="user", text=s)]
    assert len(asked) <= len(questions) / 500, asked
    assert len(stated) <= len(statements) / 500, stated
