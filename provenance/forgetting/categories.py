"""Kinds of personal information, each described by a few phrases, so that a request naming a kind ("my illness",
"where I live", "the numbers on our loan") reaches a statement of that kind in other words ("Prostate cancer, in
remission", "Our house address is ...", "Farm debt is about $1.4M").

Both sides are placed among the kinds by the embeddings they already have: a statement's stored vector, the
target's vector. Nothing here is tuned to a user or a phrasing: the phrases are what people usually call each
kind of information and how they usually state it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

from dellm_site.ai.embedding import get_embedder

# name -> phrases: how a request names it, then how a statement says it.
CATEGORIES: dict[str, tuple[str, ...]] = {
    "home": (
        "my home address", "where I live", "my street address", "my postcode", "the town I live in",
        "I live at 14 Elm Street, apartment 2", "our house is at 22 Park Road", "my flat is on the third floor",
    ),
    "contact": (
        "my phone number", "my email address", "my contact details", "call me on 07700 900123",
        "my email is jane.doe@example.com", "my mobile number is 555 0199",
    ),
    "identity_number": (
        "my ID number", "my social security number", "my national insurance number", "my tax reference",
        "my passport number", "my government identification number", "my SSN is 123-45-6789",
        "my NHS number is 943 476 5919", "my driver's licence number",
    ),
    "credentials": (
        "my password", "my login details", "my PIN", "the credentials I gave you", "my security code",
        "my wifi password is sunflower99", "the door code is 4821", "my username and password",
        "the answer to my security question",
    ),
    "bank_account": (
        "my bank account", "my bank details", "my credit card number", "my savings", "my offshore account",
        "my account number and sort code", "I have 40,000 in a savings account", "my card number is 4111 1111",
    ),
    "income": (
        "how much I earn", "my salary", "my income", "my pay", "my pension", "I earn 60,000 a year",
        "my salary is 5,000 a month", "I make 25 dollars an hour",
    ),
    "debt": (
        "my debts", "the money I owe", "my loan", "our mortgage", "my overdraft", "how much we owe",
        "I owe 20,000 on my credit card", "we are behind on the mortgage payments", "I borrowed money from a lender",
    ),
    "physical_health": (
        "my illness", "my diagnosis", "my medical condition", "my health problem", "my allergy",
        "my blood test results", "I have diabetes", "I was diagnosed with cancer", "I had surgery last year",
        "I have a chronic disease",
    ),
    "medication": (
        "my medication", "my prescription", "the pills I take", "I take fluoxetine 20mg every morning",
        "I'm on insulin", "I use an inhaler twice a day",
    ),
    "mental_health": (
        "my mental health", "my depression", "my anxiety", "my therapy", "I have PTSD", "I see a therapist",
        "I was diagnosed with bipolar disorder", "I have panic attacks",
    ),
    "self_harm": (
        "my suicidal thoughts", "the dark thoughts I had", "I wanted to die",
        "I've thought about ending my life", "I used to cut myself", "I tried to kill myself",
    ),
    "eating_disorder": (
        "my eating disorder", "I have anorexia", "I'm recovering from bulimia", "I binge and purge",
        "I count every calorie and skip meals",
    ),
    "addiction": (
        "my addiction", "my recovery", "my drinking", "my drug use", "I've been sober for five years",
        "I go to AA meetings", "I'm addicted to painkillers", "I smoke a pack a day", "I smoke weed",
        "my gambling problem",
    ),
    "sexuality": (
        "my sexuality", "my sexual orientation", "that I'm gay", "I'm bisexual", "I'm a lesbian",
        "I'm transgender", "I haven't come out to my family",
    ),
    "dating": (
        "the person I'm seeing", "my boyfriend", "my girlfriend", "my love life", "my crush", "my relationship",
        "I'm dating someone", "I have a secret boyfriend", "I've been seeing someone new",
    ),
    "affair": (
        "my affair", "the cheating", "my infidelity", "I cheated on my husband", "I'm having an affair",
        "she is sleeping with her boss",
    ),
    "family_conflict": (
        "my family problems", "the fight with my parents", "my divorce", "my brother's trouble",
        "my father drinks and shouts", "my parents don't know", "we don't speak anymore",
    ),
    "pregnancy": (
        "my pregnancy", "the baby", "my abortion", "the adoption", "I'm pregnant", "I had a miscarriage",
        "I gave my baby up for adoption", "we're doing IVF",
    ),
    "legal": (
        "my criminal record", "my legal trouble", "the court case", "the arrest", "I was arrested last year",
        "I have a restraining order", "I'm being sued", "I was caught shoplifting", "I got a DUI", "is that legal?",
    ),
    "immigration": (
        "my immigration status", "my visa", "my papers", "my documents", "my passport",
        "I'm undocumented", "my work permit expired", "I applied for asylum", "my residence permit",
    ),
    "work": (
        "my job", "where I work", "my employer", "my boss", "my workplace", "I work as a nurse at the hospital",
        "I'm a software engineer at a bank", "I'm a teacher at a primary school",
    ),
    "job_search": (
        "my job search", "my job hunt", "the interviews", "I'm interviewing with another company",
        "I'm thinking of quitting my job", "I'm applying for new jobs", "I got an offer from another firm",
    ),
    "religion_politics": (
        "my religion", "my faith", "my beliefs", "my political views", "I'm Muslim", "I pray five times a day",
        "I'm an atheist", "I vote for the Green party",
    ),
    "will_inheritance": (
        "my will", "my inheritance", "my estate", "who gets the house", "I'm changing my will",
        "I'm leaving my house to my daughter", "my father's estate was settled",
    ),
    "scam": (
        "the scam", "the fraud", "the money I lost", "I was scammed out of 5,000", "I fell for a romance scam",
        "I lost my savings to a fake investment",
    ),
    "online_identity": (
        "my username", "my online handle", "my pen name", "my pseudonym", "my secret account", "my gamer tag",
        "my instagram is @travel_with_ana", "I write under the pen name J. Smith",
    ),
    "vehicle": (
        "my car", "my number plate", "my registration number", "I drive a blue Ford Focus",
        "my licence plate is AB12 CDE",
    ),
    "pets": (
        "my pet", "my dog", "my cat", "I have a rabbit called Pip", "our dog is a labrador",
    ),
    "children_school": (
        "my kids", "my children", "where my kids go to school", "my son goes to Hill Primary",
        "my daughter is six", "my twins",
    ),
    "age_birthday": (
        "my age", "my birthday", "my date of birth", "I'm 34", "I was born on 3 May 1987",
    ),
    "abuse_violence": (
        "the abuse", "the violence", "what happened to me", "my ex hit me", "I was assaulted",
        "my stalker", "he threatened me",
    ),
    "origin": (
        "where I'm from", "my background", "my ethnicity", "my caste", "I grew up in Lagos",
        "my ethnic background", "I'm of Romani heritage",
    ),
}

# How sharply a text is placed among the kinds (the temperature of a softmax over its standardised affinities),
# and the affinity to its nearest kind below which a target names no kind at all ("Tom", "that thing").
TEMPERATURE = 0.25
NAMES_A_KIND = 0.3


@dataclass(frozen=True)
class Kinds:
    names: list[str]
    phrases: np.ndarray  # (phrases, dimensions), unit rows
    members: list[np.ndarray]  # per kind, the rows of its phrases
    mean: np.ndarray  # per kind, the mean and spread of the phrases' own affinities: a kind whose phrases are
    spread: np.ndarray  # close to everything ("my job") must not pull every text towards it
    centroids: np.ndarray  # (kinds, dimensions), unit rows

    def affinity(self, vectors: np.ndarray) -> np.ndarray:
        """(texts, kinds): each text's cosine to the nearest phrase of each kind."""
        similar = np.asarray(vectors, dtype=np.float32) @ self.phrases.T
        return np.stack([similar[:, rows].max(axis=1) for rows in self.members], axis=1)

    def profile(self, affinity: np.ndarray) -> np.ndarray:
        """(texts, kinds): how much each text is about each kind, summing to one."""
        z = (affinity - self.mean) / self.spread / TEMPERATURE
        z = np.exp(z - z.max(axis=1, keepdims=True))
        return z / z.sum(axis=1, keepdims=True)


_lock = threading.Lock()
_cache: dict[str, Kinds] = {}


def kinds() -> Kinds:
    """The kinds, their phrases embedded once per process and embedder."""
    embedder = get_embedder()
    with _lock:
        found = _cache.get(embedder.name)
        if found is None:
            names = list(CATEGORIES)
            texts = [phrase for phrases in CATEGORIES.values() for phrase in phrases]
            phrases = np.asarray(embedder.embed(texts), dtype=np.float32)
            members, start = [], 0
            for name in names:
                members.append(np.arange(start, start + len(CATEGORIES[name])))
                start += len(CATEGORIES[name])
            centroids = np.stack([phrases[rows].mean(axis=0) for rows in members])
            centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
            found = Kinds(names=names, phrases=phrases, members=members, mean=np.zeros(len(names)),
                          spread=np.ones(len(names)), centroids=centroids)
            own = found.affinity(phrases)
            found = Kinds(names=names, phrases=phrases, members=members, mean=own.mean(axis=0),
                          spread=own.std(axis=0) + 1e-6, centroids=centroids)
            _cache[embedder.name] = found
        return found
