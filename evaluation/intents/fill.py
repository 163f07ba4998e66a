"""Filling the corpus templates: alternations, slots, targets, and the noise users add.

Template syntax: ``[a|b|]`` picks one alternative (empty allowed); ``{key}`` is a slot from ``slots.SLOTS``;
``{N}`` is a target as a noun phrase ("my address", "where I live", "my ex, Tom", "my address and my salary");
``{C}`` is a target as a clause ("I live in Lisbon"); ``{I}`` is a plain piece of personal information
("my address"), for negatives that mention one without asking to forget it.
"""

from __future__ import annotations

import random
import re

from .slots import slot

_ALT = re.compile(r"\[([^\[\]]*)\]")
_SLOT = re.compile(r"\{(\w+)\}")

# Facts a user shares, as clauses; {C} targets and the plain statements among the negatives.
FACTS = [
    "I live in {city}", "I moved to {city} [last year|in 2019|recently|a few months ago]", "I work as a {job}",
    "I'm a {job}", "I work at {company}", "I got fired from {company}", "I have a {species} called {petname}",
    "my {species} is called {petname}", "I was diagnosed with {illness}", "I have {illness}", "I take {medication}",
    "I'm on {medication}", "I earn {money}", "my salary is {money}", "I'm {age}", "I'm {age} years old",
    "I'm allergic to {food}", "my {relation} is called {name}", "my {relation}'s name is {name}",
    "I'm dating {name}", "I broke up with {name}", "I live on {street}", "my address is {age} {street}",
    "my {relation} has {illness}", "I love {hobby}", "I'm into {hobby}", "I failed my driving test",
    "I owe {name} money", "I'm pregnant", "I'm seeing a therapist", "I was arrested [once|as a teenager]",
    "I'm behind on my rent", "I cheated on my taxes", "my {relation} {name} is in prison", "I'm {age} and single",
    "I used to work at {company}", "I grew up in {city}", "I spend {money} on {hobby}", "I was born in {city}",
    "my {relation} and I don't speak anymore", "I'm going through a divorce", "I have a criminal record",
]
# Facts about other people, books and places, often long: what a user may also share, and want forgotten.
THIRD_FACTS = [
    "my friend {name} works as a {job} in {city}", "{name}'s novel \"{title}\" is set in {city}",
    "the author {name} wrote \"{title}\" after years as a {job}", "{name} grew up in {city} and studied {subject}",
    "{name}'s father was a {job}, which gave {name} a lifelong love of {hobby}",
    "{name} is known for books such as \"{title}\" and \"{title}\"", "my {relation} {name} has {illness}",
    "{name} won a prize for {subject} in {city} when she was {age}", "our neighbour {name} owes the bank {money}",
    "\"{title}\" draws on {name}'s own childhood in {city}, where the family ran a small bakery",
    "{name} teaches {subject} at a school in {city} and spends weekends {hobby}",
    "my {relation}'s company, {company}, is about to lay off half its staff",
    "{name}'s books explore {subject} through the eyes of a {job} who moves to {city}",
    "the {job} who treated {name} in {city} said the results were {illness}",
]
# Personal information as a plain noun phrase.
INFO = [
    "my address", "my home address", "my salary", "my phone number", "my email address", "my age", "my birthday",
    "my diagnosis", "my medical history", "my health stuff", "my health info", "my job", "my surname",
    "my bank details", "my medication", "my {relation}", "my {relation}'s name", "my {species}", "my {species}'s name",
    "my {hobby} hobby", "my old job at {company}", "my relationship with {name}", "my weight", "my income",
    "my last name", "my workplace", "my {relation} {name}", "my allergies", "my therapy", "my love life",
    "my family situation", "my religion", "my sexuality", "my passport number", "my kids' names", "my ex", "{topic}",
]
# Noun-phrase targets with what a reader should take as the target(s): "what I said about X" names X.
_NP = [
    ("{I}", "{I}"), ("{I}", "{I}"), ("{I}", "{I}"), ("where I live", "where I live"), ("where I work", "where I work"),
    ("how much I earn", "how much I earn"), ("how old I am", "how old I am"), ("what I do for a living", None),
    ("who I'm dating", "who I'm dating"), ("what meds I take", "what meds I take"),
    ("my ex, {name}", "my ex, {name}"), ("my {relation}, {name}", "my {relation}, {name}"), ("{name}", "{name}"),
    ("{topic}", "{topic}"), ("the {city} thing", "the {city} thing"), ("{petname}", "{petname}"),
    ("the fact that {C}", "{C}"), ("what I [said|told you|mentioned] about {I}", "{I}"),
    ("everything [about|on] {I}", "{I}"), ("anything [about|related to|to do with] {I}", "{I}"),
    ("the [part|bit|stuff|thing] about {I}", "{I}"), ("all mentions of {name}", "{name}"),
    ("[any|all] [info|information|details] [about|on] {I}", "{I}"), ('"{C}"', "{C}"), ("'{C}'", "{C}"),
    ("the [info|information] that {C}", "{C}"), ("what I told you about {topic}", "{topic}"),
    ("the [message|messages] where I [said|mentioned] {C}", "{C}"),
]
_BARE = [pair for pair in _NP if not re.match(r"(?:what|every|any|all|the (?:fact|\[))", pair[0])]
_LED = re.compile(r"(?:about|of|on|to|regarding|with|mention|mentions|sharing|telling you)\s*$", re.IGNORECASE)
_MULTI = ["{a} and {b}", "{a}, {b} and {c}", "{a}, {b}, and {c}", "both {a} and {b}", "{a} as well as {b}",
          "{a} plus {b}", "{a}, {b}", "{a} & {b}"]
_HEADS = [("{I}", "{I}"), ("where I live", "where I live"), ("how much I earn", "how much I earn"),
          ("how old I am", "how old I am"), ("where I work", "where I work"), ("the fact that {C}", "{C}")]


def expand(template: str, rng: random.Random) -> str:
    """Resolve every ``[a|b]`` alternation in ``template`` (innermost first)."""
    while True:
        found = _ALT.search(template)
        if not found:
            return template
        choice = rng.choice(found.group(1).split("|"))
        template = template[: found.start()] + choice + template[found.end():]


def _fill_slots(text: str, rng: random.Random, split: str, bound: dict[str, str]) -> str:
    def one(match: re.Match) -> str:
        key = match.group(1)
        if key in bound:
            return bound[key]
        if key == "I":
            return _fill_slots(expand(rng.choice(INFO), rng), rng, split, bound)
        if key == "C":
            return fact(rng, split)
        return slot(rng, key, split)

    return _SLOT.sub(one, text)


def fact(rng: random.Random, split: str) -> str:
    """A fact the user might share, as a clause: about themselves ("I live in Lisbon") or someone else."""
    pool = THIRD_FACTS if rng.random() < 0.3 else FACTS
    return _fill_slots(expand(rng.choice(pool), rng), rng, split, {})


def info(rng: random.Random, split: str) -> str:
    """A piece of personal information as a noun phrase ("my address")."""
    return _fill_slots(expand(rng.choice(INFO), rng), rng, split, {})


def _one_np(rng: random.Random, split: str, choices: list) -> tuple[str, str]:
    surface, target = rng.choice(choices)
    if isinstance(surface, str) and target is None:
        target = surface
    bound: dict[str, str] = {}
    for key in dict.fromkeys(_SLOT.findall(surface)):  # in order of appearance: the same draws every run
        bound[key] = _fill_slots("{" + key + "}", rng, split, {})
    surface = _fill_slots(expand(surface, rng), rng, split, bound)
    return surface, _fill_slots(target, rng, split, bound)


def noun_target(rng: random.Random, split: str, multi: float = 0.15) -> tuple[str, list[str]]:
    """A target as a noun phrase and the target(s) it names; sometimes two or three at once."""
    if rng.random() >= multi:
        surface, target = _one_np(rng, split, _NP)
        return surface, [target]
    pattern = rng.choice(_MULTI)
    parts = [_one_np(rng, split, _HEADS) for _ in range(pattern.count("{"))]
    if len({p[1].lower() for p in parts}) < len(parts):
        return parts[0][0], [parts[0][1]]
    keys = "abc"
    surface = pattern.format(**{keys[i]: p[0] for i, p in enumerate(parts)})
    return surface, [p[1] for p in parts]


def clause_target(rng: random.Random, split: str, multi: float = 0.12) -> tuple[str, list[str]]:
    """A target as a clause (used after "that") and the target(s) it names."""
    first = fact(rng, split)
    if rng.random() >= multi:
        return first, [first]
    second = fact(rng, split)
    if second.lower() == first.lower():
        return first, [first]
    joiner = rng.choice([" and that ", " and ", ", and that ", ", and "])
    if not re.match(r"(?i)(i|i'm|my)\b", second):
        joiner = " and that "
    return first + joiner + second, [first, second]


def fill(template: str, rng: random.Random, split: str) -> tuple[str, list[str]]:
    """Expand ``template`` and fill its slots; returns the text and the targets it names ({N}/{C})."""
    text = expand(template, rng)
    targets: list[str] = []

    def target(match: re.Match) -> str:
        key = match.group(1)
        if key == "N" and _LED.search(text[: match.start()]):
            # The template already leads in ("the bit about {N}"): a bare target, not "the bit about all info on X".
            surface, named = _one_np(rng, split, _BARE)
            named = [named]
        elif key == "N":
            surface, named = noun_target(rng, split)
        elif key == "C":
            surface, named = clause_target(rng, split)
        else:
            return match.group(0)
        targets.extend(named)
        return surface

    text = re.sub(r"\{(N|C)\}", target, text)
    return _fill_slots(text, rng, split, {}), targets
