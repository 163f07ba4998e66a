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
        "my house number", "our flat", "my zip code",
        "I live at 14 Elm Street, apartment 2", "our house is at 22 Park Road", "my flat is on the third floor",
        "we rent a two-bed in the north of the city", "my address is 9 Rose Lane, Leeds LS6 2AB",
        "i just moved into a new apartment downtown",
    ),
    "contact": (
        "my phone number", "my email address", "my contact details", "my mobile", "my whatsapp number",
        "call me on 07700 900123", "my email is jane.doe@example.com", "my mobile number is 555 0199",
        "text me at 0412 345 678",
    ),
    "identity_number": (
        "my ID number", "my social security number", "my national insurance number", "my tax reference",
        "my passport number", "my government identification number", "my personal number",
        "my SSN is 123-45-6789", "my NHS number is 943 476 5919", "my driver's licence number",
        "my national ID card number is X1234567",
    ),
    "credentials": (
        "my password", "my login details", "my PIN", "my security code",
        "my passcode", "my username and password", "the answer to my security question",
        "my wifi password is sunflower99", "the door code is 4821", "my bank PIN is 0917",
        "login: jsmith / Winter2024!", "the alarm code at home is 1-2-3-4", "my API key is sk-123abc",
    ),
    "bank_account": (
        "my bank account", "my bank details", "my credit card number", "my savings", "my offshore account",
        "my account number and sort code", "my IBAN", "my investments",
        "I have 40,000 in a savings account", "my card number is 4111 1111 1111 1111",
        "we have a joint account at Barclays", "I have shares worth about 20k",
    ),
    "income": (
        "how much I earn", "my salary", "my income", "my pay", "my pension", "my wages", "my bonus",
        "what I make", "I earn 60,000 a year", "my salary is 5,000 a month", "I make 25 dollars an hour",
        "I get paid 2,300 after tax", "my pension is 1,800 a month",
    ),
    "debt": (
        "my debts", "the money I owe", "my loan", "our mortgage", "my overdraft", "how much we owe",
        "my credit card debt", "my arrears", "my bankruptcy",
        "I owe 20,000 on my credit card", "we are behind on the mortgage payments", "I borrowed money from a lender",
        "I took out a payday loan", "the bank is chasing me for 12,000", "I still owe my brother money",
    ),
    "physical_health": (
        "my illness", "my diagnosis", "my medical condition", "my health problem", "my allergy",
        "my blood test results", "my surgery", "my treatment", "my disability", "my test results",
        "I have diabetes", "I was diagnosed with cancer", "I had surgery last year", "I have a chronic disease",
        "I'm allergic to nuts", "I have epilepsy", "I had a heart attack", "I'm going through chemo",
        "I tested positive for an infection", "I have a bad back and arthritis",
    ),
    # "my status" is said of an HIV diagnosis and of immigration papers alike: both kinds hold it.
    "sexual_health": (
        "my status", "my HIV status", "my sexual health", "my STI", "my STD test", "my herpes", "my PrEP",
        "I'm HIV positive", "I have herpes", "I tested positive for chlamydia", "I'm on PrEP",
        "I'm living with HIV and take antiretrovirals", "I caught an STD last year",
    ),
    "appearance": (
        "my looks", "my face", "my body", "my weight", "my cosmetic surgery", "the work I had done",
        "I had a facelift", "I got a nose job", "I had liposuction", "I get botox every few months",
        "I had my breasts done", "I'm self-conscious about my weight", "I had a hair transplant",
    ),
    "medication": (
        "my medication", "my prescription", "the pills I take", "my meds", "my dosage",
        "I take fluoxetine 20mg every morning", "I'm on insulin", "I use an inhaler twice a day",
        "I take blood pressure tablets", "I'm on the pill", "my doctor put me on antibiotics",
    ),
    "mental_health": (
        "my mental health", "my depression", "my anxiety", "my therapy", "my breakdown", "my psychiatric history",
        "I have PTSD", "I see a therapist", "I was diagnosed with bipolar disorder", "I have panic attacks",
        "I've been really depressed lately", "I have OCD", "I was in a psychiatric ward",
    ),
    "self_harm": (
        "my suicidal thoughts", "the dark thoughts I had", "my self-harm", "wanting to end it",
        "I wanted to die", "I've thought about ending my life", "I used to cut myself", "I tried to kill myself",
        "I have thought about suicide", "sometimes I feel there's no point in going on",
    ),
    "eating_disorder": (
        "my eating disorder", "my eating problems", "my relationship with food",
        "I have anorexia", "I'm recovering from bulimia", "I binge and purge",
        "I count every calorie and skip meals", "I make myself throw up after eating",
    ),
    "addiction": (
        "my addiction", "my recovery", "my drinking", "my drug use", "my habit", "my sobriety", "my relapse",
        "I quit drinking two years ago", "I attend Narcotics Anonymous", "I'm addicted to painkillers",
        "I smoke a pack a day", "I smoke weed", "my gambling problem", "I used to be on heroin",
        "I drink every night to cope", "I'm in rehab",
    ),
    "sexuality": (
        "my sexuality", "my sexual orientation", "that I'm gay", "my coming out", "my gender identity",
        "I'm bisexual", "I'm a lesbian", "I'm transgender", "I haven't come out to my family",
        "I'm attracted to men", "I'm queer", "I'm non-binary",
    ),
    "dating": (
        "the person I'm seeing", "my boyfriend", "my girlfriend", "my love life", "my crush", "my relationship",
        "my partner", "my date", "the girl I'm talking to",
        "I'm dating someone", "I have a secret boyfriend", "I've been seeing someone new",
        "I met someone on a dating app", "my girlfriend and I just got engaged",
    ),
    "affair": (
        "my affair", "the cheating", "my infidelity", "my other woman", "the person I'm having an affair with",
        "I cheated on my husband", "I'm having an affair", "she is sleeping with her boss",
        "my husband is cheating on me", "I'm seeing someone behind my wife's back",
    ),
    "family_conflict": (
        "my family problems", "the fight with my parents", "my divorce", "my brother's trouble", "my custody battle",
        "the family row", "my father drinks and shouts", "we don't speak anymore",
        "my sister and I fell out", "I'm getting divorced",
    ),
    "pregnancy": (
        "my pregnancy", "the baby", "my abortion", "the adoption", "my fertility treatment", "my miscarriage",
        "I'm pregnant", "I had a miscarriage", "I gave my baby up for adoption", "we're doing IVF",
        "I had an abortion last year", "we've been trying for a baby",
    ),
    "legal": (
        "my criminal record", "my legal trouble", "the court case", "the arrest", "the police thing",
        "my conviction", "the lawsuit", "prison", "the investigation",
        "I was arrested last year", "I have a restraining order", "I'm being sued", "I was caught shoplifting",
        "I got a DUI", "I was fined for tax evasion",
    ),
    "immigration": (
        "my status", "my immigration status", "my visa", "my papers", "my passport", "my asylum claim",
        "my residency", "my green card", "I'm undocumented", "my work permit expired", "I applied for asylum",
        "my residence permit", "I overstayed my visa", "I'm here on a student visa",
    ),
    "work": (
        "my job", "where I work", "my employer", "my boss", "my workplace", "my colleagues", "my company",
        "my career", "my role", "I work as an accountant", "I'm a software engineer at a bank",
        "I'm a teacher at a primary school", "I work in a call centre", "my manager is awful",
        "I run my own small business",
    ),
    "work_trouble": (
        "the disciplinary", "the warning I got at work", "the complaint against me at work", "my performance review",
        "the mistake I made at work", "the investigation at work",
        "I got a written warning at work", "I'm on a performance improvement plan", "I was suspended from work",
        "HR is investigating me", "I made a serious mistake at work and got written up",
    ),
    "business_plans": (
        "my business plans", "the sale of my business", "my plans for the company", "the deal I'm working on",
        "my share of the firm", "I'm selling my share of the business", "we plan to merge with a competitor",
        "I'm thinking of opening a bakery", "I want to buy out my business partner", "we're about to close the shop",
    ),
    "job_search": (
        "my job search", "my job hunt", "the interviews", "my job applications", "me leaving my job",
        "my plan to quit", "I'm interviewing with another company", "I'm thinking of quitting my job",
        "I'm applying for new jobs", "I got an offer from another firm", "I'm looking for a new job quietly",
        "I'm about to hand in my notice", "I got fired", "I was laid off",
    ),
    "religion_politics": (
        "my religion", "my faith", "my beliefs", "my political views", "my church", "my doubts about god",
        "I'm Muslim", "I pray five times a day", "I'm an atheist", "I vote for the Green party",
        "I'm a practising Catholic", "I've lost my faith", "I'm a member of a political party",
    ),
    "will_inheritance": (
        "my will", "my inheritance", "my estate", "who gets the house", "my funeral wishes", "what I'm leaving",
        "I've updated my will", "I'm leaving my house to my daughter", "I'm the executor of my mother's estate",
        "I've cut my son out of my will", "I inherited money from my aunt",
    ),
    "scam": (
        "the scam", "the fraud", "the money I lost", "being conned",
        "I was scammed out of 5,000", "I fell for a romance scam",
        "I put money into a scheme that turned out to be a fraud",
        "someone stole my identity", "I paid a fake company online", "I was tricked into giving my bank details",
    ),
    "online_identity": (
        "my username", "my online handle", "my pen name", "my pseudonym", "my secret account", "my gamer tag",
        "my alias", "my social media", "my anonymous account",
        "my instagram is @travel_with_ana", "I write under the pen name J. Smith", "my reddit username is blue_fox",
        "I have a secret blog", "my discord is nightowl#1234",
    ),
    "vehicle": (
        "my car", "my number plate", "my registration number", "my licence plate", "my motorbike",
        "I drive a blue Ford Focus", "my licence plate is AB12 CDE", "my car reg is KX19 ZTL",
        "I just bought a second-hand van",
    ),
    "pets": (
        "my pet", "my dog", "my cat", "my pet's name", "I have a rabbit called Pip", "our dog is a labrador",
        "my cat is sick", "we have two goldfish",
    ),
    "children_school": (
        "my kids", "my children", "where my kids go to school", "my son", "my daughter", "my kid's school",
        "my son goes to Hill Primary", "my daughter is six", "my twins", "my son is being bullied at school",
        "my son is autistic",
    ),
    "age_birthday": (
        "my age", "my birthday", "my date of birth", "how old I am", "I'm 34", "I was born on 3 May 1987",
        "I turn fifty next month",
    ),
    "abuse_violence": (
        "the abuse", "the violence", "what happened to me", "the assault", "my abuser", "the attack",
        "my ex hit me", "I was assaulted", "my stalker", "he threatened me", "I was abused as a child",
        "I got mugged", "my partner is violent",
    ),
    "origin": (
        "where I'm from", "my background", "my ethnicity", "my caste", "my nationality", "my heritage",
        "I grew up in Lagos", "my ethnic background", "I'm of Romani heritage", "my parents are refugees",
        "I was born abroad",
    ),
    "education": (
        "my grades", "my degree", "my exam results", "my university", "failing my course", "my studies",
        "I failed my exams", "I dropped out of college", "I'm studying law", "I got into a master's programme",
    ),
    "travel_plans": (
        "my travel plans", "my trip", "where I'm going", "my flight", "my holiday",
        "I'm flying to Madrid next week", "we're going away for two weeks in August",
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
