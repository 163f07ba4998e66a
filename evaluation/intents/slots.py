"""Slot values for the intent corpus, each list split into disjoint train and test parts.

A held-out family is filled only from the test parts, so a held-out score never rests on a city, name or
illness the classifier saw in training.
"""

from __future__ import annotations

import random

_RAW: dict[str, list[str]] = {
    "city": [
        "Lisbon", "Porto", "Seville", "Budapest", "Melbourne", "Osaka", "Nairobi", "Lyon", "Krakow", "Quito",
        "Glasgow", "Hanoi", "Denver", "Tallinn", "Recife", "Adelaide", "Bergen", "Leeds", "Cork", "Ghent",
        "Montreal", "Pune", "Cusco", "Tbilisi", "Marseille", "Turin", "Graz", "Halifax", "Perth", "Bologna",
    ],
    "job": [
        "nurse", "dentist", "bus driver", "software engineer", "chemistry teacher", "radio producer", "plumber",
        "sous-chef", "commercial pilot", "barista", "paralegal", "vet", "electrician", "data analyst", "librarian",
        "welder", "midwife", "tax advisor", "carpenter", "physiotherapist", "court reporter", "florist",
        "firefighter", "translator", "pharmacist", "stage manager", "mortgage broker", "zookeeper",
    ],
    "species": [
        "cat", "dog", "tortoise", "rabbit", "parrot", "hamster", "corgi", "goldfish", "ferret", "gecko",
        "beagle", "guinea pig", "cockatiel", "husky", "iguana",
    ],
    "petname": [
        "Sheldon", "Waffles", "Clover", "Pumpkin", "Biscuit", "Mochi", "Pepper", "Ziggy", "Noodle", "Olive",
        "Rocket", "Juniper", "Bruno", "Pickles", "Nimbus", "Tofu", "Marmalade", "Gizmo", "Pebble", "Fig",
    ],
    "name": [
        "Tom", "Anna", "Sam", "Priya", "Marco", "Leila", "Jonas", "Chloe", "Dmitri", "Fatima", "Kenji", "Rosa",
        "Ethan", "Ines", "Tariq", "Greta", "Luis", "Mei", "Oscar", "Hana", "Victor", "Amara", "Felix", "Nadia",
        "Kofi", "Elsa", "Rahul", "Zoe", "Pavel", "Lucia",
    ],
    "relation": [
        "ex", "sister", "brother", "boss", "mother", "father", "cousin", "neighbour", "roommate", "husband",
        "wife", "girlfriend", "boyfriend", "best friend", "landlord", "therapist", "son", "daughter",
        "stepdad", "aunt", "coworker", "flatmate",
    ],
    "illness": [
        "diabetes", "depression", "asthma", "an anxiety disorder", "epilepsy", "migraines", "ADHD", "psoriasis",
        "Crohn's disease", "high blood pressure", "insomnia", "celiac disease", "a heart murmur", "endometriosis",
        "long covid", "bipolar disorder", "sleep apnea", "tinnitus", "a thyroid problem", "IBS",
    ],
    "food": [
        "peanuts", "shellfish", "gluten", "lactose", "eggs", "soy", "sesame", "kiwi", "strawberries", "mustard",
        "celery", "tree nuts",
    ],
    "hobby": [
        "bouldering", "salsa dancing", "playing the cello", "birdwatching", "sourdough baking", "chess",
        "amateur astronomy", "knitting", "surfing", "pottery", "poker", "fantasy football", "cosplay",
        "woodworking", "trail running", "karaoke", "online gaming", "stand-up comedy",
    ],
    "company": [
        "Acme Corp", "Globex", "Initech", "a startup in Berlin", "the bank", "Northwind", "Hooli", "the council",
        "a call centre", "Umbrella Logistics", "the hospital", "Vandelay Industries",
    ],
    "topic": [
        "my divorce", "my debts", "my therapy sessions", "my court case", "my pregnancy", "my drinking",
        "my surgery", "the affair", "my visa problems", "my breakup", "the bankruptcy", "my panic attacks",
        "my arrest", "my custody battle", "the miscarriage", "my gambling", "my eating disorder", "the lawsuit",
        "my rehab stay", "my credit score",
    ],
    "item": [
        "keys", "wallet", "phone", "umbrella", "laptop charger", "passport", "lunch", "glasses", "headphones",
        "badge", "gym bag", "bus pass", "water bottle", "reading glasses",
    ],
    "place": [
        "home", "the office", "the gym", "my mum's place", "the train", "the cafe", "school", "the car",
        "the library", "work", "the restaurant", "my friend's flat",
    ],
    "title": [
        "The Quiet Harbour", "Salt and Cedar", "A Winter in Fez", "The Glass Orchard", "Night Trains", "Paper Lanterns",
        "The Cartographer's Daughter", "The Amber Road", "Red Dust Road", "The Last Ferry", "Small Gods of Lagos",
        "Under the Linden", "The Weaver's Debt", "Blue Hour", "Letters from Tangier", "The Clockmaker",
    ],
    "subject": [
        "history", "cooking", "chemistry", "jazz", "architecture", "poetry", "philosophy", "astronomy", "football",
        "medicine", "economics", "gardening", "sculpture", "climate science",
    ],
    "age": [str(n) for n in range(19, 79, 2)],
    "money": [
        "42k", "$85,000", "£31,000", "60 grand", "€2,400 a month", "$120k", "95 thousand", "£18 an hour",
        "70k", "$3,100 a month", "€55,000", "200k",
    ],
    "street": [
        "Rua Augusta", "Maple Street", "Baker Street", "Oak Avenue", "Calle Mayor", "Elm Road", "King's Lane",
        "Station Road", "Birch Close", "Harbour View", "Mill Lane", "Victoria Terrace",
    ],
    "medication": [
        "sertraline", "insulin", "metformin", "lithium", "an inhaler", "beta blockers", "antidepressants",
        "birth control", "sleeping pills", "blood thinners", "methadone", "steroids",
    ],
    "app": [
        "Instagram", "Facebook", "TikTok", "Snapchat", "Twitter", "LinkedIn", "Spotify", "WhatsApp", "Reddit",
        "Tinder", "Pinterest", "Discord", "Strava", "Duolingo",
    ],
    "stain": [
        "red wine", "coffee", "grass", "blood", "ink", "grease", "tomato sauce", "sweat", "mud", "lipstick",
        "curry", "rust", "candle wax", "chocolate",
    ],
    "fabric": [
        "a white shirt", "the carpet", "jeans", "a silk blouse", "the sofa", "a wool jumper", "my trainers",
        "the mattress", "a tablecloth", "suede boots", "the car seat", "a cotton tee",
    ],
    "os": [
        "Linux", "Windows", "macOS", "Ubuntu", "the terminal", "PowerShell", "Android", "my Chromebook",
        "Debian", "the command line",
    ],
    "lang": [
        "Python", "JavaScript", "Java", "SQL", "Excel", "pandas", "Rust", "Go", "bash", "C#", "R", "TypeScript",
    ],
    "weekday": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "tomorrow",
                "next week", "tonight", "this weekend", "Friday morning"],
    "chore": [
        "water the plants", "take the bins out", "call my mum", "pay the rent", "feed the cat", "book the dentist",
        "renew my passport", "reply to Sarah", "buy milk", "charge my phone", "lock the back door",
        "take my vitamins", "send the invoice", "pick up the dry cleaning", "back up my photos", "defrost the chicken",
    ],
}


def split_list(values: list[str]) -> tuple[list[str], list[str]]:
    """``values`` as (train, test): a fixed shuffle, one third to test."""
    shuffled = list(values)
    random.Random(f"slots:{len(values)}:{values[0]}").shuffle(shuffled)
    cut = len(shuffled) // 3
    return shuffled[cut:], shuffled[:cut]


SLOTS: dict[str, dict[str, list[str]]] = {}
for _key, _values in _RAW.items():
    _train, _test = split_list(_values)
    # The training part is split once more the same way, for validation inside the training families.
    _dev_train, _dev_test = split_list(_train)
    SLOTS[_key] = {"train": _train, "test": _test, "dev_train": _dev_train, "dev_test": _dev_test}


def slot(rng: random.Random, key: str, split: str) -> str:
    """One value of slot ``key`` from the ``split`` part ("train", "test", or "dev_train"/"dev_test" within train)."""
    return rng.choice(SLOTS[key][split])
