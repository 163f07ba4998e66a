"""Messages that ask to forget, on every transport: sure -> a preview; unsure -> a question, nothing
stored until the user chooses; never stored, embedded, answered or turned into a fact."""

import json

import openai
import pytest
from asgiref.sync import sync_to_async
from django.test import override_settings

from accounts.services import token_create
from chat import services, turns
from chat.models import Message
from dellm_site.errors import ApplicationError
from memory.facts import facts_extract
from memory.models import Embedding, Fact, Node
from provenance.forgetting import intent, matching, resolution, spelling
from provenance.forgetting import services as forget
from tests.conftest import app_env, say, start_web
from tests.test_websocket import connect

pytestmark = pytest.mark.django_db(transaction=True)

# Every message that could be a request is asked about: the "unsure" band made wide on purpose.
UNSURE = {"DELLM_INTENT_SURE": 1.01, "DELLM_INTENT_ASK": 0.5}


def _statements(user):
    conversation = services.conversation_create(user=user)
    for text in ("I live on Kestrel Lane in Quarzwick.", "I earn 52,000 euros a year.",
                 "I have a tortoise called Sheldon.", "My sister Ana is a nurse."):
        say(user, conversation, text)
    return conversation


def _stored(user):
    return (Node.objects.filter(owner=user).count(), Embedding.objects.filter(owner=user).count())


def test_a_sure_request_over_rest_is_previewed_and_never_stored(api, user):
    conversation = _statements(user)
    before = _stored(user)
    response = api.post(
        f"/api/conversations/{conversation.pk}/messages/", {"content": "please wipe where I live from your memory"},
        format="json",
    )
    assert response.status_code == 200, response.content
    preview = response.json()["forget_preview"]
    lane = Message.objects.get(owner=user, content__startswith="I live on Kestrel")
    assert lane.pk in {e["id"] for e in preview["matched"]}
    assert _stored(user) == before
    assert not Message.objects.filter(owner=user, content__icontains="wipe").exists()


def test_several_targets_in_one_request(user):
    conversation = _statements(user)
    result = turns.message_post(
        user=user, conversation_id=conversation.pk, content="Forget my address and how much I earn."
    )
    assert result.forget_preview is not None
    matched = {e["id"] for e in result.forget_preview["matched"]}
    lane = Message.objects.get(owner=user, content__startswith="I live on Kestrel")
    salary = Message.objects.get(owner=user, content__startswith="I earn")
    sheldon = Message.objects.get(owner=user, content__startswith="I have a tortoise")
    assert {lane.pk, salary.pk} <= matched and sheldon.pk not in matched


def test_a_request_that_counts_its_targets_matches_one_statement_for_each(user):
    conversation = services.conversation_create(user=user)
    for text in ("I left a violent boyfriend called Dario two years ago and I still have a restraining order against "
                 "him.", "I owe 9,000 pounds on store cards from the months after I left Dario.",
                 "My flat is at 17 Weaver Street in Leeds, and the landlord never gives out my number.",
                 "My sister Ana is pregnant and our mum doesn't know yet.", "I take sertraline for anxiety."):
        say(user, conversation, text)
    request = "I'd feel safer if you forgot both what I said about Dario and where I live."

    def matched_by(**constants):
        with pytest.MonkeyPatch.context() as patch:
            for name, value in constants.items():
                patch.setattr(resolution, name, value)
            result = turns.message_post(user=user, conversation_id=conversation.pk, content=request)
        ids = [e["id"] for e in result.forget_preview["matched"]]
        return {content[:12] for content in Message.objects.filter(pk__in=ids).values_list("content", flat=True)}

    # "both": two things, and two targets. "Dario" leads the store cards, which name him too, by less than
    # MATCH_GAP, so alone it would match nothing; counted, it takes the statement about him.
    assert matched_by() == {"I left a vio", "My flat is a"}
    assert matched_by(COUNTED_GAP=None) == {"My flat is a"}


@pytest.mark.parametrize("text, count", [
    ("forget my address", 1), ("please forget both of my loans", 2), ("delete all three of them", 3),
    ("the two things about my brother", 2), ("bin the health things", None),
    ("everything to do with my ex, please", 1), ("wipe all the medical stuff", None), ("my debts", None),
    ("the details of the investigation", 1), ("anything about my nest egg", 1),
    ("forget where I live", 1), ("the money I owe my brother", 1),
    ("my card numbers, both bank ones, please forget", 2), ("both the Irish ones", 2), ("both my kids' schools", 1),
    ("forget both what I said about Dario and where I live", 2), ("both my salary and the loan, please", 2),
    ("the drunk texts and the pregnancy, let both go", 2), ("both can go", 2),
])
def test_how_many_statements_a_request_names(text, count):
    assert resolution.how_many(text) == count


def _loans(user):
    conversation = services.conversation_create(user=user)
    for text in ("I still owe 9,000 on the car loan from Santander.", "I borrowed 2,000 from my brother Niko.",
                 "My TFN is 482 917 365.", "My Medicare number is 2951 48372 1.", "I live at 4 Rua Augusta.",
                 "I have a tortoise called Sheldon.", "I work nights as a paramedic."):
        say(user, conversation, text)
    return {m.content: m.pk for m in Message.objects.filter(owner=user, role="user")}


@pytest.mark.parametrize("request_text, named", [
    # One target naming two statements ("both"), and the whole request saying how many its one target names.
    ("Please forget both of my debts.", {"I still owe 9,000 on the car loan from Santander.",
                                         "I borrowed 2,000 from my brother Niko."}),
    ("TFN and Medicare number - I'd like both of those forgotten, please.",
     {"My TFN is 482 917 365.", "My Medicare number is 2951 48372 1."}),
    ("forget the car loan, the tortoise and where I live", {
        "I still owe 9,000 on the car loan from Santander.", "I have a tortoise called Sheldon.",
        "I live at 4 Rua Augusta."}),
    # "or" names both; a later sentence asking again, or adding to the request, names a statement of its own.
    ("don't keep my Medicare number or the tortoise", {"My Medicare number is 2951 48372 1.",
                                                      "I have a tortoise called Sheldon."}),
    ("Please forget where I live. And unlearn the tortoise while you're at it.", {
        "I live at 4 Rua Augusta.", "I have a tortoise called Sheldon."}),
    ("Forget the car loan. Same goes for what I borrowed from Niko.", {
        "I still owe 9,000 on the car loan from Santander.", "I borrowed 2,000 from my brother Niko."}),
    # Naming one of two alike statements matches that one only.
    ("forget what I owe Niko", {"I borrowed 2,000 from my brother Niko."}),
    # A thing with what the user did with it is still a thing of its own ("the loan I took for the car").
    ("Please remove both debts I told you about: the loan I took for the car and the money Niko lent me.", {
        "I still owe 9,000 on the car loan from Santander.", "I borrowed 2,000 from my brother Niko."}),
])
def test_a_request_naming_several_statements_matches_each_and_no_other(user, request_text, named):
    ids = _loans(user)
    preview = forget.forget_preview(user=user, mode="natural", query=request_text)
    matched = {m.content for m in Message.objects.filter(pk__in=[m["id"] for m in preview.plan["matched"]],
                                                         role="user")}
    assert matched == named, (request_text, matched)
    assert ids  # the statements were stored


def test_what_the_request_keeps_is_out_of_the_running_before_the_match_is_decided(user):
    """The account number scores above the BVN for "the bank verification number"; said to be kept, it leaves the
    BVN the clear lead, rather than taking the match and leaving nothing."""
    conversation = services.conversation_create(user=user)
    for text in ("My BVN is 22184637590.", "My savings account is with Zenith Bank, bank account number 2093847561.",
                 "I live at 4 Rua Augusta.", "I have a tortoise called Sheldon.", "I owe my supplier 850,000 naira.",
                 "My husband works in Abuja."):
        say(user, conversation, text)
    request_text = "Is it possible to remove the bank verification number I gave you? The account number is fine."
    preview = forget.forget_preview(user=user, mode="natural", query=request_text)
    matched = {m.content for m in Message.objects.filter(pk__in=[m["id"] for m in preview.plan["matched"]],
                                                         role="user")}
    assert matched == {"My BVN is 22184637590."}


@override_settings(**UNSURE)
def test_an_unsure_message_over_rest_is_asked_about_then_answered(api, user):
    conversation = _statements(user)
    before = _stored(user)
    url = f"/api/conversations/{conversation.pk}/messages/"
    text = "Forget that I have a tortoise called Sheldon."
    response = api.post(url, {"content": text}, format="json")
    assert response.status_code == 200
    question = response.json()["forget_question"]
    assert question["content"] == text and "forget" in question["text"].lower()
    assert question["choices"] == {"review": "Review what I'd forget", "answer": "No, just answer it"}
    assert _stored(user) == before  # nothing kept until the user chooses

    preview = api.post("/api/forget/preview/", {"mode": "natural", "query": text}, format="json").json()
    sheldon = Message.objects.get(owner=user, content__startswith="I have a tortoise")
    assert sheldon.pk in {e["id"] for e in preview["matched"]}

    answered = api.post(url, {"content": text, "intent": "answer"}, format="json")
    assert answered.status_code == 201 and answered.json()["reply"]["content"]
    assert Message.objects.filter(owner=user, content=text).exists()
    bad = api.post(url, {"content": text, "intent": "maybe"}, format="json")
    assert bad.status_code == 400 and bad.json()["code"] == "invalid"


@override_settings(**UNSURE)
async def test_an_unsure_message_over_the_websocket(user):
    conversation = await sync_to_async(_statements)(user)
    before = await sync_to_async(_stored)(user)
    communicator, _ = await connect(user, conversation.pk)
    text = "I'd rather you didn't know how much I earn."
    try:
        await communicator.send_to(text_data=json.dumps({"type": "message", "content": text}))
        frame = json.loads(await communicator.receive_from(timeout=30))
        assert frame["type"] == "forget_question" and frame["question"]["content"] == text
        assert await sync_to_async(_stored)(user) == before

        await communicator.send_to(text_data=json.dumps({"type": "forget_review", "content": text}))
        frame = json.loads(await communicator.receive_from(timeout=30))
        assert frame["type"] == "forget_preview"
        salary = await sync_to_async(Message.objects.get)(owner=user, content__startswith="I earn")
        assert salary.pk in {e["id"] for e in frame["preview"]["matched"]}

        await communicator.send_to(text_data=json.dumps({"type": "message", "content": text, "intent": "answer"}))
        kinds = []
        while not kinds or kinds[-1] != "reply":
            kinds.append(json.loads(await communicator.receive_from(timeout=30))["type"])
        assert kinds[0] == "user_message"
    finally:
        await communicator.disconnect()


def test_the_openai_endpoint_asks_and_answers_on_request(user):
    web, base = start_web(app_env(DELLM_INTENT_SURE="1.01", DELLM_INTENT_ASK="0.5"), "web-intent.log")
    try:
        _, key = token_create(user=user, name="client")
        client = openai.OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0, timeout=120)
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "I live in Quarzwick."}])
        before = _stored(user)
        text = "Forget that I live in Quarzwick."
        completion = client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
        assert "Did you want me to forget" in completion.choices[0].message.content
        assert completion.model_extra["dellm"]["forget_question"]["content"] == text
        assert _stored(user) == before
        completion = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": text}], extra_body={"dellm": {"intent": "answer"}}
        )
        assert completion.model_extra["dellm"]["reply"] and _stored(user) != before
    finally:
        web.stop()


def test_a_function_calling_llm_decides_an_unsure_message(settings, openai_stub, user):
    settings.DELLM_INTENT_SURE, settings.DELLM_INTENT_ASK = UNSURE["DELLM_INTENT_SURE"], UNSURE["DELLM_INTENT_ASK"]
    conversation = _statements(user)
    settings.DELLM_LLM = {"BACKEND": "dellm_site.ai.openai.OpenAILLM", "OPTIONS": {
        "model": "stub-model", "api_key": openai_stub.api_key, "base_url": openai_stub.base_url, "max_retries": 0}}
    before = _stored(user)
    openai_stub.tool_call = ("forget_memory", {"targets": ["my tortoise"]})
    result = turns.message_post(user=user, conversation_id=conversation.pk, content="Scrub the tortoise thing.")
    assert result.forget_preview is not None and result.forget_question is None
    sheldon = Message.objects.get(owner=user, content__startswith="I have a tortoise")
    assert sheldon.pk in {e["id"] for e in result.forget_preview["matched"]}
    tools_request = next(r for r in openai_stub.chat_requests if r.get("tools"))
    assert tools_request["tools"][0]["function"]["name"] == "forget_memory"
    assert _stored(user) == before

    openai_stub.tool_call = None  # the model answers in words: not a request, so an ordinary turn
    result = turns.message_post(user=user, conversation_id=conversation.pk, content="Scrub the tortoise thing.")
    assert result.forget_preview is None and result.reply is not None


def test_a_wish_not_to_be_remembered_never_becomes_a_fact(user):
    conversation = services.conversation_create(user=user)
    text = "I don't want you to remember that home for me is Cusco."
    result = turns.message_post(user=user, conversation_id=conversation.pk, content=text)
    assert result.reply is None and not Message.objects.filter(owner=user, content=text).exists()
    # Even when the user insists it is answered, no fact is taken from it.
    answered = turns.message_post(user=user, conversation_id=conversation.pk, content=text, answer=True)
    assert answered.reply is not None
    assert facts_extract(message_id=answered.user_message.pk) == []
    assert not Fact.objects.filter(owner=user).exists()


def test_possibly_related_items_are_offered_and_can_be_added(user):
    conversation = services.conversation_create(user=user)
    for text in ("I have a tortoise called Sheldon.", "My pet sleeps under the radiator all winter.",
                 "I work as a sous-chef."):
        say(user, conversation, text)
    ids = {m.content: m.pk for m in Message.objects.filter(owner=user, role="user")}
    radiator = ids["My pet sleeps under the radiator all winter."]
    preview = forget.forget_preview(user=user, mode="natural", query="forget that I have a tortoise called Sheldon")
    matched = {e["id"] for e in preview.plan["matched"]}
    related = {e["id"]: e for e in preview.plan["related"]}
    assert ids["I have a tortoise called Sheldon."] in matched
    assert radiator not in matched and related[radiator]["why"].startswith(("shares", "says", "is about"))
    assert ids["I work as a sous-chef."] not in matched
    with pytest.raises(ApplicationError):  # only what the preview offered can be added
        forget.forget_confirm(user=user, request_id=preview.pk, add=[ids["I work as a sous-chef."]])
    manifest = forget.forget_confirm(user=user, request_id=preview.pk, add=[radiator])
    assert radiator in manifest["deleted_ids"] and not Message.objects.filter(pk=radiator).exists()
    assert Message.objects.filter(pk=ids["I work as a sous-chef."]).exists()


def test_a_request_with_no_readable_target_is_resolved_by_its_gist(user):
    """Nothing stands where requests usually put their target; what the message is about still finds it."""
    _statements(user)
    say(user, services.conversation_create(user=user), "My crush is Mathis from the pottery studio.")
    preview = forget.forget_preview(
        user=user, mode="natural", query="the Mathis thing is embarrassing, don't keep it pls"
    )
    matched = Node.objects.filter(pk__in=[m["id"] for m in preview.plan["matched"]], kind="message")
    assert [m.content for m in matched if m.message.role == "user"] == ["My crush is Mathis from the pottery studio."]


def test_a_request_spelling_out_what_a_statement_abbreviates_finds_it(user):
    """"my tax file number" reaches "My TFN is ..." through the words' initials, not a list of abbreviations."""
    conversation = services.conversation_create(user=user)
    for text in ("My TFN is 459 599 230.", "I file my tax return every October with an accountant.",
                 "My partner's number is 0412 555 019."):
        say(user, conversation, text)
    matched, _ = matching.resolved_matches(user=user, targets=["my tax file number"],
                                           context="please forget my tax file number")
    assert [Message.objects.get(pk=pk).content for pk in matched if Message.objects.filter(pk=pk).exists()] == [
        "My TFN is 459 599 230."]


@pytest.mark.parametrize("request_text, named", [
    ("forget what I told you about my face", "I had a nose job in 2021 and nobody at work knows."),
    ("please drop the disciplinary thing", "I got a written warning from HR last month for being late."),
    ("delete my plans for the shop", "We're thinking of selling the bakery to my business partner."),
    ("please forget my status", "I've been HIV positive since 2015, undetectable now."),
])
def test_a_kind_of_information_named_reaches_a_statement_in_other_words(user, request_text, named):
    """The request and the statement share no content word, only the kind of information they are about."""
    conversation = services.conversation_create(user=user)
    statements = ("I had a nose job in 2021 and nobody at work knows.",
                  "I got a written warning from HR last month for being late.",
                  "We're thinking of selling the bakery to my business partner.",
                  "I've been HIV positive since 2015, undetectable now.",
                  "My dog Biscuit is a beagle.", "My sister lives in Leeds.", "My passport number is 533214908.")
    for text in statements:
        say(user, conversation, text)
    preview = forget.forget_preview(user=user, mode="natural", query=request_text)
    matched = {m.content for m in Message.objects.filter(pk__in=[m["id"] for m in preview.plan["matched"]],
                                                         role="user")}
    assert matched == {named}


def _matched_contents(user, target: str, context: str) -> list[str]:
    matched, _ = matching.resolved_matches(user=user, targets=[target], context=context)
    return sorted(Message.objects.filter(pk__in=list(matched), role="user").values_list("content", flat=True))


def test_a_word_spelt_a_little_differently_is_held():
    """"socal securty numbr" holds the words of "social security number"; a word some item holds as written, or one
    too short to compare ("lean" for "loan"), is left as it is."""
    holders = {"loan": {7}}
    contents = {1: "My social security number is 219-09-9999.", 2: "My phone number is 0412 555 019.",
                3: "I am trying to stay lean this year."}
    resolution._misspellings_hold_their_words(
        holders=holders, texts=["plz forgit my socal securty numbr and the loan"], contents=contents)
    lexeme = dict(zip(["socal", "securty", "numbr"], resolution._lexemes(["socal", "securty", "numbr"]), strict=True))
    assert holders[next(iter(lexeme["socal"]))] == {1}
    assert holders[next(iter(lexeme["securty"]))] == {1}
    assert holders[next(iter(lexeme["numbr"]))] == {1, 2}
    assert holders["loan"] == {7}


def test_what_the_request_says_to_keep_is_not_matched(user):
    """"purge the NIN, leave the BVN": both are identity numbers the target is close to; the BVN stays."""
    conversation = services.conversation_create(user=user)
    statements = ("My NIN is 54829163047.", "My BVN is 22184739561.", "I work as a pharmacist in Ibadan.")
    for text in statements:
        say(user, conversation, text)
    request = "wipe the NIN. keep the BVN"
    assert _matched_contents(user, "the NIN", request) == [statements[0]]


def test_another_languages_function_words_do_not_drown_a_name(user):
    """"que", "je", "sur", "la" are not rare words the statements lack; "Inès" is what the request names."""
    conversation = services.conversation_create(user=user)
    statements = ("Je m'appelle Camille, j'ai 23 ans et je vis à Lyon avec ma coloc.",
                  "Mon amie Inès a été hospitalisée le mois dernier, she's better now.",
                  "J'ai un découvert de 600 euros à la banque, my parents don't know.",
                  "I'm planning to move to Montréal after my master.")
    for text in statements:
        say(user, conversation, text)
    request = "Ce que je t'ai dit sur mon amie Inès, please forget it, c'est pas mon histoire à raconter"
    assert _matched_contents(user, "Ce que je t'ai dit sur mon amie Inès", request) == [statements[1]]


def test_initialisms_are_read_from_runs_of_three_or_four_words():
    found = resolution.initialisms("my bank verification number, please")
    assert found["bvn"] == "bank verification number" and found["vnp"] == "verification number please"
    assert resolution.initialisms("the bank number") == {}  # two words make no three-letter run


def test_one_stands_for_a_noun_the_request_uses_elsewhere():
    """"the social insurance one" of "both my numbers" is the SIN: "one" takes the letter of the request's nouns."""
    found = resolution.stand_ins("the social insurance one", "Both my numbers: the social insurance one and the card")
    assert found["sin"] == "social insurance numbers" and "sio" not in found
    assert resolution.stand_ins("the momo one", "wipe the momo one") == {}  # too short to stand for anything
    assert resolution.stand_ins("my tax number", "forget my tax number") == {}


def test_asking_what_is_remembered_is_never_a_request():
    for text in ("What is stored about me right now? just curious", "Your memory is worse than my grandpa's honestly"):
        assert intent.intent_detect(text).outcome == "none", text


def test_a_word_the_model_does_not_know_is_embedded_as_the_word_it_mistypes():
    """"intrest" is one letter short of "interest", "suplyer" two edits from "supplier"; "lone" is a word of its
    own and stays; a word with no close word of the same first letter stays; so does a message partly written in
    another language."""
    vocabulary = ("the", "online", "loan", "lone", "interest", "supplier", "super", "health", "card", "from", "frame")
    found = spelling.misspellings(["the onlin lone w crazy intrest frum my suplyer", "helth kard"], vocabulary)
    assert found == {"onlin": "online", "intrest": "interest", "frum": "from", "suplyer": "supplier",
                     "helth": "health"}
    assert spelling.spelt_as_known("The Onlin lone, intrest!", found) == "The online lone, interest!"
    assert spelling.misspellings(["borra lo que te dije de la intrest, por favor"], vocabulary) == {}
    # The English list: a rare word of its own is no typo ("delicacy", "confided"); a mistyped one is.
    assert spelling.misspellings(["I confided in him, with delicacy, about the aquisition of the tabblets"]) == {
        "aquisition": "acquisition", "tabblets": "tablets"}
    # A word typed in a hurry most often loses a letter: of the words one letter away, the one it is with a letter
    # left out, though "piss" and "stop" are used more ("pills", "stock", "money").
    assert spelling.misspellings(["the pils i took from stok, and the mony"]) == {
        "pils": "pills", "stok": "stock", "mony": "money"}


def test_a_typed_in_a_hurry_request_reaches_the_statement_it_names_and_leaves_the_users_own_words(user):
    conversation = services.conversation_create(user=user)
    statements = ("I took 5,000 euros from an online payday lender at a ridiculous interest rate.",
                  "My sister Pirjo lent me 2,000 euros for the deposit on my flat.",
                  "My daughter Aino has asthma.", "I work night shifts at a bakery in Tampere.")
    for text in statements:
        say(user, conversation, text)
    # "pirjo" is not the model's word, but the user's own: it is not corrected into another word.
    assert resolution.spelt_for_meaning(user=user, texts=["the onlin lone w crazy intrest not pirjo's"]) == [
        "the online lone w crazy interest not pirjo's"]
    preview = forget.forget_preview(user=user, mode="natural", query="the onlin lone w crazy intrest dellete it")
    matched = {m.content for m in Message.objects.filter(pk__in=[m["id"] for m in preview.plan["matched"]],
                                                         role="user")}
    assert matched == {statements[0]}


def test_a_thing_with_what_the_user_did_with_it_is_no_clause_about_another():
    """Decided again without what the request's other targets took, a target must name a thing of its own: "what he
    did back then" is about something named beside it; "the card I left in the taxi" is a thing."""
    for clause in ("what he did back then", "his mum doesn't want it spread", "living under the one roof",
                   "Tama, where he is"):
        assert resolution._CLAUSE_TARGET.search(clause), clause
    for thing in ("the ID from the card I left in the taxi", "the story we tell Nan", "numbers I gave you"):
        assert not resolution._CLAUSE_TARGET.search(thing), thing


_OTHER_STATEMENTS = ("My dog Biscuit is a beagle.", "My sister lives in Leeds.", "I work night shifts at a bakery.")


def _previewed_statements(user, statements: tuple[str, ...], query: str) -> set[str]:
    """The user's statements the Forget panel's preview of ``query`` (typed in words) matches."""
    conversation = services.conversation_create(user=user)
    for text in (*statements, *_OTHER_STATEMENTS):
        say(user, conversation, text)
    preview = forget.forget_preview(user=user, mode="natural", query=query)
    return {m.content for m in Message.objects.filter(pk__in=[m["id"] for m in preview.plan["matched"]],
                                                      role="user")}


def test_two_things_named_in_words_the_detector_may_not_read_as_a_request_are_both_matched(user):
    """Typed into the Forget panel, a request is resolved for what it names, whether or not the detector would
    have taken it for a request in the chat: each thing named, not the whole text as one."""
    statements = ("My dad has been on dialysis three times a week since March.",
                  "Dad keeps pushing me to move back in with him after the wedding.")
    query = "Both my dad's dialysis and him wanting me to move back in after the wedding — forget those."
    assert _previewed_statements(user, statements, query) == set(statements)


def test_two_targets_nearest_the_same_statement_each_take_their_own(user):
    """Both targets of "both of my ID numbers, the My Number and the passport" lead to the passport statement:
    one thing is not named twice, so the weaker claim takes its own statement."""
    statements = ("My My Number is 8841 2290 3375.", "My passport number is TK4471923.")
    query = "Please delete both of my ID numbers — the My Number and the passport."
    assert _previewed_statements(user, statements, query) == set(statements)
