"""What the generated histories say: topics, sentence templates and the slots that fill them.

A user's statements ("I go sailing with Nadia in Porto every weekend.") hold information; their
questions ("Who did I go sailing with in Porto?") do not; a reply either quotes what it was given
(informative) or acknowledges (not). Slots (names, cities, numbers) make most texts distinct, so
full-text ranking meets rare words as in real histories.
"""

from __future__ import annotations

import random

# (topic, activity phrase, object): 40 topics; the quick scale uses the first 12.
TOPICS = [
    ("sailing", "go sailing", "boat"), ("cooking", "cook curries", "wok"), ("jazz", "play jazz piano", "piano"),
    ("gardening", "grow tomatoes", "greenhouse"), ("chess", "play chess", "chess set"),
    ("hiking", "hike mountain trails", "rucksack"), ("photography", "shoot film photos", "camera"),
    ("astronomy", "watch the stars", "telescope"), ("poetry", "write poems", "notebook"),
    ("running", "run half marathons", "running shoes"), ("climbing", "go bouldering", "harness"),
    ("baking", "bake sourdough", "oven"), ("cycling", "ride my road bike", "bicycle"),
    ("painting", "paint watercolours", "easel"), ("swimming", "swim in the lake", "wetsuit"),
    ("knitting", "knit scarves", "yarn"), ("birding", "watch birds", "binoculars"), ("pottery", "throw pots", "kiln"),
    ("fishing", "fish for trout", "fishing rod"), ("surfing", "surf at dawn", "surfboard"),
    ("tennis", "play tennis", "racket"), ("violin", "practise the violin", "violin"),
    ("woodwork", "build furniture", "workbench"), ("yoga", "do yoga", "yoga mat"),
    ("skiing", "ski off-piste", "skis"), ("reading", "read crime novels", "e-reader"),
    ("gaming", "play strategy games", "console"), ("dancing", "dance salsa", "dance shoes"),
    ("camping", "camp in the forest", "tent"), ("coffee", "roast coffee beans", "grinder"),
    ("wine", "taste natural wines", "wine rack"), ("languages", "learn Japanese", "dictionary"),
    ("football", "play five-a-side football", "football boots"), ("rowing", "row on the river", "rowing machine"),
    ("calligraphy", "practise calligraphy", "fountain pen"), ("drones", "fly drones", "drone"),
    ("beekeeping", "keep bees", "beehive"), ("archery", "shoot arrows", "longbow"),
    ("origami", "fold origami cranes", "paper stock"), ("volunteering", "volunteer at the shelter", "van"),
]
NAMES = [
    "Nadia", "Tomas", "Amelia", "Jordan", "Priya", "Mateo", "Ingrid", "Kwame", "Lucia", "Oskar", "Mei", "Farid",
    "Greta", "Rafael", "Sana", "Elliot", "Yara", "Bruno", "Hana", "Dmitri", "Zoe", "Idris", "Camila", "Henrik",
    "Aisha", "Luca", "Noor", "Felix", "Rosa", "Tariq", "Vera", "Ansel", "Leila", "Joost", "Mira", "Caspian",
]
CITIES = [
    "Porto", "Lisbon", "Ghent", "Bergen", "Kyoto", "Oaxaca", "Tallinn", "Cork", "Lyon", "Graz", "Split", "Malmo",
    "Hobart", "Valparaiso", "Leipzig", "Bologna", "Dunedin", "Quebec", "Tbilisi", "Seville", "Krakow", "Aarhus",
]

STATEMENTS = [
    "I {a} with {n} in {c} every weekend.",
    "My favourite {o} cost {k} euros in {c}.",
    "I started to {a} in {y} after meeting {n}.",
    "{n} taught me to {a} when we lived in {c}.",
    "I keep my {o} at the flat in {c}, locker number {k}.",
    "Last month I spent {k} hours trying to {a} with {n}.",
]
QUESTIONS = [
    "What do you remember about my {t}?",
    "Who did I {a} with in {c}?",
    "How much did my {o} cost?",
    "When did I start to {a}?",
]
# The few texts every history repeats (their vectors are real embeddings).
ACK = "Noted, I will remember that."
NOTHING = "I don't have anything in my memory about that."


def render(template: str, topic: tuple[str, str, str], rng: random.Random) -> str:
    """One sentence of ``template`` about ``topic`` with random slots."""
    name, activity, obj = topic
    return template.format(
        t=name, a=activity, o=obj, n=rng.choice(NAMES), c=rng.choice(CITIES), k=rng.randint(2, 9999),
        y=rng.randint(1990, 2025),
    )


def answer(quoted: str) -> str:
    """A reply that quotes the first item it was given (as the local LLM does)."""
    return f"From what you told me: {quoted}"


def statement_reply(statement: str) -> str:
    """A reply to a statement that repeats it back (informative, unlike the plain acknowledgement)."""
    return f"Good to know: {statement}"


def fact(statement: str) -> str:
    """The fact extracted from a statement, in the third person."""
    text = statement.rstrip(".")
    for first, third in (("I keep my", "Keeps their"), ("My favourite", "Their favourite"), ("I started", "Started"),
                         ("taught me", "taught them"), ("Last month I", "Last month they"), ("I ", "")):
        text = text.replace(first, third, 1)
    return text[:1].upper() + text[1:] + "."


def summary(topic: str, statements: list[str]) -> str:
    """A conversation's summary: its topic and a few of the statements it holds."""
    picked = " ".join(statements[:3])
    return f"The user talked about {topic}. {picked}".strip()
