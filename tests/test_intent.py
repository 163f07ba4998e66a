"""The deletion-request detector: fresh phrasings, targets, the rules-only fallback, saved weights, reproducibility."""

import io
import json

import numpy as np
import pytest
from django.core.management import call_command

from dellm_site.ai.embedding import get_embedder
from provenance.forgetting import intent
from provenance.forgetting.intent_languages import gloss
from provenance.forgetting.intent_signals import SIGNAL_NAMES, keeps_only, typos_spelt_out
from provenance.forgetting.intent_targets import (
    extract_targets,
    request_spared,
    request_unaddressed,
    request_without_other_tasks,
)

# Written for this test, in phrasings the corpus templates do not use.
REQUESTS = [
    "Honestly I'd rather you had no memory of my divorce at all.",
    "Please erase any knowledge you have of my old job at the bakery.",
    "That was private, so forget my brother's name.",
    "Kindly stop remembering where my kids go to school.",
    "ok scrap what I said about my overdraft, I don't want that kept",
    # Verbs of undoing a save, phrasal verbs with the object inside, spellings by sound, a wish with an adverb.
    "could you unsave the bit about my overdraft?",
    "the name of my old landlord, rub it out please",
    "pls erace where my sister works",
    "get my blood test results out ur memory",
    "my cousin's new address, no need for you to be keeping hold of it",
    "I'd feel calmer if you didn't have that, the stuff about my debts",
    "i really don't want my ex's surname in your memory",
    # A statement's word order for a question, "take it away", "no longer possess".
    "The pension I get from Poland, you can not keep it?",
    "My old flat in Gdansk, take it away please.",
    "Is possible that you no longer possess my bank number?",
    # "suppress" as French, Spanish and Italian speakers say delete; "turf" as slang.
    "What I told you about the clinic in Lyon, can you suppress it?",
    "turf everything about my overdraft pls",
    # "neither ... nor ... should be remembered", "get shot of it", "shouldn't be on record".
    "Neither my brother's debts nor his court date should be remembered.",
    "The row at my cousin's wedding shouldn't be on record. Get shot of it.",
    # A misspelt verb read as meant, two letters lost inside a long one too ("rember").
    "dont rember my landlords name pls",
    "the door code for the garage delet it",
    "my gym locker combo remov pls, typed it by accident",
]
ORDINARY = [
    "How do I delete a Docker volume?",
    "I keep forgetting to take my vitamins in the morning.",
    "Remember that I prefer tea to coffee.",
    "What do you remember about my job?",
    "Eternal Sunshine is such a sad film about erasing memories.",
    "What gets a grass stain out of white sneakers?",
    "No need to keep the receipts, I scanned them all.",
    "We went caving in the Brecon Beacons last weekend.",
    "Can you rub out the pencil marks on this page?",
    "Take it away from the heat once it starts to bubble.",
    "How do I suppress a cough at night?",
    "They turfed him out of the pub at closing time.",
    "Neither the bus nor the train should be late today, I hope.",
    "Get shot of these old trainers, they're falling apart. Which brand lasts longer?",
    "I no longer possess the original receipt, can I still get a refund?",
    "i keep forgeting my pin at the cash machine",
    "how do i delet old screenshots off my phone",
    "rember to buy milk on the way home",
    "I have 300 duplicate photos on my laptop, delete those.",
]


@pytest.fixture(scope="module")
def vectors():
    """The detector's features of every text (every layer of the embedder), computed in one batch."""
    texts = REQUESTS + ORDINARY
    return dict(zip(texts, intent.intent_features(texts), strict=True))


@pytest.mark.parametrize("text", REQUESTS)
def test_fresh_requests_are_recognised(text, vectors):
    found = intent.intent_detect(text, features=vectors[text])
    assert found.outcome in ("forget", "ask"), found
    assert found.targets


@pytest.mark.parametrize("text", ORDINARY)
def test_fresh_ordinary_messages_are_not_taken_for_requests(text, vectors):
    found = intent.intent_detect(text, features=vectors[text])
    assert found.outcome != "forget", found
    if found.outcome == "none":
        assert found.targets == []


def test_a_misspelt_key_word_is_read_as_the_word_by_the_layers_too():
    # The rules read "delet" as "delete"; the embedding of "delet" is of some other word, so the message is judged
    # as it was meant.
    assert typos_spelt_out("his debts delet both, rember nothing") == "his debts delete both, remember nothing"
    assert typos_spelt_out("u dont need it, thats fine") == "u dont need it, thats fine"  # shorthand is kept
    text = "the door code for the garage delet it"
    assert intent.intent_detect(text) == intent.intent_detect(typos_spelt_out(text))


def test_the_features_are_optional_and_give_the_same_answer(vectors):
    text = REQUESTS[1]
    assert intent.intent_detect(text) == intent.intent_detect(text, features=vectors[text])


@pytest.mark.parametrize(
    "text, targets",
    [
        ("Please delete my address and my salary", ["my address", "my salary"]),
        # After the verb, the user's word on how it came to be said names nothing: the thing is before the verb.
        ("the alarm code remove please, typed it by accident", ["the alarm code"]),
        ("forget where I live, how much I earn and my ex, Tom", ["where I live", "how much I earn", "my ex, Tom"]),
        ("Forget that I live in Lisbon and that I work as a nurse", ["I live in Lisbon", "I work as a nurse"]),
        # "or" in a request names both things, as "and" does.
        ("I'd rather you didn't know about my debts or my diagnosis", ["my debts", "my diagnosis"]),
        ("forget whether I'm moving or not", ["whether I'm moving or not"]),
        ("erase the op i had in istanbul and uh my health service number as well",
         ["the op i had in istanbul", "my health service number"]),
        # A later sentence asking again, or adding to the request, names a thing of its own.
        ("Forget the baby news for now. And unlearn the lawsuit with Greg while you're at it, we settled.",
         ["the baby news", "the lawsuit with Greg"]),
        ("You can forget the accident. Same goes for the card I owe Mashreq on. The personal loan stays.",
         ["the accident", "the card I owe Mashreq on"]),
        ("Please forget my salary. Oh, and my PIN as well.", ["my salary", "my PIN"]),
        ("Forget my address. I moved and I forget things easily.", ["my address"]),
        # "one" standing for what the request names elsewhere is spelt out; a "one" that counts is left alone.
        ("Please forget both loans, the black credit and the Vietcombank one.",
         ["loans", "the black credit", "the Vietcombank loan"]),
        ("Could you let go of my NI number, and the NHS one too?", ["my NI number", "the NHS number"]),
        ("forget the one time I got drunk", ["the one time I got drunk"]),
        ("The tax one - forget it. The hospital bills stay for now.", ["The tax one"]),
        # After the verb, a clause about someone is no object; nor is what could follow a thing named.
        ("my salary, please delete, my boss might see", ["my salary"]),
        ("The money from the card... if my husband knew I'd be done. Forget about it, please.",
         ["The money from the card"]),
        ("delete the ID from back home in egypt, not the emirates one", ["the ID from back home in egypt"]),
        # Things named first, then counted as going.
        ("The fertility treatment stuff and the thing about me being on thin ice at work - both can go.",
         ["The fertility treatment stuff", "me being on thin ice at work"]),
        ("my PIN and my passport number. both gone please", ["my PIN", "my passport number"]),
        ("Delete my address. Please make sure it's gone.", ["my address"]),
        ("pretend I never told you I'm lactose intolerant, so I have to be careful", [
            "I'm lactose intolerant, so I have to be careful"]),
        ("my salary? forget it", ["my salary"]),
        ("Take my phone number and my email out of your memory", ["my phone number", "my email"]),
        ("salt and pepper: delete it", ["salt and pepper"]),
        # A quotation keeps its marks when it opens the target; a target that is one quotation loses them.
        ('Forget that "Blue Harbour" was my first novel.', ['"Blue Harbour" was my first novel']),
        ('Please forget "my pen name".', ["my pen name"]),
        ("forget what I said about 'Mum's house'", ["Mum's house"]),
        # The topic first, then the request about it in a pronoun.
        ("about my uncle's gambling, I don't want that recorded anywhere", ["my uncle's gambling"]),
        ("Regarding the mortgage arrears: I'd rather you didn't keep that.", ["the mortgage arrears"]),
        # "it" as the object, then a remark or a place: the thing named comes before it.
        ("the overdraft with my brother, wipe it mate, he'd be mortified", ["the overdraft with my brother"]),
        ("my dentist appointments - delete it from whatever you keep on me", ["my dentist appointments"]),
        ("Forget that it was my idea to sell the flat.", ["it was my idea to sell the flat"]),
        # Where a product keeps things, named the way people name it.
        ("purge my blood type from context and long-term storage", ["my blood type"]),
        ("Take the custody hearing off my profile, please.", ["the custody hearing"]),
        ("I'd like my travel plans to be excluded from future answers.", ["my travel plans"]),
        ("strike my id number from your notes", ["my ID number"]),
        ("Get rid of the gym membership off my profile", ["the gym membership"]),
        # An aside saying what is not meant is no second target.
        ("scrap the house stuff (not the mortgage, the other bit) please", ["the house stuff"]),
        # Before the request, the clause that names something, not the feeling or the remark around it.
        ("I keep replaying what I admitted about the fight at the pub. I'm worried. Please get that out of your "
         "memory.", ["the fight at the pub"]),
        ("No idea why I said it, about maybe moving back in with my parents. Can that go?",
         ["maybe moving back in with my parents"]),
        ("Bit silly really, but the loan from my cousin, would you be able to stop holding that on file?",
         ["the loan from my cousin"]),
        ("This is awkward but about my tattoo removal, I'd rather that wasn't stored anywhere.",
         ["my tattoo removal"]),
        ("who im dating rn.. forget it pls", ["who i'm dating"]),
        ("my old boss, Priya. forget her", ["my old boss, Priya"]),
        # A rule for the future instead of a command; "going forward" and "new rule:" name nothing.
        ("going forward, my arrangement with the landlord is off the table", ["my arrangement with the landlord"]),
        ("new rule: my stay in the clinic is something you don't know anymore", ["my stay in the clinic"]),
        ("from now on act as if the egg freezing idea was never mentioned", ["the egg freezing idea"]),
        ("from now on you don't know about the jobs I do off the books", ["the jobs I do off the books"]),
        # What is said not to be meant, after a comma; "the other one" names nothing.
        ("remove the overdraft thing, not the loan one, the other one", ["the overdraft thing"]),
        # What the user says they gave away, in a clause before the request.
        ("Perhaps it was foolish to give out where I live. Kindly remove it.", ["where I live"]),
        ("the card losses from last year. let go of that one, don't keep it", ["the card losses from last year"]),
        ("takeshi's trouble with the people chasing him for money — he'd hate me for telling. please forget that one",
         ["takeshi's trouble with the people chasing him for money"]),
        ("the weekend thing w shrooms, can u not keep it", ["the weekend thing w shrooms"]),
        # When or where it was said is not what was said; a habit on a weekday is.
        ("the card details I sent when we were booking the ferry, delete them", ["the card details I sent"]),
        ("what I told you on Friday night about my landlord, forget it", ["my landlord"]),
        ("the bit right at the start of last week's chat about my court date — don't hang onto that",
         ["my court date"]),
        ("forget where Tom goes on Tuesday evenings", ["where Tom goes on Tuesday evenings"]),
        # A wish about the assistant's memory names what it is about; a pronoun kept hold of, what came before.
        ("i really don't want my ex's surname in your memory", ["my ex's surname"]),
        ("my cousin's new address, no need for you to be keeping hold of it", ["my cousin's new address"]),
        ("the name of my old landlord, rub it out please", ["the name of my old landlord"]),
        # "no need to remember it" points back too; how the thing stands now ("paid", "all sorted") is no part of it.
        ("the overdraft with my credit union is cleared, so there's no need to remember it",
         ["the overdraft with my credit union is cleared"]),
        ("Also my parking fine from March -- paid off last week, so no need to keep it.",
         ["my parking fine from March"]),
        ("no reason to store my old work email any more", ["my old work email"]),
        # A greeting, someone's advice and "these two" point past themselves; "given you" says what was told.
        ("Good morning. Last week I have given you my tax number. This I prefer you do not keep.",
         ["my tax number"]),
        ("My blood results. My daughter says I must not share such things. Can you forget it?", ["My blood results"]),
        ("The code of my garage and the name of my bank, I should not have typed. Please wipe these two.",
         ["The code of my garage", "the name of my bank"]),
        ("my court case, don't put in your notes, throw it away", ["my court case"]),
        ("Wipe the wifi password from your memory. Consider it leaked and don't keep it.", ["the wifi password"]),
        # Politeness before a pointer, a remark run on after "the X thing", what someone said, "written down".
        ("My pension. Would you be kind enough to take it out of your memory?", ["My pension"]),
        ("delete the gym thing pls thats so embarrassing", ["the gym thing"]),
        ("forget the loan from Dev, my accountant said to keep it quiet", ["the loan from Dev"]),
        ("i really don't want my work schedule written down anywhere", ["my work schedule"]),
        # Things named by "neither ... nor", a pointer that should vanish, "make sure X isn't stored", "X is
        # something I want removed", a pointer with a kept thing after "though".
        ("Neither my salary nor my address should stay in your memory.", ["my salary", "my address"]),
        ("the row with my landlord, could that just vanish from your memory?", ["the row with my landlord"]),
        ("make sure my sister's new number isn't stored anywhere", ["my sister's new number"]),
        ("My overdraft is something I want removed.", ["My overdraft"]),
        ("My dad's debts and his drinking: delete both, though it's fine to know he lives in Leeds.",
         ["My dad's debts", "his drinking"]),
        # A remark about the thing between it and the request is no part of it; a summing-up or a phrase about
        # something in the thing is.
        ("the pin for my gym locker. nobody else knows that, so wipe it please", ["the pin for my gym locker"]),
        ("my uncle's parole hearing.. only mum knows about it, can you delete it", ["my uncle's parole hearing"]),
        ("the pokies, what I dropped on them. can you get rid of that?", ["the pokies and what I dropped on them"]),
        # "personal" before a noun names a kind of thing, no reason.
        ("The personal ID number I typed yesterday. Erase it.", ["The personal ID number I typed yesterday"]),
        # Several things: after "and", a name, an abbreviation or someone's thing starts one of its own; "n",
        # "and also" and another language's "and" join them too; a subject pair ("Linnea and me") stays whole.
        ("please forget my TFN and Medicare number", ["my TFN", "Medicare number"]),
        ("wipe the bipolar thing n the caution from the festival",
         ["the bipolar thing", "the caution from the festival"]),
        ("forget my hepatitis and about Hung stealing from the shop", ["my hepatitis", "Hung stealing from the shop"]),
        ("Please get rid of the biopsy, Mum's Parkinson's and the IVF", ["the biopsy", "Mum's Parkinson's", "the IVF"]),
        ("delete the cooked books at work, and also what I owe the tax office",
         ["the cooked books at work", "what I owe the tax office"]),
        ("please delete mon SIN et mon numéro RAMQ", ["mon SIN", "mon numéro RAMQ"]),
        ("forget that Linnea and me are splitting up", ["Linnea and me are splitting up"]),
        # Words that only count what was named before them send the reading back to it.
        ("Joost's job loss and my sister's rehab: neither needs to stay in your memory, please delete them.",
         ["Joost's job loss", "my sister's rehab"]),
        ("About the separation, and the kids' school — please wipe all that.", ["the separation", "the kids' school"]),
        # What the assistant made of a thing names the thing.
        ("pls delete the note u made about me looking for another job", ["looking for another job"]),
        ("remove the entry about my divorce", ["my divorce"]),
        ("Whatever you concluded about me hiding money from Ravi, scrub that", ["me hiding money from Ravi"]),
        ("The profile entry that has me on insulin, can you take it out?", ["insulin"]),
        # Lists: bullets or numbers on their own lines, numbers in one line, a heading line and one thing a line,
        # a short comma list; an item's dash says more about it; a sign-off and a "keep" item are no targets.
        ("Could you forget these please:\n- my flat in Leith\n- my NHS number\n* the loan - the one from Gran\n"
         "- keep my car reg\nthanks!", ["my flat in Leith", "my NHS number", "the loan, the one from Gran"]),
        ("erase 1) my sciatica 2) what I pay in rent 3) Oskar's court case. Thanks a lot.",
         ["my sciatica", "what I pay in rent", "Oskar's court case"]),
        ("Remove the following:\nmy salary\nthe IVA debt\n\nRegards, Tim", ["my salary", "the IVA debt"]),
        ("forget: BSN, DigiD", ["BSN", "DigiD"]),
        ("delete what I said about Ilse, Ruud and the move to Utrecht", ["Ilse", "Ruud", "the move to Utrecht"]),
        ("Wipe three things: my weight, my blood pressure, the clinic visit",
         ["my weight", "my blood pressure", "the clinic visit"]),
        # An apposition stays one thing; "2.5" is no list number.
        ("forget my landlord, Mr Okafor", ["my landlord, Mr Okafor"]),
        ("forget the 2.5 lakh I owe Rohit", ["the 2.5 lakh I owe Rohit"]),
        # Interjections before the target and remarks about someone after it are no part of it.
        ("omg the layoffs thing, wipe it pls", ["the layoffs thing"]),
        ("ugh shouldn't have mentioned my cousin's arrest, forget it", ["my cousin's arrest"]),
        ("forget Maria's surgery please, she'd hate anyone knowing", ["Maria's surgery"]),
        ("please delete my brother's debts and he's so ashamed of them", ["my brother's debts"]),
        # A target that sums up, then spelt out: after its sentence, between dashes, or by a second request; a
        # reason after it is no part of it; the summing-up target's name goes with each thing.
        ("Could you drop both money things? The overdraft at Barclays and what I lent Petra.",
         ["The overdraft at Barclays", "what I lent Petra"]),
        ("The stuff about my parents — Dad's gambling and Mum's surgery — I'd like it gone.",
         ["Dad's gambling", "Mum's surgery"]),
        ("I'm uneasy about you holding my legal details. Please erase the custody hearing and the restraining order.",
         ["the custody hearing", "the restraining order"]),
        ("please forget everything about Auntie Grace? Her eviction and the money she borrowed.",
         ["Her eviction Auntie Grace", "the money she borrowed Auntie Grace"]),
        ("forget the health stuff. The doctor said I'm fine now and my wife knows.", ["the health stuff"]),
        # An abbreviation's full stop ends no sentence.
        ("erase my ID no. and my NHS number please", ["my ID no", "my NHS number"]),
        # A request pointing back at what came before it, past an aside or what is not meant.
        ("My time in rehab — I'd rather not dwell on it — please let all of that go.", ["My time in rehab"]),
        ("My own surgery — not my husband's, mine — I'd like that taken out of your memory.", ["My own surgery"]),
        ("Would you mind not keeping what I said about Dominik?", ["Dominik"]),
        ("I oughtn't to have given you my passport number. Would you drop it?", ["my passport number"]),
        # "an" typed for "and", where no article could stand: before "my", "the", "that".
        ("the knee op an my sisters divorce forget both", ["the knee op", "my sisters divorce"]),
        ("forget an old address of mine", ["an old address of mine"]),
        # A reason typed without a comma ends the thing; "in case of" is part of it.
        ("dont keep the boat plan in case my wife checks my phone", ["the boat plan"]),
        ("forget the cash I keep in case of fire", ["the cash I keep in case of fire"]),
        # A summing-up thing, then what it is: the things it is spelt out as.
        ("please drop the money stuff, meaning the overdraft and what I owe Niko",
         ["the overdraft", "what I owe Niko"]),
    ],
)
def test_targets_one_entry_per_thing_named(text, targets):
    assert extract_targets(text) == targets


@pytest.mark.parametrize("text, spared", [
    ("purge my passport number. keep the driving licence one for now", ["the driving licence one"]),
    ("delete the loan stuff, leave the mortgage", ["the mortgage"]),
    ("erase the savings figure. The pension details may remain.", ["The pension details"]),
    ("wipe the arrest — the wedding plans can stay", ["the wedding plans"]),
    ("the overdraft thing, not the student loan one, bin it", ["the student loan one"]),
    # Someone else's thing, said not to be meant or to be kept.
    ("The rehab stuff you've got on me — MY recovery, not Dana's — please take it out.", ["Dana's"]),
    ("Take my status out of your notes. Not Themba's, mine.", ["Themba's"]),
    ("strike the diagnosis from my profile, Mum's cancer you can keep", ["Mum's cancer"]),
    ("delete the entry on my pills. Dad's heart stuff can stay", ["Dad's heart stuff"]),
    # The thing first, then "keep", as many languages say it; after an emoji too.
    ("forget my NRIC pls, the passport one keep lah", ["the passport one"]),
    ("delete the overdraft 🙏 the car loan keep it, I still pay it", ["the car loan"]),
    ("forget the loan, don't keep it", []),
    ("the bitcoin figure and where I keep it, scrub that", []),
    ("delete my BSN. the passport number please keep", ["the passport number"]),
    # A name standing bare before "you can keep".
    ("Remove the NIF. Passport you may keep, no problem.", ["Passport"]),
    ("Forget my divorce; the kids' schools, keep.", ["the kids' schools"]),
    ("Delete my address, you can keep my phone number.", ["my phone number"]),
    # Typed in a hurry: the thing kept stands bare at the start of its clause; "id" after a kind of ID is one.
    ("bin the nhs numbr. nino keep", ["nino"]),
    ("scrap my ssn. passport is ok keep", ["passport"]),
    ("the bank pin delet, tax id fine", ["tax ID"]),
    ("delete my salary, i'm ok with that", []),
    # Keeping words that ask for something to go, or say nothing in particular, spare nothing.
    ("please keep my address out of your memory", []),
    ("don't keep my address", []),
    ("Purge my ID number from whatever you've stored.", []),
    ("Nothing about my visa should stay with you.", []),
    ("delete it and keep it quiet", []),
])
def test_what_a_request_says_to_keep(text, spared):
    assert request_spared(text) == spared


@pytest.mark.parametrize(("text", "unaddressed"), [
    # A letter's greeting and signature go: the writer's name there names nothing to forget.
    ("Sir, I must ask that my medical condition not be preserved. Yours, Albert Whitfield",
     "I must ask that my medical condition not be preserved."),
    ("My dear assistant, I would be obliged if you did not hold onto it. Yours sincerely, Winifred",
     "I would be obliged if you did not hold onto it."),
    ("Good evening. Please remove the place where we live.", "Please remove the place where we live."),
    ("delete my email. Love, Gran x", "delete my email."),
    ("Please forget my salary.\n- Tomasz", "Please forget my salary."),
    ("Hi Maya, forget my address", "forget my address"),
    # A name in the request itself stays, after a dash too; so does a thank-you with no name.
    ("Please forget Tom Baker", "Please forget Tom Baker"),
    ("forget the guy I'm seeing — Arjun", "forget the guy I'm seeing — Arjun"),
    ("Forget my address please. Thanks!", "Forget my address please. Thanks!"),
    ("forget about Best Buy", "forget about Best Buy"),
    # Nothing but a greeting is kept as it is.
    ("Dear Sir,", "Dear Sir,"),
])
def test_a_letters_greeting_and_signature_are_no_part_of_the_request(text, unaddressed):
    assert request_unaddressed(text) == unaddressed


@pytest.mark.parametrize(
    "text",
    [
        "Don't erase what I told you about my sister's wedding.",
        "please never delete my notes on the Ortega account",
        "Do not forget my allergy to penicillin.",
    ],
)
def test_negated_deletion_asks_to_keep(text):
    assert intent.intent_detect(text).outcome == "none"
    assert keeps_only(text)
    # A negated verb beside one that is not, or a wish beside it, still asks for something to go.
    assert not keeps_only("Don't forget to delete my old address from your memory.")
    assert not keeps_only("Don't erase it yet, but I'd rather you didn't keep my address.")


@pytest.mark.parametrize(
    "text",
    [
        "I'd rather my therapy sessions weren't stored anywhere.",
        "On reflection, I prefer that the figure I gave for my debts is not kept.",
        "✨ forget my locker combination",
    ],
)
def test_passive_and_decorated_requests_are_recognised(text):
    assert intent.intent_detect(text).outcome in ("forget", "ask")


@pytest.mark.parametrize(
    "text",
    [
        "Both my dad's heart surgery and his wanting to sell the farm before Christmas — forget those.",
        "My brother's gambling debts and him lying to our parents about the house — forget those.",
    ],
)
def test_things_named_first_then_a_request_closing_the_message_is_sure(text):
    """"forget those" closing the message asks as "forget them" does: sure, not only asked about."""
    found = intent.intent_detect(text)
    assert found.outcome == "forget", found
    assert len(found.targets) == 2


def test_forget_request_target_joins_targets_and_keeps_none_for_ordinary_messages():
    assert intent.forget_request_target("Please delete my address and my salary") == "my address; my salary"
    assert intent.forget_request_target("How do I delete a git branch?") is None
    assert intent.is_vague("it") and not intent.is_vague("my address")


class _OtherEmbedder:
    name, dimensions = "openai:text-embedding-3-small", 1536

    def embed(self, texts):
        raise AssertionError("the rules-only path must not embed")

    def embed_layers(self, texts):
        raise AssertionError("the rules-only path must not embed")


def test_another_embedder_falls_back_to_the_rules(monkeypatch):
    monkeypatch.setattr(intent, "get_embedder", lambda: _OtherEmbedder())
    model = intent.intent_model()
    request = intent.intent_detect("Please forget my home address", features=np.ones(1536))
    assert request.outcome in ("forget", "ask") and request.targets == ["my home address"]
    assert request == intent.intent_classify("Please forget my home address", None)
    assert intent.intent_detect("How do I delete a git branch?").outcome == "none"
    # Conservative without the embedding: "forget" needs a higher probability.
    assert model.fallback.sure >= model.full.sure


def test_the_saved_model_loads_and_matches_the_embedder():
    raw = json.loads(intent.MODEL_PATH.read_text())
    model, embedder = intent.intent_model(), get_embedder()
    assert model.embedder == embedder.name and model.dimensions == embedder.dimensions
    assert list(model.signal_names) == SIGNAL_NAMES == raw["feature_names"][1:]
    assert model.layers == raw["layers"] == embedder.embed_layers(["x"]).shape[1] == 6
    assert len(raw["coef_embedding"]) == embedder.dimensions * model.layers
    for head in (model.full, model.fallback):
        assert 0 < head.ask <= head.sure < 1
        assert head.coef_signals.shape == (len(SIGNAL_NAMES),)


def test_detection_with_the_features_passed_does_not_embed_again(vectors, monkeypatch):
    # What it costs in time is measured in the intents report (``timing``), not here.
    def refuse(*_):
        raise AssertionError("the features were passed in; nothing should be embedded")

    monkeypatch.setattr(intent, "intent_features", refuse)
    for text in (REQUESTS[0], ORDINARY[0]):
        assert intent.intent_detect(text, features=vectors[text]) == intent.intent_classify(text, vectors[text])


def test_a_message_the_turn_has_just_embedded_is_not_run_through_the_model_again():
    # The turn embeds the message once (for retrieval and storage); the detector then reads its layers from there.
    embedder = get_embedder()
    text = "Please stop keeping the name of my landlord, it's none of your business."
    model = embedder._load()
    passes = []
    original = model.encode_layers
    model.encode_layers = lambda texts: passes.append(list(texts)) or original(texts)
    try:
        vector = embedder.embed_one(text)
        found = intent.intent_detect(text)
    finally:
        del model.encode_layers
    assert passes == [[text]]
    assert found == intent.intent_detect(text, features=intent.intent_features([text])[0])
    assert found.outcome != "none"
    assert np.allclose(vector, embedder.embed([text, "another text"])[0], atol=1e-6)


def test_a_model_put_in_place_for_a_while_is_scored_then_the_saved_one_again():
    raw = json.loads(intent.MODEL_PATH.read_text())
    saved = intent.intent_model()
    always = {**raw, "fallback": {**raw["fallback"], "intercept": 50.0}}
    with intent.intent_model_using(always) as model:
        assert intent.intent_model() is model
        assert intent.intent_classify("Please forget my home address and my salary", None).outcome == "forget"
    assert intent.intent_model() is saved
    assert intent.intent_classify("How do I delete a git branch?", None).outcome == "none"


def test_ask_threshold_for_left_out_authors_asks_about_few_of_their_ordinary_messages():
    from evaluation.intents.train import ask_for_authors

    y = np.array([1] * 10 + [0] * 100)
    p = np.concatenate([np.linspace(0.05, 0.99, 10), np.linspace(0.0, 0.5, 100)])
    ask = ask_for_authors(y, p, sure=0.9, max_negatives=0.05)
    asked = (p[y == 0] >= ask) & (p[y == 0] < 0.9)
    assert asked.sum() == 5  # the five highest-scoring ordinary messages, and not one more
    assert ask == pytest.approx(p[y == 0][-5])
    # Nothing may be asked: the lowest request's score above every ordinary message's.
    assert ask_for_authors(y, p, sure=0.9, max_negatives=0.0) == pytest.approx(min(p[p > 0.5]))
    assert ask_for_authors(y, p, sure=0.9, max_negatives=1.0) == pytest.approx(0.0)  # everything may


def test_intent_train_corpus_is_reproducible():
    raw = json.loads(intent.MODEL_PATH.read_text())
    outputs = []
    for _ in range(2):
        out = io.StringIO()
        call_command("intent_train", "--corpus-only", stdout=out)
        outputs.append(out.getvalue())
    assert outputs[0] == outputs[1]
    assert f"corpus {raw['corpus']['hash']}:" in outputs[0]
    assert f"nested validation corpus {raw['corpus']['nested_hash']}:" in outputs[0]


def test_a_request_naming_several_long_facts_is_judged_with_them_set_aside_as_one(monkeypatch):
    # Several long facts can drown the request in their topics. Judged again with them set aside, "forget that this
    # and this" would read as nothing much; they are one thing set aside: "forget that this".
    text = ("Forget that Ingrid Solberg's novels often explore the quiet endurance of coastal communities, weaving "
            "folklore into everyday life, and her fascination with tidal rhythms and the solitude of lighthouse "
            "keepers.")
    judged = []
    classify = intent.intent_classify

    def first_unsure(text, features):
        judged.append(text)
        found = classify(text, features)
        return intent.Intent("ask", 0.6, found.targets) if len(judged) == 1 else found

    monkeypatch.setattr(intent, "intent_classify", first_unsure)
    found = intent.intent_detect(text)
    assert judged == [text, "Forget that this."]
    assert found.outcome == "forget" and len(found.targets) == 3, found


def test_an_unsure_message_without_an_asking_word_is_asked_about_only_when_more_likely_a_request(
    settings, monkeypatch
):
    # Nothing sure, so every request lands between the thresholds; and no word the rules know asks for anything to
    # go, so only the classifier's probability can make it a question.
    settings.DELLM_INTENT_SURE = 0.9999
    monkeypatch.setattr(intent, "has_cue", lambda text: False)
    text = "I'd sooner you didn't keep my overdraft on file."  # no target in a shape the rules read
    assert extract_targets(text) == []
    features = intent.intent_features([text])[0]
    found = intent.intent_classify(text, features)
    assert found.confidence >= intent.UNCUED_ASK and found.outcome == intent.ASK
    assert "overdraft" in " ".join(found.targets)  # asked about with what is left once the asking words are gone
    # A message the classifier scores above "ask" but below UNCUED_ASK is answered.
    features = intent.intent_features(["Secret recipe."])[0]
    fragment = intent.intent_classify("Secret recipe.", features)
    assert intent._thresholds(intent.intent_model().full)[1] <= fragment.confidence < intent.UNCUED_ASK
    assert fragment.outcome == intent.NONE
    # So is a bare fragment, however likely the classifier finds it a request: it names a topic, asks nothing.
    for text in ("Secret plan.", "My medical history."):
        found = intent.intent_classify(text, intent.intent_features([text])[0])
        assert found.outcome == intent.NONE
    # The rules alone (another embedder) never ask without such a word.
    assert intent.intent_classify(text, None).outcome == intent.NONE
    # Nor is a long message that tells something, however secret: the user is telling, not asking.
    told = ("There is about 40,000 dollars in an account my uncle opened for me in Singapore that was never declared. "
            "Now that he has died it is mine and I honestly have no idea what I should do with it.")
    found = intent.intent_classify(told, intent.intent_features([told])[0])
    assert len(told.split()) >= intent.UNCUED_MAX_WORDS and found.confidence >= intent.UNCUED_ASK
    assert found.outcome == intent.NONE


@pytest.mark.parametrize(("text", "glossed"), [
    # Dictated: "forget" heard as two words, punctuation said aloud.
    ("could you for get about my sisters rent", "could you forget about my sisters rent"),
    ("the thing about the bailiffs comma wipe it please full stop", "the thing about the bailiffs , wipe it please ."),
    ("keep the irish one period", "keep the irish one ."),
    # Never where the words mean themselves.
    ("thanks for getting back to me", "thanks for getting back to me"),
    ("where does the comma go in this sentence", "where does the comma go in this sentence"),
    ("my period is late", "my period is late"),
    ("she came home after a long period", "she came home after a long period"),
])
def test_dictated_words_are_read_as_typed(text, glossed):
    assert gloss(text) == glossed


@pytest.mark.parametrize(("text", "alone"), [
    ("Drop what I told you about the lawsuit with Priya. Also, how long should I boil an egg?",
     "Drop what I told you about the lawsuit with Priya."),
    ("Could you write a haiku about autumn? And delete my old Leeds address while you're at it.",
     "And delete my old Leeds address while you're at it."),
    ("forget my gym membership number and also whats a good stretch for a sore back",
     "forget my gym membership number"),
    # A question about what the assistant holds, or one that names the thing, belongs to the request.
    ("Do you still have my library card number? Please forget it.",
     "Do you still have my library card number? Please forget it."),
    ("The business with my landlord? Forget it.", "The business with my landlord? Forget it."),
    # "and how much I earn" names a second thing; no other task here.
    ("Forget my address and how much I earn.", "Forget my address and how much I earn."),
    ("How do I clear my browser cache?", "How do I clear my browser cache?"),
])
def test_another_task_in_the_same_message_is_no_part_of_the_request(text, alone):
    assert request_without_other_tasks(text) == alone


def test_a_request_beside_another_task_is_not_answered_as_an_ordinary_turn():
    found = intent.intent_detect("Could you suggest a name for my bakery? and also pretend i never told you "
                                 "about the debt to my uncle Farid")
    assert found.outcome in ("forget", "ask")
    assert any("Farid" in t for t in found.targets)
    assert not any("bakery" in t for t in found.targets)


@pytest.mark.parametrize(("text", "targets", "spared"), [
    ("Erase my IBAN — no, sorry, the sort code.", ["the sort code"], ["my IBAN"]),
    ("forget what I said about Ruth, wait no, I mean about my cousin's surgery",
     ["my cousin's surgery"], ["Ruth"]),
    ("Delete my blood test results - sorry, not mine, my husband's scan.", ["my husband's scan"],
     ["my blood test results"]),
    ("Remove my car loan and my overdraft — actually just the overdraft.", ["the overdraft"], ["my car loan"]),
    # Not corrections: an apology, "no one", an abbreviation's full stop.
    ("forget my pension, sorry to be a pain", ["my pension"], []),
    ("delete my new address — no one else has it", ["my new address"], []),
    ("erase my policy no. and my NI number", ["my policy no", "my NI number"], []),
])
def test_a_request_corrected_as_it_is_written_names_what_follows_the_correction(text, targets, spared):
    assert extract_targets(text) == targets
    assert request_spared(text) == spared


def test_what_to_keep_in_a_request_typed_without_stops():
    assert extract_targets("scrap the ghana passport number keep the british one") == ["the ghana passport number"]
    assert request_spared("scrap the ghana passport number keep the british one") == ["the british one"]
    assert request_spared("remove my gym card number you can keep the library one") == ["the library one"]
    # Someone who keeps something is no clause saying what to keep.
    assert request_spared("forget where i keep the spare key") == []


@pytest.mark.parametrize(("text", "targets", "spared"), [
    # Dictated without stops, what is not meant closes the request; the thing meant may be named before the verb.
    ("erase the money I send my parents in lagos not the school fees thing", ["the money I send my parents in lagos"],
     ["the school fees thing"]),
    ("uh the gambling debt the forty grand one wipe that please not the car loan",
     ["the gambling debt the forty grand one"], ["the car loan"]),
    ("um the netflix password delete that one not hotmail", ["the netflix password"], ["hotmail"]),
    # What follows names the thing meant again, and stays in the target.
    ("can you lose the hearing next month not the old conviction the upcoming one",
     ["the hearing next month the upcoming one"], ["the old conviction"]),
    # A "not" that denies, corrects or gives a reason excludes nothing.
    ("forget that I'm not the father of her baby", ["I'm not the father of her baby"], []),
    ("forget that my ex is not the one who called", ["my ex is not the one who called"], []),
    ("pls erase the part abt my brother. not my secret to tell", ["my brother"], []),
])
def test_what_is_not_meant_at_the_end_of_a_request_typed_without_stops(text, targets, spared):
    assert extract_targets(text) == targets
    assert request_spared(text) == spared


@pytest.mark.parametrize(("text", "targets"), [
    # Sounds that fill a pause are no part of what is named, and "and" still parts two things past them.
    ("please erase the gym membership and, um, the medication i'm on", ["the gym membership", "the medication i'm on"]),
    ("uh the money from my neighbour the handshake loan scratch that",
     ["the money from my neighbour the handshake loan"]),
    # "and also" always adds a thing.
    ("delete the burnout thing and also like who i vote for", ["the burnout thing", "who i vote for"]),
    # Several things listed before a pointer to all of them, in one long sentence.
    ("so the stuff about the firm running out of cash and the thing with my cofounder and the crypto wallet with the "
     "backup codes can you erase all three",
     ["the firm running out of cash", "the thing with my cofounder", "the crypto wallet with the backup codes"]),
])
def test_targets_of_a_dictated_request(text, targets):
    assert extract_targets(text) == targets


@pytest.mark.parametrize(("text", "targets", "spared"), [
    # Punctuation spoken as words, into a text with none of its own.
    ("that secret savings account question mark yeah delete that", ["secret savings account"], []),
    # What is feared is no part of the thing.
    ("Please delete the surprise party plans before she sees them!", ["the surprise party plans"], []),
    ("wipe the bonus thing so my boss never reads it", ["the bonus thing"], []),
    # A count said, and as many things named without commas.
    ("ok three things forget the hospital bills the loan on my car and where i live",
     ["the hospital bills", "the loan on my car", "where i live"], []),
    ("can you remove two things my salary my address", ["my salary", "my address"], []),
    # Which of two look-alikes stays, dictated without stops.
    ("can u wipe the tax number the medicare one is fine keep that", ["the tax number"], ["the medicare one"]),
    ("the brazilian tax number erase that one the american one you can keep", ["the brazilian tax number"],
     ["the american one"]),
    ("delete my health card number the ontario one you can keep the other number",
     ["my health card number the ontario one"], ["the other number"]),
])
def test_targets_and_what_stays_in_a_dictated_request(text, targets, spared):
    assert extract_targets(text) == targets
    assert request_spared(text) == spared


def test_things_counted_then_spelt_out_are_the_things_spelt_out():
    assert extract_targets("please wipe my two debts, the one to my aunt and the credit card one") == [
        "the debt to my aunt", "the credit card debt"]


@pytest.mark.parametrize(("text", "targets"), [
    # Summed up, then listed after a colon or a dash: the things listed, with the names the summing-up gives.
    ("Clear out all of it about Ilse: the drinking, the debt, her brother's threats.",
     ["the drinking Ilse", "the debt Ilse", "her brother's threats Ilse"]),
    ("Nothing about my mother should stay with you — neither her surgery nor the inheritance fight.",
     ["her surgery", "the inheritance fight"]),
    ("Two things I want out of your memory: my tax number and the miscarriage.", ["my tax number", "the miscarriage"]),
    # Not a reason after the dash.
    ("the stuff about Graciela and the money for Nico — bin it, we settled it", None),
])
def test_things_summed_up_then_listed(text, targets):
    found = extract_targets(text)
    if targets is None:
        assert not any("settled" in t for t in found)
    else:
        assert found == targets


@pytest.mark.parametrize(("text", "targets"), [
    # What the user does is a thing of its own after "and", unless someone named does it with them.
    ("remove the secret savings an me thinking of leaving", ["the secret savings", "me thinking of leaving"]),
    ("please forget what I told you about Jonas and me trying for a baby", ["Jonas and me trying for a baby"]),
    ("erace the parkinsons part an allso my bank password", ["the parkinsons part", "my bank password"]),
])
def test_what_the_user_does_after_and(text, targets):
    assert extract_targets(text) == targets


@pytest.mark.parametrize(("text", "targets"), [
    # What the assistant holds on a thing, said before the thing: the thing.
    ("everything you put together about my brother's shop closing and the money I lent him, delete all of it",
     ["my brother's shop closing", "the money I lent him"]),
    ("Whatever you have deduced about my heart condition, erase it.", ["my heart condition"]),
    # "the lot" points back like "it".
    ("so the debts, me owing sanjay and me owing my landlord. forget the lot pls its embarrassing",
     ["the debts", "me owing sanjay", "me owing my landlord"]),
])
def test_what_the_assistant_holds_on_a_thing_and_the_lot(text, targets):
    assert extract_targets(text) == targets


@pytest.mark.parametrize(("text", "targets"), [
    # A count said, and the things joined by "and" with nothing else to part them.
    ("okay delete the blood test results thing and uh marek from gdansk both", ["the blood test results thing",
                                                                                "marek from gdansk both"]),
    # What someone does after "and" is a thing of its own.
    ("forget his stroke and him wanting me to move back in", ["his stroke", "him wanting me to move back in"]),
    # "ones" for a plural already said is the plural, not a plural of it.
    ("delete my NI numbers and the NHS ones", ["my NI numbers", "the NHS numbers"]),
])
def test_a_count_said_and_what_someone_does(text, targets):
    assert extract_targets(text) == targets
