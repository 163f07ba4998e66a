"""What a deletion request names, in the user's own words, one entry per thing named.

Reads the target wherever the request puts it: after the verb ("delete my address"), after "that" or "about"
("forget that I live in Lisbon"), inside a wish or a retraction ("I'd rather you didn't know ...", "pretend I
never told you ..."), between a verb and its particle ("take X out of your memory"), before a passive ("X has to
go"), or first of all ("my salary? forget it"). Separate targets are split on "and" or commas only when both sides
are noun phrases or clauses ("my address and my salary"), so "my ex, Tom" and "lactose intolerant, so ..." stay whole.
"""

from __future__ import annotations

import re

from .intent_languages import foreign_function_words
from .intent_signals import IMPERATIVE_VERBS as _VERB
from .intent_signals import MAX_CHARS, SHOULD_NOT_STAY, has_cue, respell, signals

VAGUE = {
    "it", "this", "that", "them", "those", "these", "everything", "all", "all of it", "something", "", "me",
    "what i just said", "everything i just said", "my data", "all my data", "my personal data", "my info",
    "my information", "my personal information", "all my personal information", "everything about me",
    "who i am", "the last thing i told you", "my last message", "my previous message", "that last message",
    "what i told you", "what i said", "what i mentioned", "what i shared", "what i wrote", "all that", "all of that",
    "that stuff", "this stuff", "the thing", "that thing", "it all", "any of it", "everything i told you", "what",
    "before", "earlier", "previously", "today", "yesterday", "anywhere", "nowhere", "anywhere else", "him", "her",
    "the other one", "the other thing", "the other", "that one", "this one", "one", "the whole lot",
    "the whole lot of it", "the lot", "the lot of it", "the whole thing", "all of them", "the pair of them",
    "these two", "those two", "the two", "these three", "those three", "both of these", "both of those",
}
_I = re.IGNORECASE
_KEEPING = (r"keep(?:ing)? (?:track of|tabs on|a record of|records of|notes of|a note of)|hav(?:e|ing)|"
            r"remember(?:ing)?|keep(?:ing)?|stor(?:e|ing)|sav(?:e|ing)|retain(?:ing)?|hold(?:ing)?(?: on ?to)?|"
            r"hang(?:ing)? on ?to|log(?:ging)?|track(?:ing)?|possess(?:ing)?")
_ASKED = (r"(?:^|[,.;:!?-]\s*|\b(?:so|and|then|but|just|please|pls|now|also|actually|ok|okay|hey|hi|right|alright|"
          r"well|look|kindly|wait|sorry|honestly|oh|um|you|u|to|and|mind|let's|lets)\s+)$")
_MEMORY_PLACE = (r"(?:own\s+)?(?:(?:long[- ]term\s+)?(?:mem\w{0,2}or(?:y|ies)|storage)|mind|head|system|records?|"
                 r"notes|list(?: of things about me)?|memory hole|brain|files|database|db|logs?|knowledge|profile|"
                 r"context)")

_POINTER = (r"(?:these|those|the) (?:two|three|four)|it|that|this|them|those|these|all (?:of )?(?:it|that|this|them|"
            r"those)|all that|the (?:whole )?lot(?: of (?:it|them))?|the whole thing|both(?: of them)?")

# Patterns with the target in the middle: (pattern, priority); lower priority wins.
_BETWEEN = [re.compile(p, _I) for p in (
    rf"\b(?:tak|get|put|clean|send|cross|scratch|strik|knock|flush|wash)(?:e|s|es|ing|ting)?\s+(?!rid of\b)"
    r"(?P<t>[^.?!]+?)\s+"
    rf"(?:out of|off|down|from)\s+(?:your|the|my)\s+{_MEMORY_PLACE}\b",
    r"\b(?:want|like|need|have|get|prefer)\s+(?P<t>(?!you\b|u\b|to\b|it\b).+?)\s+(?:to be\s+)?(?:gone|erased|deleted|"
    r"removed|wiped|stored|kept|saved|sitting|forgotten|excluded|left out|purged|scrubbed|dropped|written down|"
    r"noted down|logged|recorded)\b",
    # "I don't want my ex's surname in your memory"
    rf"\b(?:want|need)\s+(?P<t>(?!you\b|u\b|to\b|it\b).+?)\s+(?:in|on)\s+your\s+{_MEMORY_PLACE}\b",
    # A pronoun pointing back at what came before: "I'd like that taken out of your memory", "please let all of
    # that go", "I want it gone, all of it" (the pronoun is vague: the thing named before it is the target).
    rf"\b(?:want|like|need|have|get|prefer)\s+(?P<t>{_POINTER})\s+(?:to be\s+)?(?:gone|erased|deleted|removed|wiped|"
    r"forgotten|purged|scrubbed|dropped|cleared|struck|taken (?:out|off|away)|put (?:out|away)|thrown out|binned)\b",
    rf"\blet\s+(?P<t>{_POINTER})\s+go\b",
    # "... I don't want they stay with you", "I do not want it to remain in your memory"
    rf"\b(?:don'?t|do not|not)\s+want\s+(?P<t>{_POINTER}|they)\s+(?:to\s+)?(?:stay|remain|be kept|be stored)\s+"
    r"(?:with|in|on)\s+(?:you|u|your)\b",
    r"\b(?:make sure|ensure|see to it that|check that)\s+(?P<t>(?!you\b|u\b|to\b|i\b).+?)\s+(?:is|are|gets?)\s+"
    r"(?:deleted|gone|wiped|erased|removed|forgotten)\b",
    # "make sure Megan's job offer isn't stored anywhere"
    r"\b(?:make sure|ensure|see to it that|check that)\s+(?P<t>(?!you\b|u\b|to\b|i\b).+?)\s+(?:isn'?t|is not|aren'?t|"
    r"are not|won'?t be|doesn'?t get|don'?t get)\s+(?:stored|kept|saved|remembered|recorded|logged|held)\b",
    # "Neither Elif's girlfriend nor Deniz's nose job should be remembered"
    rf"^\W*neither\s+(?P<t>[^.?!]+?\s+nor\s+[^.?!]+?)\s+{SHOULD_NOT_STAY}",
    # "the office romance with Min-jun, could that vanish from your memory?"
    rf"\b(?:can|could|would|will|let|make)\s+(?P<t>{_POINTER})\s+(?:just\s+)?(?:vanish|disappear|fade)\b",
    # The target first, then what should become of it: "X shouldn't be in your memory", "X is not something to keep".
    r"^(?:\W*\w+,\s*)?(?P<t>(?!(?:you|u|i|we|it|that|this|there|please|can|could|would|will|act|behave|pretend)\b)"
    r"[^.?!]+?)(?:,\s*(?:this|that|it|these|those))?"
    r"(?<!\bi)(?<!\byou)\s+(?:shouldn'?t|should not|should never|doesn'?t need to|does not need to|needn'?t|"
    r"is not something|isn'?t something|are not something|aren'?t something|"
    r"is something you|are something you|(?:is|are) (?:now )?off the (?:table|books|record)|"
    r"(?:is|are) something i(?:'d| would)? (?:want|like|need) (?:removed|gone|deleted|erased|forgotten|wiped)|"
    r"(?:is|are) not for (?:you|u) to (?:keep|know|remember|have)|(?:was|were) never (?:mentioned|said|told|shared))\b",
    # "act as if the egg freezing idea was never mentioned"
    r"\b(?:act|behave)\s+(?:as if|as though|like)\s+(?P<t>(?!i\b|you\b|u\b).+?)\s+(?:was|were|had been)\s+"
    r"never\s+(?:mentioned|said|told|shared|brought up)\b",
    r"^(?:\W*\w+,\s*)?(?P<t>.+?)\s+(?:needs to|should|has to|have to|must|ought to)\s+(?:be\s+)?(?:deleted|go|gone|"
    r"erased|removed|wiped|forgotten|scrubbed|purged)\b",
    r"\b(?:can|could|may)\s+(?P<t>(?!you\b|u\b|i\b).+?)\s+be\s+(?:deleted|removed|erased|wiped|forgotten|purged|"
    r"scrubbed)\b",
    r"\b(?:consider|treat)\s+(?P<t>.+?)\s+(?:as\s+)?(?:unsaid|deleted|never said|forgotten|gone)\b",
    # Things named first, then counted as going: "The fertility stuff and my warning at work - both can go", "the
    # meds info and the payments thing. both please, gone."
    r"(?:^|(?<=[.!?]\s))(?:\W*\w+,\s*)?(?P<t>[^.?!]+?)\s*[-\u2013\u2014:;,.]+\s*(?:(?:please|pls|so|ok|okay)\s+)?"
    r"(?:both|all|all (?:of )?(?:them|three|four|that)|each|the (?:two|three|lot)(?: of them)?)\b"
    r"(?:\s+(?:of\s+)?(?:them|those|these))?[\s,]*(?:(?:please|pls)[\s,]*)?(?:can|could|should|must|needs? to|has to|"
    r"have to|may|to)?\s*(?:be\s+)?(?:go|gone|deleted|removed|erased|wiped|forgotten|binned|scrapped)\b",
    r"^(?:\W*\w+,\s*)?(?P<t>.+?)\s+(?:is|are)\s+(?:none of your business|not your business|nobody's business|"
    r"no one's business|no-one's business|private|personal|"
    r"sensitive)\b",
)]
# Patterns after which the target follows: (pattern, priority).
_AFTER = [(re.compile(p, _I), rank) for p, rank in (
    (r"\b(?:rather|want|wish|like|hope|prefer|comfortable with|uneasy about|consent (?:for|to)|need|reason|if|"
     r"knowing|asking that|no need for)\b[^.?!]{0,25}?\b(?:you|u)\b\s*"
     r"(?:(?:to|not|stop|didn'?t|don'?t|'?d|could|would|no longer|also|even|still|really|just|ever|be)\s+){0,3}"
     r"(?:knowing|know|remembering|"
     r"remember|keeping|keep|storing|store|having|have|retain|retaining|hold(?:ing)? on ?to|forgot|forget|deleted|"
     r"delete|unlearn)\b(?:\s+hold\s+of\b)?(?:\s+(?:about|anything about))?\s*", 0),
    (r"\b(?:you|u)\s+(?:shouldn'?t|should not|don'?t need to|no longer need to|don'?t need|do not need|needn'?t|"
     r"need not|don'?t have to|no longer have to)\s+"
     r"(?:be\s+)?(?:(?:know|knowing|keeping|keep|remember|store|storing|have|carry|carrying)\s+)?", 0),
    (r"\b(?:pretend|act (?:as if|like)|forget|regret|wish|shouldn'?t have|should not have|never should have|"
     r"oughtn'?t (?:to )?have|ought not (?:to )?have|"
     r"let'?s pretend|undo|why|second thoughts)\b[^.?!,]{0,25}?\b(?:told you|tell(?:ing)? you|mention(?:ed|ing)?|"
     r"said|say(?:ing)?|shar(?:ed|ing)|hear(?:d)?(?: about)?|me telling you|typed|wrote|pasted|posted|entered|gave you|"
     r"given you|give you)"
     r"\b\s*(?:(?:about|anything about|that(?!\s*\W)|with you)\s+)?", 0),
    # A rule for the future: "(from now on) you don't know about the jobs I do off the books".
    (r"^\W*(?:(?:and|so|ok|okay)\s+)?(?:you|u)\s+(?:don'?t|do not|no longer|never|won'?t)\s+(?:know|remember|recall|"
     r"keep|have|hear)\s+(?:about\s+|anything about\s+|of\s+)?", 0),
    (r"\b(?:take|taking)\s+back\s+what i (?:said|told you|mentioned)\s+(?:about\s+)?", 0),
    (rf"\b(?:stop|stopping|quit|quitting|don'?t|do not|no longer|never|cease|not to|(?:mind|consider|try)\s+not|"
     # "the loan from Sam is paid back, so no need to remember it", "there's no reason to keep that"
     rf"no (?:real\s+|more\s+)?(?:need|reason) to|(?:don'?t|do not|doesn'?t) need to|needn'?t|"
     rf"(?:you|u)\s+(?:\w+ly\s+)?not|(?:you|u)\s+(?:can|could)\s*not)\s+"
     rf"(?:{_KEEPING})\b\s*", 0),
    (r"\bno (?:record|trace|memory|note)s? of\s+", 0),
    # "my daughter's allergy info - I'd rather that wasn't stored": the target came before.
    (r"\b(?:rather|prefer)\s+(?:that|it|this)\s+(?:was\s+not|wasn'?t|weren'?t|isn'?t|not be|not being)\s+"
     r"(?:stored|kept|saved|remembered|recorded|held)\b", 0),
    (r"\b(?:clean slate|slate clean)\s+(?:on|about|regarding|with)\s+", 0),
    # "the entry that has me on metformin, can you take it out?": the pronoun taken out stands for what came before.
    (r"\b(?:take|taking|get|getting|cut|cutting|strike|striking)\s+(?:it|that|this|them|those)\s+(?:out|off)\b"
     r"(?!\s+(?:of|from)\s+(?:the\s+|my\s+)?(?:oven|car|fridge|freezer|bank|account|wallet|drawer|box|bag))\s*", 0),
    (rf"\b(?:{_VERB})\b(?:\s+(?:out|off|away|up|about)\b)?\s*", 1),
)]

_EMOJI = r"\U0001F300-\U0001FAFF\u2600-\u27BF"  # the emoji and symbol blocks, for a character class
# Laughter and emoji end a thought as a full stop does ("the bi thing lol my mum ...", "my cuz 😭 i aint ...").
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)|\s+[-\u2013\u2014]+\s+|\.\.\.|\s+(?:lol|lmao|haha+|rofl)\b|"
                           rf"\s*[{_EMOJI}]+")
_REMARK = re.compile(
    r"^(?:that|it|this|these|those|i|you|u|please|pls|thanks|thank|seriously|ok|okay|lol|and|so|but|sorry|also|"
    r"just|no|not|never|nobody|hey|wait|actually|can|could|would|will|do|don't|if|because|since|otherwise)\b|"
    r"\b(?:i|i'm|i've|i'd|me|my|you|your|them|please|thanks|forget|remember|delete|erase|private|personal|"
    r"sensitive|would|wouldn't|won't|want|wants|told|knows|already|everyone|everybody|anyone|himself|herself|"
    r"themselves)\b|\?$", _I)
_THIRD_PERSON_REMARK = (r"(?:he|she|they)(?:'d|'s|'re|'ll|'ve|\s+(?:would|will|wo|is|was|are|were|has|had|does|"
                        r"doesn'?t|did|didn'?t|can|can'?t|could|couldn'?t|wants?|needs?|hates?|says?|said|thinks?|"
                        r"knows?|feels?|told|asked|begged|made|swore|trusts?|trusted|never|already|still|just|"
                        r"really|finally))\b")
# How someone else's word on the thing is reported: "my lawyer said ...", "my grandson tells me ...".
_REPORTED = r"said|says|told me|tells me|warned|advised"
_COMMA_TAIL = re.compile(
    rf",\s*(?:it'?s|it was|that'?s|that was|this is|i\b|i'm|i'd|because|since|as\b|cause|cuz|thanks|thank you|thx|"
    rf"please|pls|ok\b|okay|would you|will you|can you|could you|if you|when you|now\b|for real|seriously|just|"
    rf"if that'?s|if possible|no questions|as discussed|thanks in advance|no need|(?:i\s+)?don'?t want|do not want|"
    rf"for (?:\w+\s+)?reasons?\b|though\b|although\b|even though\b|"
    # what someone said of it: "juliana taking enzo, lawyer said dont talk about it" (not ", what she said about me")
    rf"(?!(?:what|how|why|when|where|who|which|that|everything|anything|all)\b)[\w'-]+(?:\s+[\w'-]+)?\s+"
    rf"(?:{_REPORTED})\b|"
    rf"sorry\b|"
    # a remark about someone: "Declan's Parkinson's, he'd hate anyone knowing", "her endometriosis, she doesn't ..."
    rf"{_THIRD_PERSON_REMARK}|"
    rf"(?:and\s+)?(?:please\s+)?(?:{_VERB}|don'?t (?:keep|remember|put|store|save|record)|"
    rf"do not (?:keep|put|store|save|record))\b)", _I)
_PLACE_TAIL = re.compile(
    rf"\s+(?:from|out of|off|in|on|into|down)\s+(?:(?:your|you'?re|the|my)\s+)?(?:{_MEMORY_PLACE}|"
    rf"(?:what|whatever|everything|anything) (?:you|u) (?:know|store|keep|have|hold|save|remember)|"
    rf"what you have|(?:your|ur)\s+(?:side|end))\b.*$", _I)
# "... my ex Marco don't keep it": the request said again at the end, without a comma.
_VERB_TAIL = re.compile(rf"\s+(?:and\s+)?(?:please\s+)?(?:{_VERB}|don'?t keep|don'?t remember|do not keep)\s+"
                        r"(?:it|that|this|them|all of it)\b.*$", _I)
_TAIL = re.compile(
    r"(?:\s+|^)(?:on file|in memory|for good|forever|completely|entirely|permanently|right now|right away|for now|"
    r"for the moment|for the time being|now|asap|"
    r"immediately|please|pls|thanks|thank you|ty|thx|cheers|for me|again|too|as well|if you can|when you get a chance|"
    r"i mean it|lol|lmao|haha+|yeah|yea|x+|xoxo|whatsoever|at all|in here|on here|on record|specifically|in particular|"
    r"would you|will you|ok|okay|with you|as per .*|under gdpr|already|altogether|if that'?s ok(?:ay)?|if possible|"
    r"no questions asked|straight away|as discussed|for real|deleted|erased|removed|wiped|gone|forgotten|purged|"
    r"saved|stored|kept|sitting there|around)$", _I)
# "... anymore" ends the request, unless the target itself is negative ("my sister and I don't speak anymore").
_ANYMORE = re.compile(r"^(?!.*\b(?:not|no longer|never)\b|.*n't\b)(.*?)\s+any ?more$", _I)
_DERIVED = (r"notes?|entry|entries|records?|summary|summaries|memory|memories|profile(?:\s+(?:bit|entry|line|part))?|"
            r"file|takeaway|line|fact|conclusion|inference|write-?up|log")
_LEADS = [re.compile(p, _I) for p in (
    r"^(?:that|about|of|on|regarding|re:?|to do with|related to|concerning|both|either)\s+",
    r"^(?:(?:all|any|every|each|some)\s+)?(?:the\s+|of the\s+)?(?:facts?|info|information|details|data|stuff|things?|"
    r"bits?|parts?|notes?|mentions?|records?|traces?|references?|memor(?:y|ies))\s+(?:(?:i (?:said|told you|"
    r"mentioned|gave you)\s+)?(?:about|on|of|to|regarding|related to|to do with|concerning|that)\s+|where i (?:said|"
    r"mentioned|talked about)\s+(?:that\s+)?)",
    r"^(?:the\s+)?(?:part|bit) of (?:our|the) (?:chat|conversation)s? (?:about|where i (?:said|mentioned|talked "
    r"about))\s+",
    r"^(?:everything|anything|all|all the stuff|whatever|stuff)\s+(?:(?:you know|i (?:just )?(?:said|told you|"
    r"mentioned|shared|wrote))\s+)?(?:about|on|of|regarding|related to|to do with)\s+",
    r"^(?:what|whatever|everything|anything|all|things)\s+(?:i|i've|i have)\s+(?:ever\s+)?(?:said|told you|"
    r"mentioned|shared|wrote|typed|talked about)\s*(?:about|regarding|on|that)?\s+",
    r"^(?:what|whatever|everything|anything|all)\s+(?:you|u)\s+(?:know|have|remember|stored?|keep)\s*(?:about|on|"
    r"regarding|of)?\s+",
    r"^(?:all |the |any |every |each |my |our )?(?:earlier |previous |last |old )?(?:messages?|chats?|"
    r"conversations?)\s+(?:about|where (?:i )?(?:said|mentioned|talked about)|that mentions?|which mentions?|"
    r"in which i (?:said|mentioned))\s*(?:that\s+)?",
    r"^(?:(?:that|the|this)\s+)?(?:thing|bit|part|stuff|story|matter|business|situation|news)\s+(?:i (?:said|told "
    r"you|mentioned)\s+|"
    r"from (?:before|earlier)\s+)?"
    r"(?:about|on|regarding)\s+",
    r"^your (?:memor(?:y|ies)|notes|records?|files?|info|data)\s+(?:of|about|on|regarding)\s+",
    r"^(?:a|any|all|no)\s+(?:records?|traces?|notes?|mentions?|memory)\s+of\s+",
    r"^(?:(?:earlier|before|previously|last time|yesterday),?\s+)?(?:i (?:ever |once )?|that i )?(?:said|mentioned|"
    r"told you)(?:\s+about)?\s+(?:that\s+)?",
    r"^(?:(?:remember|you know) (?:when|how)|why did) i (?:ever )?(?:told you|tell you|said|say|mentioned|mention)"
    r"(?:\s+about)?\s+(?:that\s+)?",
    r"^(?:me telling you|the fact)\s+(?:that\s+)?",
    r"^(?:something|anything)(?:\s+(?:dark|private|personal|sensitive|embarrassing|important|else))?\s+(?:about|"
    r"regarding|on)\s+",
    r"^(?:(?:earlier|before|previously),?\s+)?i (?:just |once )?(?:wrote|typed|pasted|gave you|shared|posted|entered)"
    r"\s+",
    # What the assistant made of it, named instead of the thing: "the note you made about me looking for another
    # job", "the profile entry that has me on metformin", "whatever you concluded about me hiding money".
    rf"^(?:the|that|this|those|these|your|any|my)?\s*(?:profile\s+|memory\s+|summary\s+)?(?:{_DERIVED})\s+"
    r"(?:(?:that\s+|which\s+)?(?:you|u)\s*(?:'ve|have|'d|had)?\s*(?:got\s+)?(?:made|make|wrote|written|took|taken|"
    r"kept|keep|got|saved|stored|put together|jotted|filed|noted|logged|recorded)\s+(?:down\s+)?)?"
    r"(?:(?:on|about|of|regarding|concerning)\s+(?:me\s+)?(?:about\s+)?|(?:that|which)\s+(?:has|says|shows|lists|"
    r"puts|mentions|records|notes)\s+(?:(?:me|i'm|i am)\s+(?:as\s+|down as\s+|down for\s+|on\s+)?)?(?:that\s+)?)",
    r"^(?:what|whatever|everything|anything|all|the things?|stuff)\s+(?:that\s+)?(?:you|u)\s*(?:'ve|have|'d|had)?\s*"
    r"(?:concluded|figured out|worked out|inferred|deduced|put together|pieced together|learnt|learned|gathered|"
    r"guessed|assumed|made of|took away|noted|filed|worked out)\s+(?:about|from|on|regarding|re)\s+(?:me\s+)?",
)]
_HEAD = re.compile(
    r"^(?:my|his|her|their|our|the|that|this|those|these|where|what|how|when|why|whether|everything|anything|all|any|"
    r"i|i'm|i've|i'd|i'll|i was|we|he|she|they)\b", _I)
_COMMA_NOT_HEAD = re.compile(r"^(?:which|who|whom|whose|where (?!i\b)|so|but|the one|the ones)\b", _I)
# Typed in a hurry "an" is "and" before what no article comes before: "the hart thing an my wifes joints".
_SEPARATOR = re.compile(r"(\s*,\s*(?:(?:and|&|plus|n|or)(?:\s+also)?\s+)?|\s+(?:and(?:\s+(?:also|oh|wait|like))*|or|"
                        r"nor|&|plus|"
                        r"as well as|along with|together with|n|'n'|y|et|und|an(?=\s+(?:my|the|that|this|his|her|"
                        r"their|our|me|also|allso)\b))\s+)", _I)
# After "and" (not a bare comma), a name, an abbreviation, someone's thing or another language's "my" or "the"
# starts a thing of its own too ("my TFN and Medicare number", "my hepatitis and about Hung stealing", "mon SIN et
# mon numéro RAMQ"); so does, after a comma, someone's thing ("the biopsy, Mum's Parkinson's and the IVF").
_AND_HEAD = re.compile(r"^(?:about|also|allso|both|either|[A-Z][\w.-]*|\w+'s|mon|ma|mes|le|la|les|du|des|el|los|las|"
                       r"del|mi|mis|il|lo|mein|meine|meinen|den|die|das|meu|minha|"
                       # what someone does: "the secret savings and me thinking of leaving", "his stroke and him
                       # wanting me to move in"
                       r"(?:me|him|her|them)\s+[a-z]+(?:ing|in)(?=\s))\b")
_COMMA_HEAD = re.compile(r"^[A-Z]?\w+'s\b")
_JOINED_LEAD = re.compile(r"^(?:about|also|allso)\s+", _I)
# Words that explain a request rather than name its target ("I said too much", "that was private").
_REASON = re.compile(r"^(?:that|it|this|it's|that's|there|can|could|would|will|please|i'?d|i would|i want|i need|"
                     r"i think|i feel|i should|i guess|i know|i trust|i hope|"
                     r"let'?s|go ahead|start|mind|is there|is it|hey|on second thought)\b|\byou\b|"
                     r"^(?:for\s+)?(?:\w+\s+)?reasons?(?:\s+of\s+\w+(?:\s+\w+)?)?$|\b(?:said|"
                     r"shared|overshared|told|typed|regret|"
                     r"comfortable|happier|safer|calmer|relieved|chatting|joking|kidding|venting|rambling|mistake|"
                     r"private|personal|sensitive|embarrassing|business|privacy|careful|idea|"
                     r"trust|relevant|out of date|too much|thinking|oversharing|scared|afraid|worried|nervous|anxious|"
                     r"ashamed|embarrassed|awkward|uncomfortable|foolish|stupid|silly|unwise|oughtn'?t|"
                     # what someone would do if they knew: "he'd hate me for telling", "she'd kill me"
                     r"(?:hate|kill|murder) me|be (?:furious|livid|upset|mad|angry)|never forgive|find out|"
                     r"jumped the gun|for telling)\b", _I)
# Words that only voice a feeling or clear the throat, in English and in the languages people mix into it: "ugh",
# "omg", "lol", "ahh wait", "sjoe", "nossa", "wallah", "aiyo".
_INTERJECTION = re.compile(r"^(?:\W*(?:ok|okay|so|hey|hi|hello|hiya|greetings|good (?:day|morning|afternoon|evening)|"
                           r"um+|uh+|er+m*|right|alright|well|look|wait|actually|honestly|yeah|yea|yep|yup|"
                           r"oh+|also|(?:my\s+)?dear(?:\s+\w+)?|oh dear|oh no|oh god|oh man|"
                           r"on reflection|on second thoughts?|in hindsight|frankly|to be honest|thinking about it|"
                           r"ugh+|argh+|oops|whoops|hm+|damn|dang|sorry|omg|omfg|lol|lmao|rofl|ha(?:ha)+|he(?:he)+|"
                           r"ja(?:ja)+|a+h+|o+f+|u+f+|sigh|jeez|geez|gosh|welp|meh|yikes|whoa|wow|bro|dude|yaar|arre|"
                           r"aiyo+|aiyah?|eish|sjoe|eii+|wallah|yalla|nossa|[oó]rale|g[uü]ey|bon|alors|ay+|ai(?=\W)|"
                           r"aish|ayy+|oy|oi|och|jaysus|ffs|smh|tbh|ngl|fr|bruh|man(?=\W)|"
                           # and who it is said to: "habibi, ...", "che, ...", "cara, ..."
                           r"habibi|habibti|mate|babe|hun|buddy|bhai|bhaiya|yaar|che|cara|mano|wey|amigo|amiga|"
                           r"jaan|abeg|kuya)"
                           r"\b[\s,.:!-]*)+", _I)


_ACRONYM = re.compile(r"\b[A-Z]{2,}\b")
# "my id nr", "the id card": an identity document, not "I'd".
_ID_NOUN = re.compile(r"(?<=\b(?:my|ur|an)\s)id\b|(?<=\b(?:the|her|his|our)\s)id\b|(?<=\byour\s)id\b|"
                      r"(?<=\btheir\s)id\b|\bid(?=\s+(?:number|nr|no|num|card|cards|document|docs?)\b)|"
                      r"\bid(?=\s+(?:is\s+|are\s+)?(?:fine|ok|okay|keep)\b)", _I)
_KIND_OF_ID = re.compile(r"\b(tax|steuer|student|voter|national|photo|staff|employee|work|user|login|apple)\s+id\b", _I)
_POSSESSIVE_CUZ = re.compile(r"\b(my|his|her|our|their|your|ur)\s+cuz\b", _I)


def _respell(text: str) -> str:
    """Shorthand and typos spelt out as ``respell`` does, except where the user plainly meant the word they wrote:
    acronyms ("my tax ID", "the ED stuff") and "my cuz" (a cousin, not "because"); "bout" is "about"."""
    if sum(c.isupper() for c in text) > sum(c.islower() for c in text):  # shouting: no word is an acronym
        return re.sub(r"\bbout\b", "about", respell(text), flags=_I)
    text = _KIND_OF_ID.sub(r"\1 ID", _ID_NOUN.sub("ID", text))
    acronyms = iter(_ACRONYM.findall(text))
    text = _ACRONYM.sub("\x00", _POSSESSIVE_CUZ.sub(r"\1 cousin", text))
    text = re.sub(r"\bbout\b", "about", respell(text))
    return re.sub("\x00", lambda _: next(acronyms), text)


# Sounds that only fill a pause in dictated speech ("the loan and uh the car one", "um the netflix password"): no part
# of what is named, and they keep "and" from parting two things. Another language's word spelt the same stays
# (Portuguese "um").
_HESITATION = re.compile(r"(?:\s*,)?\s*(?<![\w'-])(?:u+h+m*|u+m+|e+r+m+|h+m+)(?![\w'-])(?:\s*,)?(?:\s+|$)", _I)


# Dictated punctuation, spoken as words into a text that has none of its own: "the cash stash question mark yeah
# delete that", "my passport number full stop not the other one".
_SPOKEN_MARKS = re.compile(r"\s+(?:(?P<c>comma)|(?P<s>full stop)|(?P<q>question mark)|"
                           r"(?P<e>exclamation (?:mark|point)))(?=\s|$)", _I)


def _spoken_marks_written(text: str) -> str:
    if re.search(r"[.,;:?!]", text):
        return text
    marks = {"c": ",", "s": ".", "q": "?", "e": "!"}
    return _SPOKEN_MARKS.sub(lambda m: next(marks[k] for k, v in m.groupdict().items() if v), text)


def _without_hesitations(text: str) -> str:
    if not _HESITATION.search(text):
        return text
    foreign = foreign_function_words(text)
    return _HESITATION.sub(lambda m: m.group(0) if m.group(0).strip(" ,").lower() in foreign else " ", text).strip()


_QUOTE_PAIRS = {'"': '"', "\u201c": "\u201d", "'": "'", "\u2018": "\u2019"}


def _quote_closes(target: str) -> bool:
    """Does the quote mark opening ``target`` close further on (a quotation, not an apostrophe or a stray mark)?"""
    close = _QUOTE_PAIRS[target[0]]
    if close == "'":  # an apostrophe inside a word ("Mum's") does not close a quotation
        return re.search(r"\w'(?!\w)", target[1:]) is not None
    return close in target[1:]


def _strip_edges(target: str, chars: str) -> str:
    """``target`` stripped of ``chars`` and of quote marks at either end, but a quote that opens or closes a
    quotation still inside the target stays ('"Promise by the Seine" reflects his style' keeps its first quote)."""
    while True:
        before = target
        target = re.sub(r"[.,;:!?]+([\"\u201d])$", r"\1", target.strip(chars))
        if len(target) < 2:
            return target
        first, last = target[0], target[-1]
        if first in _QUOTE_PAIRS and last == _QUOTE_PAIRS[first] and not _quote_closes(target[:-1]):
            target = target[1:-1]  # one quotation: '"my address"' is my address
        elif first in _QUOTE_PAIRS and not _quote_closes(target):
            target = target[1:]
        elif (last == '"' and target.count('"') % 2 == 1) or (last == "\u201d" and "\u201c" not in target) or (
            last in ("'", "\u2019")
        ):
            target = target[:-1]  # a closing mark with no opening one
        if target == before:
            return target


# "it" or "them" as the object of the request, then anything but a verb it is the subject of ("it was my idea").
_PRONOUN_OBJECT = re.compile(
    r"(it|them|all of it|the (?:whole )?lot(?: of it)?)\b(?!'|\s+(?:of\b|is|was|were|are|has|had|have|will|would|can|"
    r"could|do|does|did|might|may|must|should|isn't|wasn't|hasn't|hadn't|doesn't|didn't|won't|wouldn't|can't|couldn't|"
    r"seems?|seemed|being|been|"
    r"\w+ed)\b)\s+\S", _I)


# The pronoun, then what it stands for: "why I said it, about maybe leaving my marriage".
_PRONOUN_SAID = re.compile(r"(?:it|that|this|them)\s*[,:\-\u2013\u2014]\s*(?:about|regarding|re|i mean|namely|"
                           r"the (?:thing|bit|part|stuff) (?:about|with))\s+(?P<t>\S.*)", _I)


# What a request says to keep: "purge the PAN. keep aadhaar for now", "erase the savings figure; the pension
# information may remain", "Dad's stroke stuff can stay", "Mam's cancer you can keep", "the overdraft (not the loan
# one)", "MY recovery, not Kayla's". Only ever a way to leave a statement out of what
# is matched, never a target.
_SPARED_AFTER = re.compile(
    rf"(?:^|[.;,!?:\u2013\u2014{_EMOJI}]\s*|\s-\s|\b(?:but|and|just|though)\s+|"
    # typed or dictated without stops: "scrap the ghana one keep the british one"
    r"(?<!\bnot)(?<!n't)(?<!\bnever)(?<!\bto)(?<!\bstop)(?<!\bi)(?<!\bwe)(?<!\byou)(?<!\bu)(?<!\bthey)(?<!\bcan)"
    r"(?<!\bplease)(?<!\bpls)(?<!\bwho)(?<!\bwhere)(?<!\brather)(?<!'d)(?<!\bwould)"
    r"\s+(?=(?:(?:you|u)\s+(?:can|may)\s+)?keep\s+(?:the|my|mine)\b))"
    r"(?:(?:you|u)\s+(?:can|may|could)\s+|"
    r"(?:feel free to|it's fine to|it's ok(?:ay)? to|ok(?:ay)? to|fine to|please|pls|actually|no|wait)\s+)?"
    r"(?:keep|leave|retain)\s+"
    rf"(?P<x>[^.;,!?\u2013\u2014{_EMOJI}]+)", _I)
_SPARED_BEFORE = re.compile(
    # a name or a number's name may stand bare: "Aadhaar you may keep", "German one you can keep"
    r"(?<!\bnothing about )(?<!\bnothing of )(?P<x>\b(?:(?:the|my|his|her|their|our)\s|[^\W\d_]+'s\s|"
    r"(?-i:[A-Z][\w-]+)(?=\s+(?:one\s+|number\s+|card\s+)?(?:you|u)\s+(?:can|may|could)\s))"
    rf"[^.;,!?\u2013\u2014{_EMOJI}]{{0,60}}?)(?:\s+|,\s*(?=keep\b))"
    r"(?:itself\s+)?(?:(?:may|can|could|should)\s+(?:remain|stay)|(?:is|are)\s+(?:fine|ok|okay|not a problem|"
    r"no problem)|(?:is|are\s+)?whatever(?=\s*(?:[.;,!?]|$))|(?:you|u)\s+(?:can|may|could)\s+(?:keep|hold on to|"
    r"remember)|"
    # the thing first, then "keep" (as many languages put it): "the medicare one keep", "the DBS loan keep lah"
    # (never someone who keeps: "the crypto amount and where I keep it", "the loan, don't keep it")
    r"(?<!\bnot\s)(?<!n't\s)(?<!\bnever\s)(?<!\bto\s)(?<!\bstop\s)(?<!\bi\s)(?<!\bu\s)(?<!\bwe\s)(?<!\byou\s)"
    r"(?<!\bthey\s)(?<!\bhe\s)(?<!\bshe\s)(?<!\bwho\s)(?<!\bwhere\s)(?<!\bthat\s)(?<!\bwhich\s)(?<!\bcan\s)"
    r"keep(?:\s+(?:it|that|them|this|those))?"
    r"(?:\s+(?:lah|la|leh|na|ha|please|pls|ok|okay|for now|obviously|though))*(?=\s*(?:[.;,!?\u2013\u2014]|$)))"
    r"\b", _I)
# Typed in a hurry, what is kept may stand bare at the start of its clause: "remve adhar. pan keep", "cpf numbr scrap
# it. rg is ok keep", "delet licence numbr. medicare ones fine leave tht", "the krankenkasse numbr delet, steuer id
# fine". Never a pronoun ("it's fine", "i'm ok").
_SPARED_BARE = re.compile(
    r"(?P<x>\b(?!(?:i|i'm|im|we|you|u|it|its|it's|that|thats|that's|this|all|everything|he|she|they|ok|okay)\b)"
    r"[^\W\d_][\w'-]*(?:\s+[\w'-]+){0,2}?)\s+(?:(?:is|are|'s)\s+)?(?:(?:fine|ok|okay|alright)(?:\s+(?:to\s+)?"
    r"(?:keep|leave)(?:\s+(?:it|that|tht|them|this))?)?|keep(?:\s+(?:it|that|tht|them|this))?)(?=\s*(?:[.;,!?]|$))",
    _I)
_NOT_A_SPARE = re.compile(r"^(?:it|that|this|them|those|these|everything|all|the rest|anything|nothing|none|me|"
                          r"track|tabs|in mind|a record|records|notes|quiet|mum(?!'))\b|\b(?:out of|off|away|from your|"
                          r"from whatever|private|secret|to yourself|between us|for now on|alive)\b", _I)
# Where a clause saying what to keep may begin: "... -- the divorce itself can stay", not "nothing about my papers
# with the immigration should stay".
_CLAUSE_OPENS = re.compile(rf"(?:^|[.;,!?:\u2013\u2014{_EMOJI}]\s*|\s-\s|"
                           r"\b(?:but|and|just|though)\s+)$", _I)
_NOT_MEANT_INSIDE = re.compile(r"^\W*(?:but\s+)?(?:not|except|but not|apart from|other than|besides|excluding)\s+",
                               _I)


# Dictated without stops, which of two look-alikes is kept: "wipe the tee eff en the medicare one is fine", "erase
# that one the american one you can keep". Not after a word that makes it part of the clause before ("that", "if").
_SPARED_ONE = re.compile(r"(?<![\w'-])(?P<x>(?:the|my)\s+(?:[\w'-]+\s+){0,2}?ones?)\s+(?:(?:is|are|'s)\s+"
                         r"(?:fine|ok|okay|alright|not a problem|no problem)|"
                         r"(?:(?:(?:you|u)\s+(?:can|may|could)\s+)?(?:keep|leave)|(?:can|may)\s+stay)"
                         r"(?:\s+(?:it|that|this))?(?=\s*(?:[.;,!?]|$)))\b", _I)
_SUBORDINATE_END = re.compile(r"\b(?:that|if|because|since|when|whether|where|which|who|of|about)\s+$", _I)


def _spare_start(target: str) -> int | None:
    """Where, after the start of ``target``, a clause saying what to keep begins ("the PAN. keep aadhaar")."""
    starts = [m.start() for m in _SPARED_AFTER.finditer(target)
              if m.start() > 0 and not _NOT_A_SPARE.search(m.group("x"))]
    starts += [m.start("x") for m in _spared_before(target)
               if m.start("x") > 0 and _CLAUSE_OPENS.search(target[: m.start("x")])]
    starts += [m.start("x") for m in _SPARED_ONE.finditer(target)
               if m.start("x") > 0 and not _SUBORDINATE_END.search(target[: m.start("x")])]
    return min(starts) if starts else None


_VERB_INSIDE = re.compile(rf"\b(?:{_VERB})\b", _I)


def _spared_before(text: str) -> list[re.Match]:
    """The clauses of ``text`` naming what to keep before saying so ("the medicare one keep", "rg is ok")."""
    # never across the request's own verb ("the brazilian tax number erase that one the american one you can keep")
    found = [m for m in _SPARED_BEFORE.finditer(text) if not _VERB_INSIDE.search(m.group("x"))]
    return found + [m for m in _SPARED_BARE.finditer(text) if not any(f.start("x") <= m.start("x") < f.end()
                                                                      for f in found)]


# When or where something was said, not what it was: "what I admitted last Friday night", "the number I sent when we
# were doing the visa checklist", "the bit right at the start of last week's chat about ...". A statement holds what
# was said; the occasion only pulls the target towards other statements ("visa").
_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_OCCASION = re.compile(
    r"\s*,?\s*\b(?:(?:when|while)\s+(?:we|i|you)\s+(?:were|was)\s+[\w'-]+ing\b[^,.;:!?()\u2013\u2014]*"
    r"|(?:right\s+)?(?:at\s+)?the\s+(?:start|end|beginning)\s+of\s+(?:our|the|that|last\s+week's|yesterday's)\s+"
    r"(?:chat|conversation|session)(?:\s+we\s+had)?"
    r"|(?:from|in|during)\s+(?:the|our|that)\s+(?:chat|conversation|session)\s+(?:we\s+had\s+)?(?:on\s+|last\s+|"
    rf"this\s+)?(?:{_DAY}|yesterday|last\s+week)"
    rf"|(?:from\s+)?(?:(?:really\s+)?late\s+|early\s+)?(?:on\s+|last\s+|this\s+past\s+){_DAY}"
    rf"(?!s\b|\s+(?:nights|mornings|evenings|afternoons)\b)(?:\s+(?:night|morning|evening|afternoon|arvo))?"
    rf"(?:\s+(?:after|before)\s+my\s+\w+)?"
    rf"|(?:from\s+)?(?:(?:really\s+)?late\s+|early\s+)?{_DAY}\s+(?:night|morning|evening|afternoon|arvo)"
    r"|(?:from\s+)?(?:(?:really\s+)?late\s+|early\s+)?(?:last|yesterday)\s+(?:night|morning|evening|afternoon)"
    r"|(?:in\s+the|this|yesterday)\s+morning|earlier\s+today|late\s+on\s+christmas\s+eve)\b", _I)


def _drop_interjections(target: str) -> str:
    """``target`` without the interjections it opens with ("lol ok my secret credit card debt", "ahh wait the RPG
    sequel thing"), when punctuation or a noun phrase shows where they end ("so much debt" keeps its "so")."""
    found = _INTERJECTION.match(target)
    if not found:
        return target
    rest = target[found.end():]
    return rest if not rest.strip() or re.search(r"[,.:!-]\s*$", found.group(0)) or _HEAD.match(rest) else target


_ABBREVIATED = re.compile(r"\b(?:no|nr|num|acct|acc|ref|tel|approx|dept|st|mr|mrs|ms|dr|jr|sr|etc|vs|incl)$", _I)


# "the addy thing pls thats a legal liability": a thing named by a word or two, then a remark about it with no stop
# between (not "the health thing I mentioned ...", "the legal thing my ex got on me").
_THING_THEN_REMARK = re.compile(r"^(\W*(?:the|that|this|my)\s+\S+(?:\s+\S+)?\s+(?:thing|stuff|bit|business|situation|"
                                r"story|matter))\s+(?:please|pls|plz|as|cause|because|since|cuz|coz|lol|lmao|ok|"
                                r"okay)\b.*$", _I)


# A reason typed without a comma: "remove all 3 incase he finds the fone" (not "the cash I keep in case of fire").
_IN_CASE = re.compile(r"\s+(?:just\s+)?(?:(?:in case|incase)\s+(?!of\b)|"
                      # "... before ffion ever sees it", "... so my boss never reads it": what is feared, no target
                      r"(?:before|until|till|so)\s+(?=(?:he|she|they|someone|anyone|somebody|anybody|my\s+\w+|"
                      r"(?!i\b|you\b|we\b)[a-z][\w-]*)\s+(?:(?:ever|even|never|accidentally|actually)\s+)?"
                      r"(?:sees?|reads?|finds?|checks?|looks?|hears?|notices?|opens?|borrows?|gets? hold)\b))", _I)


def _clean(target: str) -> str:
    target = _drop_interjections(target.strip())
    target = re.sub(r"\s{2,}", " ", _OCCASION.sub("", target)).strip()
    cut = _spare_start(target)
    target = target[:cut] if cut else target
    if re.match(r"[.!?]", target):  # "I'd rather that wasn't stored. Gwenllian is ...": nothing after the anchor
        return ""
    said = _PRONOUN_SAID.match(target)
    target = said.group("t") if said else target
    pronoun = re.match(r"(it|that|this|them|all of it|anywhere|nowhere|everywhere)\s*(?:(?:please|pls|now|too|"
                       r"as well)\s*)?"
                       r"(?:[,;:\-\u2013\u2014]|[.!?](?:\s|$))", target, _I)
    if pronoun:  # "scratch that, don't rember it", "not hold onto it. Yours, W.": the pronoun is the whole target
        return pronoun.group(1)
    pronoun = _PRONOUN_OBJECT.match(target)
    if pronoun:  # "wipe it buddy", "delete it from whatever you've got": what follows the pronoun is no target
        return pronoun.group(1)
    for cut in _SENTENCE_END.finditer(target):
        # The fact may run on ("... Le Petit Sultan. These books reflect ..."); a reason or a remark ends it.
        rest = target[cut.end():].strip()
        if cut.group(0).strip() == "." and _ABBREVIATED.search(target[: cut.start()]) and re.match(r"[a-z]", rest):
            continue  # "my ID no. and KRA PIN": an abbreviation's full stop
        if cut.group(0).strip() != "." or not rest or _REMARK.search(rest):
            target = target[: cut.start()]
            break
    for lead in _LEADS[1:]:  # "Before, I told you something ...": the lead goes before a comma can end the target
        target = lead.sub("", target)
    cut = _COMMA_TAIL.search(target) or _IN_CASE.search(target)
    if cut:
        target = target[: cut.start()]
    target = _THING_THEN_REMARK.sub(r"\1", target)
    target = _VERB_TAIL.sub("", _PLACE_TAIL.sub("", target))
    for _ in range(4):
        before = target
        target = _TAIL.sub("", _strip_edges(target.strip(), " \t,;:!?.()")).strip()
        target = _ANYMORE.sub(r"\1", target)
        for lead in _LEADS:
            target = lead.sub("", target)
        if target == before:
            break
    return _strip_edges(target, " \t,;:!?.()")


# Words that only count what was named elsewhere in the request: "Joost's job loss and my sister's rehab: neither
# needs to stay", "both of them", "all three".
_ONLY_COUNTS = re.compile(
    r"^(?:neither|either|none|both|each|all|the|those|these|them)(?:\s+(?:of\s+)?(?:them|those|these|it|two|three|four|"
    r"2|3|4|both|things?|ones?|bits?))*(?:\s+(?:needs?|should|has|have|is|are|must|can|may|stays?|goes|go|gone|"
    r"too|as well)\b.*)?$", _I)


def is_vague(target: str) -> bool:
    """True when the request names nothing in particular ("forget it", "delete everything", "both of them")."""
    target = target.strip().lower()
    return target in VAGUE or (bool(_ONLY_COUNTS.match(target)) and target not in ("the", "all the"))


# Dictated or typed without stops, what is not meant closes the request: "erase the money to my mum and dad in accra
# not the child support thing", "get rid of that not the mortgage", "wipe that please not liam". What follows it
# often names the thing meant again ("not the old arrest the upcoming one", "not the pan just the aadhaar one"): that
# part (``r``) stays. Never a "not" that denies something ("I'm not the father", "my ex is not the one who called"),
# corrects ("no wait not the car one"), or gives a reason ("not my story to tell").
_PREPOSITIONS = ("from", "of", "in", "at", "on", "to", "for", "with", "about", "by", "into", "off", "over", "near",
                 "after", "before", "during", "since", "until", "under", "behind", "between", "without", "through",
                 "against", "like")
_NOT_MEANT_LAST = re.compile(
    r"(?<![,;(\u2013\u2014-])(?<![,;]\s)"
    + "".join(rf"(?<!\b{word})" for word in (
        "am", "is", "are", "was", "were", "be", "been", "being", "do", "does", "did", "can", "could", "would",
        "should", "will", "shall", "may", "might", "must", "has", "have", "had", "im", "its", "thats", "whats", "or",
        "if", "why", "whether", "to", "of", "about", "but", "and", "just", "really", "maybe", "probably", "still",
        "no", "wait", "sorry", "mean", "oops", "actually"))
    + r"(?<!')(?<!'m)(?<!'s)(?<!'re)"
    r"\s+not\s+(?!(?:my|his|her|their|our)\s+[\w'-]+\s+to\s)"
    r"(?P<x>(?:the|my|his|her|their|our|those|these)\s[^,.;:!?()]*?|"
    # a bare name only after the request's own last words ("delete that one not instagram")
    + "(?:" + "|".join(f"(?<=\\b{word} not )" for word in ("that", "this", "them", "one", "it", "pls", "please"))
    + r")[^\W\d_][\w'-]*)"
    r"(?P<r>\s+(?:just|only|i mean|yeah)\b[^,.;:!?()]*|"
    + "".join(rf"(?<!\b{word})" for word in _PREPOSITIONS)
    + r"\s+(?:the|my)\s[^,.;:!?()]*)?(?=\s*(?:[.!?]|$))", _I)


def _without_not_meant_last(text: str) -> str:
    """``text`` without what its last words say is not meant (what names the thing meant again stays)."""
    return _NOT_MEANT_LAST.sub(lambda m: m.group("r") or "", text)


# An aside that says what is not meant: "the job stuff (not the pay, the other thing)".
# Or after a comma: "the overdraft thing, not the loan one", "my address, but not my phone number".
_NOT_MEANT = re.compile(r"\s*\((?:not|except|but not|apart from|other than|besides|excluding)\b[^()]*\)?|"
                        r"(?:\s*[,;\u2013\u2014]|\s-)\s*(?:but\s+)?(?:not|except|apart from|other than)\s+"
                        r"(?:the|my|his|her|their|our|that|those|these)\s[^,.;!?()]*|"
                        r"(?:\s*[,;\u2013\u2014]|\s-|(?<=[.!?]))\s*(?:but\s+)?(?:not|except|apart from|other than)\s+"
                        r"[^\W\d_]+'s\b"
                        r"[^,.;!?()\u2013\u2014]*", _I)


# "these: ...", "the following: ...", "three things: ...": a heading that only announces a list.
_LIST_HEADING = re.compile(r"^(?P<h>[^:]{1,40}?):\s+(?=\S)")
_COUNT_WORDS = re.compile(r"\b(?:one|two|three|four|five|couple|few|several|following|items?|bits?|points?|ones)\b", _I)
_LIST_ITEM_WORDS = 5
_NOT_AN_ITEM = re.compile(r"^\W*(?:i|i'm|i've|i'd|you|u|it|it's|that|that's|this|so|but|because|since|cause|as|if|"
                          r"which|who|whose|where|when|the one|the ones|please|pls|thanks|thank)\b", _I)


def _is_list(pieces: list[str], separators: list[str]) -> bool:
    """Are ``pieces`` the short items of one list ("Mārtiņš, Edgars, and Crete", "PAN, Aadhaar", "my PESEL, my
    address, my salary"), so that a bare comma between them separates things too? Not an apposition ("my ex, Tom")
    or a clause ("lactose intolerant, so ...")."""
    if len(pieces) < 2 or not all("," in s or re.search(r"\band\b|&", s, _I) for s in separators):
        return False
    if any(len(p.split()) > _LIST_ITEM_WORDS or not p.strip() or _NOT_AN_ITEM.match(p) or _is_reason(p.strip())
           for p in pieces):
        return False
    if len(pieces) >= 3:
        return True
    # Two: only names or abbreviations, neither with a determiner ("PAN, Aadhaar"; not "my ex, Tom").
    return all(re.match(r"\W*[A-Z]", p) and not _HEAD.match(p.strip()) for p in pieces) and "," in separators[0]


# Things counted, then spelt out after a comma: "my two loans, the one from Yaw and the momo one".
_COUNTED_HEADING = re.compile(
    r"^(?:(?:my|the|these|those|both)\s+)?(?:two|three|four|2|3|4)\s+[\w'-]+s\s*[,:]\s*(?=\S)", _I)


def split_targets(target: str) -> list[str]:
    """One entry per thing named: split on "and"/commas only where the next part starts a noun phrase or clause,
    and never inside brackets ("my meds (sertraline, 50mg)")."""
    heading = _LIST_HEADING.match(target)
    if heading and not request_gist(_COUNT_WORDS.sub("", heading.group("h"))):
        target = target[heading.end():]  # "these: address, TC number, the Berlin plan"
    counted = _COUNTED_HEADING.match(target)
    if counted and _SEPARATOR.search(target[counted.end():]):
        target = target[counted.end():]  # "my two loans, the one from Yaw and the momo one"
    # A spoken filler between the things is no part of either ("the op in istanbul and uh my health number").
    target = re.sub(r"(?<=\s)(?:uh+|um+|erm|uhm)\b[,\s]+", "", target, flags=_I)
    pieces = _SEPARATOR.split(_NOT_MEANT.sub("", target))
    listed = _is_list(pieces[0::2], pieces[1::2])
    parts = [pieces[0]]
    for separator, piece in zip(pieces[1::2], pieces[2::2], strict=True):
        comma = "," in separator
        bare_comma = comma and not re.search(r"\w", separator)
        # "and also" always adds a thing ("the burnout thing and also like who i vote for").
        starts = listed or re.search(r"\balso\b", separator, _I) or (
            _HEAD.match(piece) and not (comma and _COMMA_NOT_HEAD.match(piece))) or (
            (_COMMA_HEAD if bare_comma else _AND_HEAD).match(piece) and not re.match(r"i\b", piece, _I))
        # "my sister and I don't speak": a short noun phrase joined to "I" is one subject, not two targets.
        joint_subject = re.match(r"i\b(?!'m|'ve|'d|'ll)", piece, _I) and re.search(
            r"(?:^|\b(?:my|his|her|our|their)\s+)[\w']+$", parts[-1], _I
        ) or re.match(r"me\s", piece, _I) and re.search(  # "Jonas and me trying for a baby"
            r"(?:\b(?-i:[A-Z])[\w'-]*|^[\w'-]+|\b(?:my|his|her|our|their)\s+[\w']+)$", parts[-1], _I)
        bracketed = parts[-1].count("(") > parts[-1].count(")")
        if starts and not joint_subject and not bracketed and parts[-1].strip():
            parts.append(_JOINED_LEAD.sub("", piece))
        else:
            parts[-1] += separator + piece
    # A part naming nothing of its own: "how many" of "my evening beers and how many" belongs to the one before;
    # "I don't think I do, actually" is no target.
    merged: list[str] = []
    for part in parts:
        if merged and re.match(rf"\s*{_THIRD_PERSON_REMARK}", part, _I):
            continue  # "his job and he's upset": a remark about someone, no target
        if merged and not request_gist(part):
            if re.match(r"\s*(?:how|why|where|what|when|who)\b", part, _I):
                merged[-1] += " and " + part.strip()
        else:
            merged.append(part)
    out = [_clean(p) for p in merged]
    named = [p for p in out if p and not is_vague(p)]  # "the overdraft thing, the other one"
    found = (named if len(named) < len(out) and named else [p for p in out if p]) or (
        [_clean(target)] if _clean(target) else [])
    # "any of my medical stuff, meaning the blood sugar diagnosis and the anxiety tablets": the summing-up thing is
    # no thing of its own, but what the rest spells out.
    if len(found) >= 3 and _SUMMING_UP.search(found[0]) and _SPELT_OUT_LEAD.match(found[1]):
        found = [_SPELT_OUT_LEAD.sub("", found[1]), *found[2:]]
    return found


_SPELT_OUT_LEAD = re.compile(r"^(?:namely|i mean|meaning|that is|i\.e\.|specifically|including|especially)\b[\s,:]*",
                             _I)


_TOLD_YOU = r"\b(?:told|tell|telling|gave|give|given|giving|showed|shown|sent|asked)\s+(?:you|u)\b"


# "when I told you about the procedure from my college days", "what I confessed about the mistake on the ward".
_TOLD_ABOUT = re.compile(
    r"\b(?:i|having)\s+(?:\w+\s+)?(?:(?:said|told (?:you|u)|mentioned|confessed|admitted|revealed|disclosed|shared|"
    r"wrote|typed|let slip|opened up)\s+(?:to (?:you|u)\s+)?(?:about|regarding|concerning)\s+(?P<t>[^.?!;,]+)|"
    r"(?:mentioned|confessed|admitted|revealed|disclosed|shared|(?:gave|given|sent|showed|shown)\s+(?:you|u))\s+"
    r"(?P<n>(?:the|my|our|that|this)\s+[^.?!;,]+))", _I)
_TOLD_ABOUT_END = re.compile(r"\s+(?:was|were|wasn't|weren't|is|isn't|are|aren't|has|have|had|will|would|should|"
                             r"can|could|and i|but|because|so|since|if|to you)\b.*$", _I)
# What the user says they gave away, in a clause: "it was foolish to give out where I live", "I shouldn't have
# told you how much I earn", "sharing who I'm seeing".
_TOLD_WHAT = re.compile(
    r"\b(?:(?:gave|give|given|giving)\s+(?:out|away)|(?:told|tell|telling)\s+(?:you|u)|(?:shared|share|sharing|"
    r"mentioned|mention|mentioning|revealed|reveal|revealing|disclosed|disclose|disclosing))\s+"
    r"(?P<t>(?:where|how much|how many|how|what|who|whom|when|which)\s+[^.?!;,]+)", _I)
_CLAUSE = re.compile(r"\s*[,;]\s*|\s+(?:but|so|because|cause|cuz|since)\s+", _I)


def _is_reason(text: str) -> bool:
    # "the ID number I gave you", "the personal ID number I typed" name what was told; they are no reason.
    text = re.sub(r"^(\W*(?:the|my|that|this|those|these)\b[^,]*?)\bi\s+(?:typed|sent|pasted|wrote|shared|entered|"
                  r"posted)\b", r"\1", re.sub(_TOLD_YOU, "", text, flags=_I), flags=_I)
    # A feeling word before a noun names a kind of thing ("the personal ID number", "my private account").
    text = re.sub(r"\b(?:personal|private|sensitive|embarrassing)\s+(?!(?:to|for|and|but|so|because|as|though|info|"
                  r"information|stuff|matters?|things?|details?|data|business)\b)(?=[a-z])", "", text, flags=_I)
    return bool(_REASON.search(text))


def _names_something(target: str) -> bool:
    """A short target that names something: not vague, not only asking words, not a reason."""
    return (bool(target) and len(target.split()) <= 16 and not is_vague(target) and bool(request_gist(target))
            and not _is_reason(target))


# A sentence ending on a pronoun for a thing, as a remark about it ("nobody knows about that", "void it"); not a
# summing-up ("me being bi, Camila, all of it") nor a phrase about something in it ("what I dropped on them").
_REMARK_ON_IT = re.compile(r"(?<!\bof )(?<!\bon )\b(?:that|this|it)\W*$", _I)
# What someone else says of it: "my grandson says an old lady must not give this to a computer", "my lawyer
# told me to keep it quiet".
_SOMEONE_SAYS = re.compile(r"^\W*(?:(?:and|but|because|cause|since)\s+)?(?:my|our|the|his|her)\s+"
                           r"(?:(?!(?:i|you|u|we|thing|stuff|bit|part)\b)[\w'-]+\s+){1,2}?"
                           rf"(?:{_REPORTED}|explained|thinks|insists|insisted)\b", _I)
# A few words on how the thing stands now, with no subject of their own: "the money I owed the tax office - paid as
# of yesterday, so ...", "my ex's debt. all sorted now".
_STATE_REMARK = re.compile(r"^\W*(?:(?:all|now|finally|long|since|it'?s|its)\s+)?(?:paid(?:\s+off)?|sorted|settled|"
                           r"done|over|finished|resolved|fixed|cleared|closed|healed|cured|ended|dealt with|"
                           r"taken care of|handled|behind me|water under the bridge)\b(?:\W+\w+){0,4}\W*$", _I)


# What the assistant holds, said before naming what it holds it on: "everything you put together about my parents'
# restaurant going under and the money I borrowed, delete all of it". The thing is what it is about.
_WHAT_YOU_HAVE_ON = re.compile(
    r"^(?:everything|anything|all|whatever|what|the (?:stuff|things|notes?|bits))\s+(?:that\s+)?(?:you|u)"
    r"(?:'ve|\s+have|\s+might have)?\s+(?:\w+\s+){0,2}?(?:on|about|regarding|concerning)\s+(?=\S)", _I)


def _look_back(prefix: str) -> str | None:
    """"my salary? forget it": a noun phrase or fact before the request, never a reason ("that was private, so ...").
    In the nearest sentence that names something, at most three sentences back: what the user says they told
    ("I keep thinking about what I confessed about the mistake on the ward"), else the whole sentence when no part
    of it is a reason, else its nearest clause that is neither a reason nor words to the assistant ("My pseudonym
    is known to almost no one, and I would like that to include you", "I'm not even sure why I said it, about
    maybe leaving my marriage"), with the clause before when that one is only a name ("my ex, Tom")."""
    prefix = re.sub(r"[\s,:;?!.\-\u2013\u2014]*(?:\b(?:so|and|then|please|pls|kindly|just|(?<!right )now|ok|okay|"
                    r"can you|could you|would you|can|could|would|will|i|wait|actually|no|there'?s|there is|"
                    r"(?:be\s+)?so\s+(?:good|kind)\s+as\s+to|(?:be\s+)?(?:good|kind)\s+enough\s+to)\W*)*$", "",
                    prefix, flags=_I)
    sentences = [s for s in re.split(rf"(?:{_SENTENCE_END.pattern}|:\s)", prefix) if s and s.strip()]
    recent = sentences[-3:]
    for place, sentence in reversed(list(enumerate(recent))):
        if _NOT_MEANT_INSIDE.match(sentence):
            continue  # "My own operation - not Ronald's, mine - I'd like that taken out": what is not meant
        if place and re.match(r"\W*(?:if|in case|otherwise|or else|unless)\b", sentence, _I):
            # "The meat from work... if my chef knew I'd be done. Forget about it": what could follow the thing
            # named before (on its own, "if the ring plan is still in your memory, ditch it" names the thing).
            continue
        if place and (_REMARK_ON_IT.search(sentence) or _STATE_REMARK.match(sentence) or
                      _SOMEONE_SAYS.match(sentence)) and not _TOLD_ABOUT.search(sentence):
            # "... the code for my bank card?? nobody should know that, throw it away": a remark about the thing
            # named before it.
            continue
        sentence = re.sub(r"^(?:there (?:is|was|'s)|here'?s)\s+", "", _INTERJECTION.sub("", sentence.strip()), flags=_I)
        sentence = _WHAT_YOU_HAVE_ON.sub("", sentence)
        told = _TOLD_ABOUT.search(sentence) or _TOLD_WHAT.search(sentence)
        if told:  # what the user says they told is named even when they call it private or a mistake
            target = _clean(_TOLD_ABOUT_END.sub("", told.group("t") or told.group("n")))
            if target and len(target.split()) <= 16 and not is_vague(target):
                return target
        whole = _clean(sentence)
        if _names_something(whole) and not _is_reason(sentence):
            return whole
        clauses = [re.sub(r"^(?:but|and|so|because|cause|since)\s+", "", c.strip(), flags=_I)
                   for c in _CLAUSE.split(sentence) if c and c.strip()]
        # A clause ending on a pronoun says something about the thing, not what it is ("only Eileen knows that").
        named = [i for i, clause in enumerate(clauses) if _names_something(_clean(clause))
                 and not re.search(r"\b(?:that|this|it|them)\W*$", clause, _I)]
        if named:
            # The nearest clause that names something, with the one before when it is only a name ("my ex, Tom").
            last = named[-1]
            first = last - 1 if last - 1 in named and len(clauses[last].split()) <= 2 else last
            return _clean(", ".join(clauses[first: last + 1]))
        # Several things listed before "erase all three" make a long sentence, each of them a short one.
        parts = split_targets(whole) if whole and not _is_reason(sentence) else []
        if len(parts) >= 2 and all(_names_something(part) for part in parts):
            return whole
    return None


# A topic set first, then the request about it: "about my husband's drinking, I don't want that recorded"; a list
# of topics goes on past ", and": "about Linnea and me splitting up, and the kids' details - wipe all that".
_TOPIC_FIRST = re.compile(r"^\W*(?:\w+,\s*)?(?:about|abt|re|regarding|concerning|as for|as to|on the subject of)\s+"
                          r"(?P<t>[^,.?!:;]+?(?:\s*,\s*(?:and|&|plus)\s+[^,.?!:;]+?)*)\s*(?:[,.?!:;]|\s[-\u2013\u2014]\s)",
                          _I)


def _topic_first(raw: str) -> str | None:
    found = _TOPIC_FIRST.search(raw)
    target = _clean(found.group("t")) if found else ""
    return target if target and not is_vague(target) else None


# How a rule for the future opens: "from now on, ...", "new rule: ...", "as far as your memory goes, ...".
_FUTURE_RULE = re.compile(
    r"^\W*(?:(?:from now on|going forward|moving forward|from (?:today|here on|this point on|now)|in (?:the )?future|"
    r"henceforth|(?:new|one more|a) rule|(?:make (?:it|this) )?a rule(?: from (?:today|now))?|standing (?:order|rule|"
    r"instruction)|rule for the future|as far as (?:your memory goes|you'?re concerned|you know))\b\s*[:,\-]?\s*)+", _I)


# A list of things, one to a line or numbered in a line: "Please delete:\n- my address\n- my PESEL", "forget 1. my
# medication 2. my father's surgery", "Remove the following:\nmy house address\nmy Ghana Card number".
_BULLET = re.compile(r"^\s*(?:[-*+\u2022\u00b7\u25aa\u25e6\u2013\u2014>]|\(?\d{1,2}[.):]|\(?[a-hA-H][.)])\s+"
                     r"(?P<item>\S.*)$")
_NUMBERED = re.compile(r"(?:^|(?<=[\s:,;]))\(?(?P<n>\d{1,2})[.)](?=\s+\D)\s+")
_SIGN_OFF = re.compile(r"^\W*(?:thanks?|thank you|thx|ty|cheers|regards|best|kind regards|many thanks|love|x+|xoxo|"
                       r"sincerely|yours|bye|ta)\b", _I)
_LIST_WORDS = 12  # a line longer than this is prose, not an item of a list


def _list_items(raw: str) -> list[str]:
    """The items of a list in ``raw`` (two at least), else none."""
    lines = [line.strip() for line in raw.splitlines()]
    bulleted = [found.group("item") for found in map(_BULLET.match, lines) if found]
    if len(bulleted) >= 2:
        return bulleted
    # Numbered in one line: the ascending run 1, 2, 3... ("2.5 lakh" or "at 3." are no numbers of a list).
    run: list[re.Match] = []
    for found in _NUMBERED.finditer(raw):
        if int(found.group("n")) == len(run) + 1:
            run.append(found)
    if len(run) >= 2:
        ends = [found.start() for found in run[1:]] + [len(raw)]
        items = [raw[found.end(): end] for found, end in zip(run, ends, strict=True)]
        items[-1] = _SENTENCE_END.split(items[-1])[0]  # "3) the loan. Thank you."
        return items
    # A heading line that ends with a colon, then one short line a thing.
    for i, line in enumerate(lines):
        if line.endswith(":"):
            following = []
            for item in lines[i + 1:]:
                if not item or _SIGN_OFF.match(item) or len(item.split()) > _LIST_WORDS:
                    break
                following.append(item)
            if len(following) >= 2:
                return following
    return []


# An item that is a request of its own: "1. delete my address", "- don't keep the loan".
_VERB_IN_ITEM = re.compile(rf"^\W*(?:please\s+|pls\s+|also\s+|and\s+)?(?:{_VERB}|don'?t keep|do not keep|"
                           rf"stop keeping)\b", _I)


def _item_targets(item: str) -> list[str]:
    """What one item of a list names: the target of its own request when it makes one ("1. delete my address"),
    else the item itself, with what it says after a dash as part of it ("the loan - the one from my uncle")."""
    if _spared_clauses(item) and re.match(r"\W*(?:keep|leave|retain|not|except|but not)\b", item, _I):
        return []  # "- keep my passport": what stays is no target
    item = re.sub(r"\s+[-\u2013\u2014]+\s+", ", ", item.strip())
    own = [t for t in _extract(item) if not is_vague(t)] if _VERB_IN_ITEM.match(item) else []
    return own or split_targets(_clean(item))


def _weak(target: str) -> bool:
    """A target of a word or two in lower case, without a number or a determiner: nothing shows it names a thing."""
    return len(target.split()) <= 2 and target == target.lower() and not re.search(r"\d", target) and \
        not _HEAD.match(target) and "'" not in target


# A request corrected as it is written: "Delete my CURP - no, sorry, the RFC", "Wipe what I said about Tolu - wait,
# no, I mean about my mum's illness", "delete my dad's diagnosis - sorry, not my dad, Imran's heart situation", "my
# health card number and my SIN - actually just the SIN". What it names is what follows the correction; what it
# named before is what it does not mean. "no" and "sorry" correct only on their own ("sorry to bother you", "no one
# needs to know" do not), "I mean" alone spells out rather than corrects.
_CORRECTION = re.compile(
    r"(?:\s+[-\u2013\u2014]+\s*|\s*[,;.!]+\s*|\s+(?=(?:no+|sorry|wait)[\s,]+(?:no|sorry|wait|not|i mean)\b))"
    r"(?:(?:(?:oh\s+)?(?:no+|nope|sorry|wait|oops|hang on|hold on)\b(?=[\s,.!:]*(?:no\b|sorry\b|wait\b|not\b|"
    r"i\s+mean|i\s+meant|the\b|my\b|his\b|her\b|our\b|their\b|(?-i:[A-Z])))[\s,.!:]*)+"
    r"(?:i\s+mean(?:t)?\s+|(?:it's|its)\s+)?|"
    r"actually,?\s+(?=(?:just|only)\s+(?:the|my|his|her|our|their)\b))", _I)
_CORRECTED_NOT = re.compile(r"^not\s+[^,.;:!?]{1,40}?[,;:]\s*(?:i\s+mean\s+|it's\s+|its\s+)?|^(?:just|only)\s+", _I)


def _correction(raw: str) -> tuple[str, list[str]] | None:
    """A request corrected as it is written: the request as corrected, and what it named before the correction."""
    for found in _CORRECTION.finditer(raw):
        before, after = raw[: found.start()], raw[found.end():]
        if not has_cue(before) or not after.strip():
            continue
        named = [t for t in _extract(before) if not is_vague(t)]
        if not named:
            continue
        corrected = _CORRECTED_NOT.sub("", after.lstrip(), count=1)
        if not corrected.strip() or re.match(r"\W*(?:to|for|i\b|i'm|if|but|that's|it's|this|my bad|need|one)\b",
                                             corrected, _I):
            continue
        # What follows must name a thing: "- actually, just do it now" asks again, it corrects nothing.
        if not any(not is_vague(t) for t in _extract("forget " + corrected)):
            continue
        return "forget " + corrected, named
    return None


def _bare(target: str) -> str:
    return re.sub(r"^(?:the|my|that|this|a|an)\s+", "", target.strip().lower())


# How many things a request says it names.
_NUMBERS = {"both": 2, "two": 2, "2": 2, "pair": 2, "three": 3, "3": 3, "four": 4, "4": 4}
# A number of things named, not of anything else: "all three", "the two of them", "both", "two things"; never "the
# two girls I pay cash" or "both my kids". "Both" before an "and" counts the two things it joins ("forget both my
# salary and the loan"), as before a verb ("both can go", "let both go").
_COUNTED = re.compile(r"\b(?:both(?=\s+[^.?!;:\n]{1,80}?\s(?:and|&)\s|\s+(?:can|could|should|must|go|out|away)\b|"
                      r"\s*(?:$|[,.;:!?\u2013\u2014-]|of\b|(?:the\s+|my\s+)?(?:things|items|bits|facts|"
                      r"details|matters|numbers|ids|debts|loans|one|ones)\b|(?:the\s+|my\s+)?[\w-]+\s+ones\b|please|"
                      r"pls|too|as well|forgotten|gone|"
                      r"deleted|removed|erased|wiped))|(?:all|the|those|these|them)\s+(?P<n>two|three|four|2|3|4)"
                      r"(?=\s*(?:$|[,.;:!?\u2013\u2014-]|of\b|from\s+(?:your|ur|the)\b|things|items|bits|facts|details|"
                      r"matters|statements|"
                      r"messages|numbers|parts|please|pls|too|as well))|(?P<m>two|three|four|2|3|4)\s+(?:things|"
                      r"items|bits|facts|details|matters|statements|messages|numbers|parts|ids|debts|loans|of them|"
                      r"of those|of these))\b", _I)
# A plural of a kind of thing: "the health things", "my debts", "both loans", "all the medical stuff". Not "the
# details of the investigation" or "anything about my nest egg": those name one thing and all that it holds.
_SEVERAL = re.compile(
    r"\b(?:all\s+(?:the|my|of my|those|these)\s+\w+\s+(?:stuff|things)|(?:the|my|those|these|both)\s+(?:\w+\s+)?"
    r"(?:things|numbers|ids|debts|loans|conditions|diagnoses|illnesses))\b", _I)


def how_many(text: str) -> int | None:
    """How many statements ``text`` names: 1 as a rule, a number it says ("both", "all three", "two things"), or
    None when it names several without saying how many ("the health things", "my debts")."""
    counted = _COUNTED.search(text)
    if counted:
        return _NUMBERS[(counted.group("n") or counted.group("m") or "both").lower()]
    return None if _SEVERAL.search(text) else 1


# Where, dictated without commas, a thing of its own may start: an article or "my" that no preposition comes before
# ("the hospital bills the loan on my car" -> "the hospital bills", "the loan on my car").
_UNMARKED_HEAD = re.compile(r"(?<!\bthe)(?<!\bmy)" + "".join(rf"(?<!\b{w})" for w in _PREPOSITIONS)
                            + r"(?<!\bthan)(?<!\bthat)(?<!\band)\s+(?=(?:the|my)\s+\w)", _I)


_AND_PARTS = re.compile(r"\s*,?\s+and\s+", _I)  # not a bare comma: "my ID numbers, both government ones"


def _as_counted(raw: str, targets: list[str]) -> list[str]:
    """``targets`` parted where a thing of its own starts unmarked, when only that gives as many things as ``raw``
    says it names ("ok three things for get the hospital bills the loan on my car and where i live")."""
    count = how_many(raw)
    if count:  # less what it keeps: "the two addresses i gave you wipe the house one keep the depot"
        count -= len(_spared_clauses(raw))
    if not count or count == 1 or len(targets) >= count:
        return targets
    # Parted at "and" first ("the colonoscopy thing and helga from lubeck the online lady both"), else
    # where an article starts a thing.
    for parting in (_AND_PARTS, _UNMARKED_HEAD):
        parted = [piece for target in targets for piece in parting.split(target)
                  if request_gist(_COUNT_WORDS.sub("", piece))]  # not the count itself ("two things my salary ...")
        if len(parted) == count and all(_names_something(_clean(piece)) for piece in parted):
            return [_clean(piece) for piece in parted]
    return targets


# A request that sums up, then lists after a colon or a dash: "Clear out all of it about Marta: the dancing, the
# abortion, her mother disapproving", "Nothing about my father should stay with you — neither his stroke nor the land
# dispute", "Anything that involves Murat — divorce, custody, all of it — I want it out of your memory".
_SUMMED_UP_THEN_LISTED = re.compile(
    r"^(?P<h>[^:\u2013\u2014]{3,160}?)(?::|\s*[\u2013\u2014]|\s-\s)\s*(?:(?:neither|both|either|namely)\s+)?"
    r"(?P<l>[^:\u2013\u2014.!?]+?)\s*(?:[.!?]+(?=\s|$)|\s*[\u2013\u2014]|\s-\s|$)")
_SUMMING_HEAD = re.compile(r"\b(?:all(?: of it)?|everything|anything|nothing|(?:two|three|four|few|several|both)\s+"
                           r"(?:things|bits|matters|of them|the))\b", _I)


def _summed_up_then_listed(raw: str) -> list[str]:
    """The things listed after a summing-up (with the summing-up's names: "the dancing Marta"), or []."""
    found = _SUMMED_UP_THEN_LISTED.match(raw.strip())
    if not found or not _SUMMING_HEAD.search(found.group("h")):
        return []
    items = [t for t in split_targets(found.group("l")) if t and not is_vague(t) and request_gist(t)]
    if len(items) < 2 or not all(_names_something(t) and not _is_reason(t) for t in items):
        return []
    names = " ".join(w.strip(",.") for w in found.group("h").split()[1:]
                     if w[:1].isupper() and w.lower() not in FRAME_WORDS)
    return [f"{item} {names}" if names and names.lower() not in item.lower() else item for item in items]


def extract_targets(text: str) -> list[str]:
    """What ``text`` asks to forget, as the user wrote it; ["it"] for "forget it", [] when nothing is found."""
    raw = _respell((text or "")[:MAX_CHARS]).replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    raw = _without_hesitations(_spoken_marks_written(raw))
    corrected = _correction(raw)
    if corrected:
        raw = corrected[0]
    raw = _without_not_meant_last(raw)
    items = _list_items(raw)
    if items:
        found = [t for item in items for t in _item_targets(item) if t and request_gist(t)]
        if found:
            return list(dict.fromkeys(found))
    targets = _elaborated(raw, _extract(raw))
    if all(is_vague(t) or len(t.split()) > 16 for t in targets):
        targets = _summed_up_then_listed(raw) or targets
    targets = [*targets, *_further_requests(raw, targets)] if targets else targets
    targets = _as_counted(raw, targets)
    return list(dict.fromkeys(_one_named(t, targets[:i], raw) for i, t in enumerate(targets) if t.strip()))


# "one" standing for a thing the request names elsewhere: "both loans, the black credit and the Vietcombank one",
# "my NI number, and the NHS one too", "the one from Yaw". Not "the one time I ..." nor "someone".
_ONE = re.compile(r"\b(?P<o>ones?)\b(?=\s*(?:$|[,.;:!?)]|(?:from|with|for|to|about|at|in|on|of|that|which|who|i|you|"
                  r"my|too|as well|and|or|again|either|please|pls)\b))", _I)
_PLURAL_NOUN = re.compile(r"\b(?:both|two|three|four|all|my|those|these)\s+(?:(?!ones?\b)[\w'-]+\s+)?"
                          r"(?P<n>(?!(?:ones|things|bits|items|stuff|details|matters|parts|pieces|is|was|has|does|"
                          r"yours|ours|theirs|this|its|us|those|these|as|always|perhaps|unless|plus|less)\b)"
                          r"(?-i:[a-z]{2,}s|[A-Z]{2,}s))\b", _I)


def _singular(noun: str) -> str:
    if re.search(r"(?:ss|us|is)$", noun, _I):  # "address", "status", "analysis"
        return noun
    if re.search(r"(?:ss|sh|ch|x|z)es$", noun, _I):
        return noun[:-2]
    if re.search(r"[^aeiou]ies$", noun, _I):
        return noun[:-3] + "y"
    return noun[:-1] if noun.lower().endswith("s") else noun


def _one_named(target: str, before: list[str], raw: str) -> str:
    """``target`` with its "one" spelt out as the noun it stands for: a plural the request counts ("both loans",
    "my two ID numbers"), else the last word of the target before it ("my NI number, and the NHS one")."""
    found = _ONE.search(target)
    if not found:
        return target
    # The plural is said before the target or in its sentence ("The tax one - forget it. The hospital bills stay":
    # not the bills).
    place = raw.lower().find(target.lower())
    end = _SENTENCE_END.search(raw, place + len(target)) if place >= 0 else None
    plural = _PLURAL_NOUN.search(raw[: end.end()] if end else raw)
    many = found.group("o").lower() == "ones"
    noun = (plural.group("n") if many else _singular(plural.group("n"))) if plural else None
    if noun is None:
        # Only a short noun phrase ("my NI number"), not a clause ("the 11-digit number I sent").
        earlier = [w for t in before if not _ONE.search(t) and len(t.split()) <= 4
                   for w in re.findall(r"[^\W\d_]{3,}", t)]
        noun = earlier[-1] + ("s" if many and not earlier[-1].lower().endswith("s") else "") \
            if earlier and earlier[-1].lower() not in FRAME_WORDS else None
    if not noun or noun.lower() in FRAME_WORDS:
        return target
    return target[: found.start()] + noun + target[found.end():]


# A later sentence that adds to the request without asking again: "Same goes for the card I owe Mashreq on.",
# "And Zara's run-in with the police last summer, that too.", "Oh, and my PIN as well."
_SAME_FOR = re.compile(r"^\W*(?:and\s+)?(?:the\s+)?same\s+(?:goes|applies|for)\s+(?:for\s+|to\s+)?(?P<t>[^.!?]+)", _I)
_THAT_TOO = re.compile(r"^\W*(?:(?:oh,?\s+)?and|also|plus)\s+(?P<t>[^.!?]+?)[,\s]+(?:(?:that|this|those|them|it)\s+)?"
                       r"(?:too|as well|also)\W*$", _I)

# A word a sentence asking again holds (checked before the signals, which cost more).
_ASKS_AGAIN = re.compile(rf"\b(?:{_VERB})\b|\b(?:keep|kept|keeping|remember|stor|sav|hold|hang|memory|record|know|"
                         r"need|gone|rid)", _I)
_AT_IT = re.compile(r"\s+(?:(?:while|whilst)\s+(?:you'?re|you are|ur|u r)\s+at\s+it|either|too|as well)\W*$", _I)


def _further_requests(raw: str, targets: list[str]) -> list[str]:
    """What the sentences after the first request add to it, each a request of its own ("Stop keeping anything
    about my brother's treatment. And no need to remember why things ended with my ex either.") or an addition to
    it ("Same goes for the card."). A sentence holding a target already found, or naming nothing, adds nothing."""
    sentences = [s for s in re.split(r"(?<=[.!?])\s+(?=\S)", raw) if s.strip()]
    if len(sentences) < 2:
        return []
    # The first request is where its target is written (or, when it points back, the first sentence that asks).
    first = next((i for i, s in enumerate(sentences) if any(t.lower() in s.lower() for t in targets)), None)
    if first is None:
        first = next((i for i, s in enumerate(sentences) if has_cue(s)), None)
    if first is None:
        return []
    added: list[str] = []
    for sentence in sentences[first + 1:]:
        if any(t.lower() in sentence.lower() for t in targets if len(t) > 3):
            continue
        joined = _SAME_FOR.match(sentence) or _THAT_TOO.match(sentence)
        if joined and not _NOT_AN_ITEM.match(joined.group("t")):
            found = split_targets(_clean(joined.group("t")))
        elif _ASKS_AGAIN.search(sentence) and signals(sentence)["rule_request"] and not _spared_clauses(sentence):
            found = _extract(sentence)
        else:
            continue
        found = [_AT_IT.sub("", t) for t in found]
        added += [t for t in found if t and not is_vague(t) and request_gist(t) and not _is_reason(t)
                  and not re.match(r"\W*(?:we|he|she|they|you|u|i)\b", t, _I)
                  # an instruction about the thing already named: "Treat it as compromised and don't store it"
                  and not re.match(r"\W*[a-z]+\s+(?:it|that|this|them)\b", t, _I)
                  and not re.search(r"\b(?:it|that|this|them|those|these|both)\W*$", t, _I)]
    return added



# A target that only sums up what it names ("both work things", "the money stuff", "my health details", "everything
# about tío Ramón"), which the request may go on to spell out: "... ? The loan for the bakery and the fight about
# paying it back", "... - our house savings, the StudyLink debt", "... details. Please delete my kidney disease and
# my father's dialysis".
_SUMMING_UP = re.compile(r"\b(?:things|stuff|details|info|information|matters|bits|ones|issues|problems|numbers|ids|"
                         r"debts|loans|plans|particulars|affairs)"
                         r"(?:\s+i\s+(?:gave|told|sent|shared with)\s+(?:you|u))?$", _I)
_SUMMED_BEFORE = re.compile(r"\b(?:both|all|everything|anything|whatever|two|three|four)\b(?:\s+\S+){0,3}\s*$", _I)
_ELABORATION_LEAD = re.compile(r"^[\s?.!:,;\-\u2013\u2014]*(?:(?:namely|i mean|that is|i\.e\.|like|both|so|"
                               r"specifically|meaning|including|especially)\b[\s,:]*)?", _I)
_ELABORATION_END = re.compile(r"[.!?]+(?=\s|$)|\s+[-\u2013\u2014]+(?:\s+|$)|[\u2013\u2014]")
_NOT_ELABORATION = re.compile(rf"^\W*(?:{_THIRD_PERSON_REMARK}|it\b|it's|they\b|they're|that's|that is|that was|"
                              r"this is|because|since|cause|as\b|but|"
                              r"if\b|when\b|thanks?|thank you|please\b|pls\b|ok\b|okay|sorry|lol|not\b|except|"
                              r"apart from|other than|excluding|but not)", _I)


def _elaborated(raw: str, targets: list[str]) -> list[str]:
    """The things a summing-up target is spelt out as, when the request goes on to name two or more (or asks
    again, naming them); the summing-up target's names go with each ("the loan for the bakery tío Ramón")."""
    if len(targets) != 1:
        return targets
    target = targets[0]
    place = None if is_vague(target) else re.search(rf"(?<!\w){re.escape(target)}(?!\w)", raw, _I)
    after = raw[place.end():] if place else ""
    dashed = re.match(r"\s*(?:[\u2013\u2014:]|\s-\s)", after)
    # What spells it out comes after a stop, a dash or a comma, not inside the target's own clause.
    if not re.match(r"\s*[?.!:,;\u2013\u2014-]", after) or not (
            dashed or _SUMMING_UP.search(target) or _SUMMED_BEFORE.search(raw[:place.start()])):
        return targets
    rest = _ELABORATION_LEAD.sub("", after, count=1)
    if re.search(rf"\b(?:{_VERB})\b", rest, _I) and not dashed:
        if not re.match(r"\s*[?.!]", after):
            return targets
        # "... the betting stuff? and nuke whatever u already have on it": a second request about the same thing
        again = [t for t in _extract(rest) if t and not is_vague(t) and t.lower() != target.lower()
                 and not re.search(r"\b(?:it|that|this|them|those|these)\W*$", t, _I)]
        return again if again and not any(_SUMMING_UP.search(t) for t in again) else targets
    end = _ELABORATION_END.search(rest)
    spelt = rest[: end.start()] if end else rest
    if _NOT_ELABORATION.match(spelt):
        return targets
    items = [t for t in split_targets(spelt) if t and request_gist(t) and not is_vague(t)]
    # "... stuff. The doctor said I'm fine now and my wife knows": a reason, not what the stuff was; after "that"
    # a clause is a thing told ("both work things? That I want to quit because of my boss, and ...").
    told = re.match(r"[\s?.!:,;\-\u2013\u2014]*that\b", after, _I)
    if len(items) < 2 or any(_is_reason(item) for item in items[1 if told else 0:]):
        return targets
    names = " ".join(w for w in target.split() if w[:1].isupper() and w.lower() not in FRAME_WORDS)
    return [f"{item} {names}" if names and names.lower() not in item.lower() else item for item in items]


# Or the user's own word on how it came to be said: "wifi pasword remove please, gave it by mistake".
_CLAUSE_AFTER_VERB = re.compile(
    r"\s*(?:(?:please|pls|plz|now|asap)\s*)?[,;.!]\s*(?:(?:my|his|her|our|their|the)\s+[\w'-]+(?:\s+[\w'-]+)?\s+"
    r"(?:still|might|may|will|would|can|could|must|"
    r"should|doesn'?t|does|don'?t|didn'?t|did|is|isn'?t|was|wasn'?t|has|hasn'?t|had|knows?|not|never|ever|already|"
    r"would|cannot|can't|won'?t|mustn'?t|shouldn'?t|thinks?|reads?|checks?|sees?|uses?)\b|"
    r"(?:i\s+)?(?:gave|sent|typed|wrote|posted|shared|told|put|pasted|added)\s+(?:it|that|this|them|you)\b|"
    r"(?:it|that|this)\s+(?:was|is)\s+(?:a\s+)?(?:mistake|accident|wrong|private|nobody's)|"
    r"(?:sorry|oops|my bad|shouldn'?t have)\b)", _I)


def _extract(raw: str) -> list[str]:
    """``extract_targets`` of a text already respelt, read as prose."""
    raw = _FUTURE_RULE.sub("", raw)
    candidates: list[tuple[int, int, str]] = []  # (rank, anchor start, target)
    for pattern in _BETWEEN:
        found = pattern.search(raw)
        if found:
            # The target sits right before the anchor: only its own sentence ("I overshared. my ex needs to go").
            candidates.append((0, found.start(), _clean(_SENTENCE_END.split(found.group("t"))[-1])))
    for pattern, rank in _AFTER:
        for found in list(pattern.finditer(raw))[:4]:
            # A verb where a request puts it ("please delete", "can you erase") outranks one anywhere else.
            asked = rank == 0 or re.search(_ASKED, raw[: found.start()], _I)
            after = raw[found.end():]
            # "Bitcoin loss - please eliminate, my wife still not know": after a comma, a clause about someone is
            # no object of the verb; the thing is named before it.
            target = "" if _CLAUSE_AFTER_VERB.match(after) else _clean(after)
            candidates.append((rank if asked else 2, found.start(), target))
    if not candidates:
        topic = _topic_first(raw)
        return split_targets(topic) if topic else []
    candidates.sort(key=lambda c: (c[0], c[1]))
    for rank, start, target in candidates:
        # The request points back ("... - I'd like them gone"): the thing named before it, not a later verb's;
        # unless a request came before it ("I'm retracting my therapy, don't keep it").
        if rank == 0 and start > 0 and target.lower() in VAGUE and not any(
                a < start and (r <= 1 or not _SENTENCE_END.search(raw[a:start])) for r, a, _ in candidates):
            named = _topic_first(raw) or _look_back(raw[:start])
            if named:
                return split_targets(named)
        # A target of only asking and politeness words ("be a dear", "away with it") names nothing either.
        if not is_vague(target) and request_gist(target):
            # A word or two with nothing to show it names a thing ("the Nadia thing, lupain aja ya", "the
            # military service thing, sil onu": another language's particles after its verb) gives way to the
            # thing named before the request.
            if _weak(target) and start > 0:
                named = _topic_first(raw) or _look_back(raw[:start])
                if named and not _weak(named):
                    return split_targets(named)
            return split_targets(target)
    start = min(c[1] for c in candidates)
    named = _topic_first(raw) or (_look_back(raw[:start]) if start > 0 else None)
    return split_targets(named) if named else [candidates[0][2]]


# The words a request is made of rather than what it names: asking, deleting, keeping, memory, politeness.
FRAME_WORDS = set(
    """
    a an the and or but so then just please pls kindly now also actually ok okay hey hi hello dear thanks thank ty
    cheers sorry well look wait um oh yes no not don't do does did doesn't didn't can could would will won't shall
    should must may might you your yours yourself u ur it its it's this that these those them they there here
    i i'm i've i'd i'll me my mine myself we us our is are was were be been being am have has had having get got
    to of in on at for from with about by as into onto out off up down over again any anything everything
    something all some every whatever whichever what which who whom when where how why if because since
    mind able possible possibly chance way want wanted like need needs prefer rather wish hope ask asking
    request think feel really very quite too much more told tell telling said say saying mentioned mention
    shared share sharing wrote written typed gave give given earlier before previously ago last time once
    forget forgetting forgotten forgot delete deleting deleted remove removing removed erase erasing erased wipe
    wiping wiped purge purging purged scrub scrubbing scrubbed drop dropping dropped clear clearing cleared
    discard expunge ditch scrap bin trash dump toss destroy obliterate shred redact eliminate nuke zap lose
    strike scratch unlearn unremember reset rid retract take taking took gone go away keep keeping kept
    store storing stored save saving saved retain retaining hold holding remember remembering know knowing
    have record records memory memories mind head brain system database file files notes note logs list
    track tracking info information detail details data stuff thing things bit part piece mention anymore
    longer never ever again stop quit cease let sure make ensure pretend regret shouldn't wouldn't couldn't
    isn't aren't wasn't thing bit yeah yep lol pls plz asap immediately right away completely entirely
    permanently forever profile context storage exclude excluded future answers replies responses unsave
    assistant bot chatbot machine anywhere somewhere kind outta efface unstore unrecord suppress turf possess
    neither nor
    """.split()
)
_GIST_WORD = re.compile(r"[\w'’.-]*\w", re.UNICODE)


# How a message written as a letter opens and closes: "Dear Sir,", "Good evening.", "My dear assistant,"; "Yours,
# Albert Whitfield", "Kind regards, Ines", "Love, Gran x", a last line "- Tom". The writer's own name there names
# nothing to forget (and would match "My name is Albert Whitfield"); a name after a dash in the sentence ("my ex --
# Tom") is no signature.
_SALUTATION = re.compile(r"^\s*(?:(?:my\s+)?dear(?:est)?|sir|madam|hi|hello|hey|hiya|greetings|"
                         r"good\s+(?:morning|afternoon|evening|day))\b(?:\s+[^\s,.!?\n]+){0,3}\s*[,.!:\n]+\s*", _I)
_VALEDICTION = re.compile(
    r"(?:^|(?<=[.!?\n]))\s*(?:(?i:yours|kind regards|best regards|warm regards|warmest regards|regards|best wishes|"
    r"all the best|best|cheers|many thanks|thanks|thank you|thx|ta|love|lots of love|sincerely|respectfully|"
    r"cordially|with thanks|with gratitude|god bless|blessings)(?i:\s+(?:sincerely|faithfully|truly|again|so much|"
    r"very much|in advance))?\s*[,.!]*\s*(?:\n\s*)?|(?<=\n)[-\u2013\u2014~]\s*)"
    r"(?P<name>(?:(?:[A-Z][\w'\u2019.-]*|x+)\s*){1,4})[.!\s]*$")


def request_unaddressed(text: str) -> str:
    """``text`` without the greeting it opens with and the valediction and name it closes with, when it has them
    ("Sir, I must ask that my medical condition ... Yours, Albert Whitfield" -> "I must ask that my medical
    condition ..."); the text itself when that would leave nothing."""
    found = _VALEDICTION.search(text)
    body = text[: found.start()] if found else text
    body = _SALUTATION.sub("", body, count=1)
    return body.strip() or text


def request_gist(text: str) -> str:
    """What a request is about once its asking, deleting and politeness words are gone: "the PIN I told you,
    the one that's Bríd's birthday, would you get rid of it" -> "PIN one Bríd's birthday". Used when no target
    can be read from the request's shape; "" when nothing is left."""
    raw = _without_not_meant_last(_NOT_MEANT.sub("", _without_hesitations(_spoken_marks_written(
        _respell(request_unaddressed((text or "")[:MAX_CHARS])).replace("’", "'")))))
    words = [w for w in _GIST_WORD.findall(raw) if w.lower().strip(".") not in FRAME_WORDS]
    return " ".join(words)


def _spared_clauses(raw: str) -> list[tuple[int, int, str]]:
    """Each clause of ``raw`` saying what to keep: (start, end, what it names, as written)."""
    found = [(m.start(), m.end(), m.group("x")) for m in _SPARED_AFTER.finditer(raw)]
    found += [(m.start("x"), m.end(), m.group("x")) for m in _spared_before(raw)
              if _CLAUSE_OPENS.search(raw[: m.start("x")])]
    found += [(m.start("x"), m.end(), m.group("x")) for m in _SPARED_ONE.finditer(raw)
              if not _SUBORDINATE_END.search(raw[: m.start("x")])
              and not any(start <= m.start("x") < end for start, end, _ in found)]
    found += [(m.start(), m.end(), _NOT_MEANT_INSIDE.sub("", m.group(0).strip(" ()")).split(",")[0])
              for m in _NOT_MEANT.finditer(raw)]
    found += [(m.start(), m.end("x"), m.group("x")) for m in _NOT_MEANT_LAST.finditer(raw)]
    return [(start, end, phrase) for start, end, phrase in found if not _NOT_A_SPARE.search(phrase)]


def request_spared(text: str) -> list[str]:
    """What ``text`` says to keep, one entry per thing named (none when it says nothing of the kind)."""
    raw = _spoken_marks_written(_respell((text or "")[:MAX_CHARS]).replace("’", "'"))
    spared = []
    corrected = _correction(raw)
    if corrected:  # what a correction takes back is not meant ("Delete my CURP - no, sorry, the RFC")
        now = {_bare(t) for t in extract_targets(corrected[0])}
        spared += [t for t in corrected[1] if _bare(t) not in now]
    for _, _, phrase in _spared_clauses(raw):
        phrase = _clean(re.sub(r"\s+(?:for now|itself|as is|as it is|alone|then|though|too)\b.*$", "", phrase,
                               flags=_I))
        if phrase and not is_vague(phrase) and request_gist(phrase):
            spared.append(phrase)
    return list(dict.fromkeys(spared))


def request_without_spared(text: str) -> str:
    """``text`` without its clauses saying what to keep ("purge the NIN, leave the BVN" -> "purge the NIN")."""
    raw = (text or "")[:MAX_CHARS]
    clauses = _spared_clauses(raw)
    for start, end, _ in sorted(clauses, reverse=True):
        raw = raw[:start] + raw[end:]
    return raw if clauses else (text or "")


# --- a request beside other tasks ------------------------------------------------------------------------------
# One message often does several things: "Can you plan me a route in the Dolomites? Also the money I owed the tax
# office, no need to remember it", "take the trip out of your memory ta and hows the weather looking for auckland".
# The other task's words are no part of what the request names, and they drown it: read as a whole, the message is
# less of a request, and its "Dolomites" or "Chennai" can match a statement. Parts end at a sentence's end, a dash,
# a line break, and, in text typed or dictated without stops, before "also" and before "and" that opens a question.
_TASK_PARTS = re.compile(
    r"(?<=[.!?])\s+|\s+[-\u2013\u2014]+\s+|\s*\n+\s*|\s*;\s*|,?\s+(?=(?:oh\s+)?and\s+also\b)|(?<!\band),?\s+(?=also\b)|"
    r"\s+(?=and\s+(?:whats|what's|what\s+(?:is|are|do|does|should|would)|hows|how's|how\s+(?:do|does|can|is|are|"
    r"should|would)|whens|when's|when\s+(?:is|are|do|does|should)|wheres|where's|where\s+(?:is|are|can|do|does|"
    r"should)|whos|who's|is\s+there|are\s+there|can\s+you|could\s+you|do\s+you|any\s+(?:tips|ideas))\b)", _I)
_PART_LEAD = re.compile(r"^\W*(?:(?:and|also|oh|ok|okay|so|hey|hi|um+|uh+|random|btw|anyway|but|right|quick|"
                        r"question|separately|unrelated|plus|then)\b[\s,:!.]*)*", _I)
# A part that asks for something else: a question ("when's the best time of year for Zanzibar?": a question mark, or
# a question word and a verb), or a task ("draft me an email to my landlord", "help me choose an onsen").
_TASK_OPENS = re.compile(
    r"^(?:(?:what|how|when|where|who|why|which)(?:'s|s|'re|'d)?\s+(?:is|are|was|were|do|does|did|can|could|would|"
    r"should|will|a|an|to|long|far|good|best)\b|"
    r"(?:what|how|when|where|who)(?:'s|s)\b|"
    r"(?:can|could|would|will|wud|cud)\s+(?:you|u|ya)\s+(?:please\s+|pls\s+|also\s+|quickly\s+)?(?:help|write|draft|"
    r"make|plan|suggest|recommend|give|tell|find|show|throw|put|pick|choose|explain|translate|check|remind|sort|"
    r"book|list|send|look|think|come up|summari[sz]e|work out|figure)\b|"
    r"(?:please\s+|pls\s+)?(?:help me|write|draft|plan|suggest|recommend|give me|tell me|find me|show me|"
    r"throw together|put together|pick|choose|explain|translate|remind me|make me|book|list)\b|"
    r"(?:is|are|do|does|any)\s+(?:there|you|it|they|tips|ideas|good)\b)", _I)


# A question about what the assistant holds is part of the request it comes with: "Do you still have my RFC? If
# you do, please forget it", "You know the thing about my dad's heart? Forget it."
_ABOUT_HOLDING = re.compile(r"\b(?:you|u|ya|your)\b.*\b(?:have|has|had|keep|kept|store|stored|storing|save|saved|"
                            r"remember|know|knew|hold|holding|got|record|recorded|note|noted|notes|still|memory|"
                            r"mention|mentioned|told|tell|said|say)\b", _I)


def _another_task(part: str) -> bool:
    body = _PART_LEAD.sub("", part).strip()
    if not body or has_cue(body) or _ABOUT_HOLDING.search(body):
        return False
    return body.rstrip().endswith("?") or bool(_TASK_OPENS.match(body))


def request_without_other_tasks(text: str) -> str:
    """``text`` without its parts that ask for something else (a question, a task) and hold no word asking for
    anything to go, when what is left still names a thing ("Scrap the stuff about my brother owing me money. Also,
    when's the best time of year for Zanzibar?" -> "Scrap the stuff about my brother owing me money."); ``text``
    itself when it has no such part, or when the request needs it ("You know the thing about my dad's heart?
    Forget it.")."""
    text = text or ""
    if not has_cue(text):
        return text
    bounds, start = [], 0
    for found in _TASK_PARTS.finditer(text):
        if found.end() > start and found.start() > start:
            bounds.append((start, found.start()))
            start = found.end()
    bounds.append((start, len(text)))
    kept = [(a, b) for a, b in bounds if not _another_task(text[a:b])]
    if len(kept) == len(bounds) or not kept:
        return text
    # The parts kept, joined as they were: a dash or a stop between them stays.
    rest = "".join(text[a:b] if i == 0 else text[kept[i - 1][1]:b] for i, (a, b) in enumerate(kept)).strip()
    # Unless the request needs what was left out: "The business with my landlord? Forget it."
    return rest if has_cue(rest) and any(not is_vague(t) for t in extract_targets(rest)) else text
