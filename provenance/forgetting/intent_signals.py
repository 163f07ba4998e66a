"""Hand-written signals about a chat message, the rule half of the deletion-request detector.

Each signal is 0 or 1 and names one idea ("a deletion verb is aimed at the assistant", "the object is an
everyday thing", "the user asks to be reminded"); the classifier weighs them together with the sentence embedding.
"""

from __future__ import annotations

import re

from .intent_languages import gloss

# Long messages are judged on their start: a deletion request is short, and the regexes stay linear.
MAX_CHARS = 1000

# Misspelt forms of the words that carry a request ("forgt", "delet", "remvoe", "abotu") are read as the word.
_TYPO_STEMS = (
    "forget", "delete", "remove", "remember", "memory", "please", "erase", "about", "pretend", "information",
    "anything", "everything", "mentioned", "retain", "holding", "regret", "unlearn", "redact", "throw", "shred",
    "store", "storing", "keeping", "track", "tracking", "would", "could", "should", "never", "want", "know", "what",
    "purge", "scrub", "wipe", "rather", "remembering", "anymore", "from", "earlier", "said", "wiped", "trace", "note",
    "stop", "have", "your", "told", "forgot", "nuke", "mention", "that", "regarding", "thanks", "keep", "saving",
    "quit", "removing", "forgetting", "deleting", "erasing", "wiping", "scrap", "discard", "ditch", "trash",
    "dump", "destroy", "obliterate", "eliminate", "lose", "losing", "scratch", "strike", "reset", "clear", "drop",
    "expunge", "get", "rid", "efface",
)
# One edit away from a stem, yet English words of their own.
_REAL_WORDS = {
    "forge", "ease", "eras", "rase", "erse", "plea", "lease", "pease", "emory", "remover", "abut", "bout", "shed",
    "tore", "sore", "cold", "rote", "rack", "tack", "string", "react", "ever", "wan", "ant", "now", "hat",
    "wipe", "wip", "ripe", "wit", "storing", "stoke", "rate", "rater", "crub", "purge", "knew", "known", "snow",
    "knot", "whet", "wat", "form", "fro", "rom", "sad", "aid", "race", "not", "top", "sop", "ave", "you", "our",
    "old", "tod", "tol", "forgo", "nue", "ote", "urge", "pure", "scub", "tat", "tha", "thank", "crap", "scrip", "scarp",
    "ditc", "tash", "trah", "ump", "dup", "lost", "loe", "ose", "lo", "los", "loses", "clea", "clear", "lear",
    "dop", "rop", "drip", "drops", "get", "et", "gt", "ge", "gett", "geet", "rid", "id", "ri", "rd", "ride", "strik",
    "trike", "stike", "resets", "eset", "rest", "scratc", "dich", "dish", "rash", "trash", "dumb", "loss", "itch",
    "droop", "caving", "zaid", "trach",
}
_SHORTHAND = {"u": "you", "ur": "your", "pls": "please", "plz": "please", "dont": "don't", "doesnt": "doesn't",
              "didnt": "didn't", "cant": "can't", "im": "i'm", "ive": "i've", "shouldnt": "shouldn't",
              "wouldnt": "wouldn't", "isnt": "isn't", "whats": "what's", "thats": "that's", "lets": "let's",
              "id": "i'd", "youre": "you're", "wanna": "want to", "gonna": "going to", "abt": "about", "wat": "what",
              "bc": "because", "cuz": "because", "thx": "thanks", "yu": "you", "yor": "your", "do'nt": "don't",
              "hve": "have", "hae": "have", "r": "are", "wud": "would", "cud": "could", "shud": "should",
              "nvm": "never mind", "rn": "right now", "pw": "password"}


# Letters spelt by their sound: "erace", "effase", "skrub", "eraze".
_SOUNDS_ALIKE = {"c": "sk", "s": "cz", "k": "c", "z": "s"}


def _one_edit(word: str) -> set[str]:
    drops = {word[:i] + word[i + 1:] for i in range(len(word))}
    swaps = {word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1)}
    doubles = {word[:i] + word[i] + word[i:] for i in range(len(word))}
    sounds = {word[:i] + other + word[i + 1:] for i in range(len(word)) for other in _SOUNDS_ALIKE.get(word[i], "")}
    return drops | swaps | doubles | sounds


# A long word may lose two letters inside it and still be read ("rember", "infomation", "evrything"); not those
# that are words of their own.
_LONG_STEM = 8
_TWO_SHORT_WORDS = {"reading", "rearing", "fretting", "taking", "roving", "reving", "anting"}


def _two_inside(word: str) -> set[str]:
    once = {word[:i] + word[i + 1:] for i in range(1, len(word) - 1)}
    return {w[:i] + w[i + 1:] for w in once for i in range(1, len(w) - 1)} - once


_TYPOS = {v: stem for stem in reversed(_TYPO_STEMS) for v in _one_edit(stem) if v not in _REAL_WORDS}
for _stem in _TYPO_STEMS:
    if len(_stem) >= _LONG_STEM:
        for _variant in _two_inside(_stem) - _TWO_SHORT_WORDS - _REAL_WORDS:
            _TYPOS.setdefault(_variant, _stem)
_TYPOS.update({stem: stem for stem in _TYPO_STEMS})
_RESPELL = {**_TYPOS, **_SHORTHAND}
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def _spelt_out(text: str, table: dict[str, str], shortest: int = 1) -> str:
    def word(match: re.Match) -> str:
        found = match.group(0)
        if len(found) < shortest or (shortest > 1 and found.isupper()):
            return found
        fixed = table.get(found.lower())
        return fixed if fixed and fixed != found.lower() else found  # correct words keep their case

    return _WORD.sub(word, text)


def respell(text: str) -> str:
    """``text`` with shorthand ("u", "dont") and typos of the key words spelt out; other words kept."""
    return _spelt_out(text, _RESPELL)


def typos_spelt_out(text: str) -> str:
    """``text`` with only the typos of the key words spelt out ("delet both" -> "delete both"); shorthand kept,
    and words of fewer than four letters and those in capitals ("my IRD number" is no "rid")."""
    return _spelt_out(text, _TYPOS, shortest=4)


def normalise(text: str) -> str:
    """Lower case, straight quotes, other languages' request words in English (``gloss``), shorthand and typos
    spelt out, single spaces; at most ``MAX_CHARS``."""
    text = gloss((text or "")[:MAX_CHARS]).lower()
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"')
    text = text.replace("don;t", "don't")
    # The flower is not a request: "forget-me-nots are my favourite".
    return re.sub(r"\s+", " ", respell(text)).replace("forget-me-not", "forgetmenot").strip()


# --- the vocabulary ------------------------------------------------------------------------------

_BASES = (
    "forget delete remove erase wipe purge scrub drop clear discard expunge ditch scrap bin trash dump toss destroy "
    "obliterate shred redact eliminate nuke zap lose cut blank strike scratch unlearn un-remember unremember unhear "
    "unsee undo reset rid retract memory-hole unknow un-know un-see un-hear un-learn efface unsave un-save unstore "
    "un-store unrecord un-record suppress turf"
).split()
_DOUBLE = {"drop", "scrub", "scrap", "bin", "zap", "cut", "rid", "shred", "reset", "forget"}


def _ing(verb: str) -> str:
    if verb in _DOUBLE:
        return verb + verb[-1] + "ing"
    return (verb[:-1] if verb.endswith("e") and not verb.endswith("ee") else verb) + "ing"


# The verbs and idioms of deletion as a request uses them: "forget", "would you mind deleting", "get rid of".
IMPERATIVE_VERBS = "|".join(
    [re.escape(v) for v in _BASES] + [re.escape(_ing(v)) for v in _BASES]
    + ["forgotten", r"get(?:ting)? rid of", r"get(?:ting)? shot of", r"let(?:ting)? go of",
       r"throw(?:ing)? (?:away|out)", r"clean(?:ing)? out", r"cross(?:ing)? out", r"tak(?:e|ing) back",
       r"rub(?:bing)? out", r"blot(?:ting)? out",
       # The object between verb and particle: "rub it out", "throw that away"
       r"(?:throw(?:ing)?|toss(?:ing)?|rub(?:bing)?|blot(?:ting)?|cross(?:ing)?|scratch(?:ing)?) (?:it|that|this|them|"
       r"those|these) (?:away|out)(?!\s+(?:of|from)\b)",
       # "the kimlik number, take it away" (not "take it away from the kids")
       r"tak(?:e|ing) (?:it|that|this|them|those|these) away(?!\s+(?:from|to|with|for)\b)",
       # Slang: "kill that", "kill it pls" (not "kill it at the interview")
       r"kill(?= (?:that|it|this)\b(?! (?:at|in|on|with|for|out there)\b))"]
)
DELETE_VERBS = IMPERATIVE_VERBS + (
    r"|forgot|deleted|removed|erased|wiped|purged|scrubbed|dropped|cleared|discarded|expunged|ditched|scrapped|binned|"
    r"trashed|dumped|destroyed|obliterated|shredded|redacted|eliminated|nuked|zapped|blanked|struck|scratched|"
    r"unlearned|effaced|unsaved|unstored|unrecorded|suppressed|turfed|"
    r"(?:out(?: of)?|off) your (?:memory|head|mind|system|records|notes|list)|memory hole|clean slate|"
    r"slate clean|never said|unsaid"
)
_BASE_VERBS = "|".join(re.escape(v) for v in _BASES)
_DEL = re.compile(rf"\b(?:{DELETE_VERBS})\b(?!-me-not)")
_KEEP_VERBS = (r"remember(?:ing)?|keep(?:ing)?|stor(?:e|ing)|sav(?:e|ing)|retain(?:ing)?|hold(?:ing)? on ?to|"
               r"hang(?:ing)? on ?to|log(?:ging)?")
# "you no longer possess my address" (never "I no longer possess the receipt")
_YOU_NOT_POSSESS = r"\b(?:you|u) (?:to )?(?:no longer|not|don't|do not|never) possess\b"
# "Stop knowing/having/tracking" asks; "I don't know", "we do not have" do not.
_STOP = re.compile(rf"\b(?:stop|stopping|quit|quitting|cease|no longer) (?:{_KEEP_VERBS}|hav(?:e|ing)|know(?:ing)?|"
                   rf"track(?:ing)?)\b|(?<!\bi )(?<!\bwe )(?<!\bthey )(?<!\bhe )(?<!\bshe )"
                   rf"\b(?:don't|do not|never|(?:you|to) not) "
                   rf"(?:{_KEEP_VERBS})\b|\b(?:you|u|to) not have (?:saved|stored|kept|remembered|recorded|logged)\b|"
                   rf"\b(?:please|pls|you|u) not (?:to )?(?:{_KEEP_VERBS}|know)\b"
                   # asked in the order of a statement: "the money I send my nephew, you can not store?"
                   rf"|{_YOU_NOT_POSSESS}"
                   rf"|\b(?:you|u) (?:can|could) ?not (?:{_KEEP_VERBS}|know)\b"
                   r"(?=\s*(?:(?:it|this|that|them|these|those)(?:\s+[\w-]+){0,2})?\s*\?)")
_LEAD = (r"(?:^[^a-z0-9]*|[,.;:!?-] *|\b(?:so|and|then|but|just|please|now|also|actually|ok|okay|hey|hi|right|"
         r"alright|well|look|kindly|wait|sorry|honestly|oh|um|thought|thing|request|mind)\b,? *)")
_ASK = (r"(?:(?:can|could|would|will|won't) you|you to|is there (?:a|any) way (?:for you )?to|"
        r"you (?:should|need to|have to|must|can|may|could)|make sure (?:to|you)|go ahead and|feel free to|mind|"
        r"let's|(?:make|get|have|ask|want|tell) you(?: to)?|i'm asking you to|please|time to|able to|"
        r"hoping you (?:could|would|'d)|favou?r and|if you (?:could|would|'d)|(?:start|begin) by|"
        r"(?:would|will|is) it (?:be )?possible (?:for you )?to|any chance you (?:could|can)|"
        r"(?:ask|request|demand|insist|require|prefer) that you|i hope you(?: can| could| will|'ll)?)")
_REQUEST = re.compile(
    rf"(?:{_LEAD}|\b{_ASK}\s+(?:please\s+|just\s+|kindly\s+)?)(?:{IMPERATIVE_VERBS})\b"
    # "... is none of your business forget it", "my divorce and the custody fight, forget those": the request closes
    # the message, what it names said before it.
    rf"|\b(?:{IMPERATIVE_VERBS}) (?:it|that|this|them|all of it|those|these|both(?: of them)?|all of them)\W*$"
    # The verb last, as Hindi and telegraphic English put it: "aadhaar wala number hata do" -> "... remove pls"
    rf"|(?<!\bto )(?<!\bi )(?<!\bwe )(?<!\bthey )(?<!\bwill )(?<!\bshould )(?<!\bcan )(?<!\bcould )(?<!\bnot )"
    rf"(?<!\bhow )(?<!\bwhat )\b(?:{_BASE_VERBS})(?:[ ,]+(?:pls|please|plz|yaar|na|bro|ok|okay|now|asap))*[.!\s]*$"
    # Telegraphic: "green card number i gave you, you delete, ok?"
    rf"|(?<!\bdid )(?<!\bdo )(?<!\bcan )(?<!\bwill )(?<!\bwould )(?<!\bcould )(?<!\bif )(?<!\bwhen )"
    rf"\b(?:you|u) (?:{IMPERATIVE_VERBS})(?=\s*(?:[,.!]|$|\b(?:it|this|that|pls|please|ok|okay)\b))"
)
_MEMORY = re.compile(
    r"\byour (?:memory|memories|records?|notes|head|mind|brain|system|database|files|logs|storage|knowledge|list)\b|"
    r"\bfrom memory\b|\bon file\b|\byou (?:know|remember|have|store|keep|retain|hold|save|log|heard)\b|"
    r"\bwhat you (?:know|have|remember|store)\b|\b(?:told|tell|telling|mentioned) you\b|\bwith you\b|\bi (?:said|told)"
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|me|mine|myself)\b")
_OBJECT_NOUNS = (
    r"branch|branches|file|files|folder|folders|directory|repo|cache|cookies|browser|account|app|apps|photos?|"
    r"pictures?|emails?|inbox|texts?|stains?|paint|rust|mou?ld|whiteboard|board|hard drive|drive|disk|sd card|usb|"
    r"phone|laptop|tablet|pc|mac|computer|table|column|rows?|class|course|module|paragraph|sentence|line|intro|"
    r"conclusion|emojis?|bullet|bullets|formatting|markdown|"
    r"(?<!gate )(?<!door )(?<!alarm )(?<!access )(?<!entry )(?<!security )(?<!pin )(?<!safe )(?<!lock )code|"
    r"comments|imports|statements|function|recipe|"
    r"list|slide|page|sheet|contact|event|meeting|tweet|post|posts|weeds|leaves|snow|mole|tattoo|splinter|tick|"
    r"fleas|ants|flies|wallpaper|stump|caulk|limescale|background|watermark|vocals|containers?|images?|"
    r"package|network|device|debt|overdraft|cv|draft|letter|bio|speech|essay|itinerary|schedule|plan|"
    r"subject|sign-off|recipient|jargon|tone|seeds|skin|dent|smell|drain|clothes|closet|garage|car|sofa|"
    r"mattress|extension|save|level|item|mod|hint|pin|parcel|habit|habits|passive|browser history|"
    r"search history|watch history|call history|tabs|blog|website|server|database|kernel|kernels|ram|storage|"
    r"card|group|member|album|nail polish|dandruff|hiccups|headache|nose|throat|record|bullet points?|points?|"
    r"lines?|duplicates|small talk|calendar|fluff|filler|repetition|typos?|noses?|faces?|hands|tears|counters?|"
    r"floors?|windows?|ipad|iphone|android|kindle|tv|router|words?|garden|attic|basement|shed|yard|junk|clutter|"
    r"wardrobe|cupboard|fridge|freezer|weeds|bugs|process|processes"
)
# What may follow an object noun: the end, or a preposition or adverb, never more of a noun phrase.
_AFTER_OBJECT = (r"(?:from|in|on|at|off|with|without|before|after|for|so|and|or|but|if|because|quickly|safely|fast|"
                 r"forever|completely|permanently|locally|remotely|recursively|properly|again|now|please|this|next|"
                 r"last|today|tonight|tomorrow|every|each|daily|weekly|later|first|everywhere)\b")
_EVERYDAY = re.compile(
    rf"\b(?:{DELETE_VERBS})\b(?: (?:out|off|away|up|down))? (?:(?:a|an|this|these|those|all|the|some|old|my|your)"
    rf" )?(?:[a-z'-]+ ){{0,2}}(?:{_OBJECT_NOUNS})(?=\s*(?:$|[,.!?;:)]|{_AFTER_OBJECT}))"
    r"|\b(?:from|off|out of) (?:the|this|that|my|a|an) (?!memory|memories|mind|head|record\b|records|notes|"
    r"files|logs|database|system|brain|knowledge|list of things)[a-z'-]+"
    # The assistant's own output being edited: "remove the duplicates in your answer", "the list you gave me"
    r"|\b(?:in|from|of) (?:your|the|that|this|my|ur) (?:answer|reply|response|draft|essay|email|letter|speech|eulogy|"
    r"toast|"
    r"summary|list|table|text|version|paragraph|poem|story|post|cv|resume|bio|code|script|translation|outline)\b"
    r"|\b(?:list|text|answer|draft|summary|version|table|plan) you (?:just )?(?:gave|wrote|sent|made|drafted)\b"
    r"|\bin (?:git|linux|windows|excel|word|python|sql|chrome|firefox|safari|gmail|outlook|pandas|ubuntu|docker|"
    r"powerpoint|procreate|premiere|photoshop|the terminal|bash|javascript|java)\b"
    # On a device: "clear the history on the kids' iPad"
    r"|\bon (?:the|my|his|her|our|their|a|an|[a-z]+'s?) (?:[a-z'-]+ )?(?:ipad|iphone|phone|laptop|tablet|computer|pc|"
    r"mac|tv|kindle|router|android|console|xbox|playstation|ps5|switch)\b"
    r"(?! (?:number|numbers|no|bill|bills|call|calls|plan|contract)\b)"
    # The assistant's last suggestion set aside: "scrap that last idea", "forget the previous option"
    r"|\b(?:that|the|this|your) (?:last|previous|first|second|third|other) (?:idea|suggestion|option|one|version|"
    r"answer|reply|attempt|joke|draft|calculation|example|question|name|title|paragraph|line|point|recipe|plan)s?\b"
    r"|\bwipe the floor with\b|\bstrike ?through\b"
)
_KEEP = re.compile(
    r"(?<!-)(?<!\bun)\b(?:remember (?:that|this|my|:)|keep in mind|"
    r"bear in mind|make a note|note that|for future reference|fyi|save this|store (?:this|the fact)|"
    r"keep (?:a record|this|that|track)|hold on to|keep hold of|just so you (?:know|remember)|here's some context|"
    r"let me tell you about|a bit about me|something you should know|between you and me|keep this|confidential|"
    r"between us|don't tell anyone|from now on|always (?:answer|reply|use|call))\b"
    r"|\b(?:it's|its|it is) (?:fine|ok|okay|alright) (?:that|if) (?:you|u) (?:know|remember|keep|have)\b"
    r"|\b(?:don't|do not|never|please don't) (?:forget|delete|erase|remove|lose|wipe|get rid of|drop)\b"
)
_REMINDER = re.compile(
    r"\bremind(?:er)? (?:me|to)\b|\bremind me\b|\breminder\b|\bremember to\b|\bdon't (?:let me )?forget to\b|"
    r"\bmake sure i (?:don't forget|remember)\b|\bto-?do\b|\bnote to self\b|\bping me\b"
)
_SELF_FORGET = re.compile(
    r"^(?:\W*[a-z]+,? )?forgot (?:my|to|about|the|where|how|what|his|her)\b|"
    r"\bi (?:totally |completely |always |often |sometimes |just )?(?:forgot|forget|keep forgetting|have forgotten|"
    r"'ve forgotten|tend to forget)\b|\bforgetful\b|\bforgetting (?:things|stuff|names|words|vocabulary)\b|"
    r"\bi (?:just |really |so |only |honestly )?(?:want|need|wish i could|'d like|would like|try|am trying|'m trying) "
    r"to (?:forget|erase|stop thinking|get over)\b|"
    r"\b(?:help me|how (?:do|can) i|how to) (?:forget|stop thinking|get over)\b|\bfrom my (?:mind|head|memory)\b|"
    r"\b(?:improve|boost) my memory\b"
)
_HOWTO = re.compile(
    r"^(?!.*\b(?:make|get|have|ask|tell) you\b)(?:\W*(?:ok|so|hey|quick q:?|"
    r"quick question,?)\W*)?(?:how (?:do|can|should|would|to|long)|how do you|"
    r"what's the (?:best|fastest|easiest|right) way to|best (?:way|tool) to|is it (?:safe|possible|ok|normal|bad) to"
    r"(?! have\b)|"
    r"should i|can i|steps to|tips (?:to|for)|any idea how|why can't i|help me|i'm trying to|explain how|"
    r"could you walk me through|what happens if i|is there an easy way to|do i need|i keep failing to)\b"
)
_QUESTION = re.compile(
    r"\?\s*$|^(?:\W*)(?!what (?:i|i've|i'd|my|his|her|our|their|we|he|she|they)\b)"
    r"(?:what|how|why|when|where|who|which|can|could|do|does|did|is|are|will|would|should|have|has)\b"
)
_GENERIC = re.compile(
    rf"\b(?:{DELETE_VERBS}|remember|store|keep)\b (?:things|stuff|anything|something|everything|"
    rf"what (?:people|users|i|we) "
    r"(?:say|tell)|our conversations|my messages|conversations|messages|chats)\b"
    r"(?! (?:about|on|related|regarding|to do with|concerning)\b)"
    # "forget everything I just said", "delete anything I've told you today": what this user said, not memory at large
    r"(?! (?:(?:that|which) )?(?:i|we)(?:'ve|'d)?(?: (?:just|have|had|already|ever))* (?:said|told|mentioned|shared|"
    r"wrote|typed|gave|sent|asked)\b)"
    r"(?! (?:from|in|since) (?:earlier|today|yesterday|this|that|before|the last|our last)\b)"
    r"|\b(?:your|the) memory work\b|"
    r"\bhow (?:does|do) (?:your|the) memory\b|\bwhat do you (?:know|remember)\b|\bdo you (?:store|keep|remember)\b|"
    r"\bhow long do you keep\b"
)
_NOT_OTHERS = (r"(?![^.?!]{0,40}?\b(?:to|with|on) (?:my|his|her|their|our|the|everyone|people)\b)"
               r"(?! (?:\w+ )?(?:my|his|her|their|our|him|them|everyone|people)\b)")
# What the assistant is asked not to do with a thing: "no need for you to be keeping that".
_HOLD_VERBS = r"(?:remember(?:ing)?|keep(?:ing)?|stor(?:e|ing)|sav(?:e|ing)|know|have|hold(?:ing)?)"
# "I (just) don't want": an adverb before the wish.
_I_DONT_WANT = r"\bi (?:just |really |simply )?(?:don't|do not) want"
_WISH = re.compile(
    r"\bi(?:'d| would) rather you\b|\bi (?:don't|do not|no longer) want you\b|\bi wish you\b|\bi(?:'d| would) prefer\b|"
    # A regret about telling someone else ("I regret telling my sister") is not one about telling the assistant.
    rf"\bpretend\b|\bact (?:as if|like) i\b|"
    rf"\bi regret (?:telling|sharing|mentioning|saying|that)\b{_NOT_OTHERS}|"
    rf"\bi (?:shouldn't|should not|never should) have (?:told|said|mentioned|shared)\b{_NOT_OTHERS}|"
    rf"\bi wish i(?: hadn't| had not|'d never| never)\b{_NOT_OTHERS}|\bnever said\b{_NOT_OTHERS}|"
    r"\b(?:take|taking) (?:it |that |"
    r"this )?back\b|\bretract|\bunsaid\b|"
    r"\bnot comfortable with you\b|\buneasy about you\b|"
    rf"{_I_DONT_WANT} .{{1,60}} (?:stored|kept|saved|"
    r"sitting|remembered|recorded|logged|noted|written down)\b|\brather (?:you|if you) (?:didn't|did not|wouldn't|"
    r"would not|not|never)\b|\bif you (?:didn't|did not|wouldn't|would not|could not|couldn't) (?:keep|store|save|"
    r"remember|retain|hold|hang|log|record|note|have (?:it|that|this|them)\b|know (?:it|that|this|about)\b)|"
    r"\bi (?:want|need|'d like|would like) .{1,60} (?:gone|erased|deleted|wiped|removed)\b|"
    r"\bconsent\b|\bforget i (?:ever )?(?:said|mentioned|told)\b|"
    r"\byou (?:shouldn't|should not|don't need to) (?:know|keep|be keeping|remember)\b|"
    r"\bi need you to (?:not|stop) (?:know|remember|keep|stor|sav|hold|retain)|"
    r"\b(?:better|best|happier|easier|relieved|relief|good|great|nice|ideal|safer|calmer|comfortable|at ease) "
    r"(?:if|knowing|when) you\b|"
    r"\bno (?:record|trace)s? of\b|"
    r"\bi(?:'d| would) rather (?:that|it|this|they|those|these|he|she)\b.{0,40}\b(?:not|wasn't|weren't|never)\b|"
    rf"{_I_DONT_WANT} .{{1,60}} in your (?:memory|memories|head|records|notes|files)\b"
    # "act like you never saw it", "better you don't have this", "not for your records", "no need to remember that"
    r"|\b(?:act|behave|pretend) (?:as if|as though|like) (?:you|u|it|this|that|we)\b(?: [a-z']+)? (?:never|didn't|"
    r"did not|don't|do not|wasn't|weren't|haven't)\b|\bpretend (?:you|u) (?:never|didn't|did not|don't)\b"
    r"|\bbetter (?:that |if )?(?:you|u) (?:don't|do not|didn't|not|never|forget|delete)\b"
    r"|\bnot for (?:your|ur) (?:records?|memory|notes|files|eyes)\b"
    r"|\bmake (?:it so|sure) (?:that )?(?:you|u) (?:don't|do not|no longer|never|can't) (?:know|remember|have|keep|"
    r"store)\b|\b(?:you|u) (?:don't|do not) get to (?:remember|know|keep)\b"
    # "no need for you to be keeping that", "no need to remember what I said"; not "no need to keep the receipts"
    rf"|\bno need for (?:you|u) to (?:be )?{_HOLD_VERBS}\b"
    rf"|\bno need to (?:be )?{_HOLD_VERBS} (?:that|this|it|those|these|them|what|anything|any of|about|hold of)\b"
)
_NARRATIVE = re.compile(
    r"\b(?:he|she|they|someone|somebody|my (?:[a-z]+ )?(?:boss|son|daughter|mum|mom|dad|sister|brother|friend|"
    r"coworker|colleague|wife|husband|partner|ex|landlord|kid|kids)|[a-z]+ (?:accidentally|just))\s+(?:deleted|removed|"
    r"erased|wiped|purged|dropped|forgot|cleared|got rid|destroyed|asked me|wants me|told me)\b|"
    r"\bi (?:accidentally |finally |just )?(?:deleted|removed|erased|wiped|dropped|cleared|got rid|purged)\b|"
    r"\b(?:forgets|deletes|removes|erases|wipes|purges|clears|drops|keeps forgetting)\b|"
    r"\b(?:is|was) about (?:erasing|deleting|forgetting)\b|\b(?:lyrics|tropes?)\b|"
    # A work's plot ("that movie where they wipe memories"), not any mention of a book.
    r"\b(?:movie|film|book|novel|song|show|series|episode)s? (?:where|about|in which|that|called)\b"
)

# "How could you forget my name?", "you keep forgetting that ...": a complaint about memory, not a request.
_COMPLAINT = re.compile(
    r"\bhow (?:could|can|did) you (?:forget|delete|lose)\b|\bwhy (?:did|do|would) you (?:forget|delete|keep)\b|"
    r"\bdid you (?:forget|delete|remember)\b|\byou (?:keep|kept|always|constantly) (?:forgetting|losing)\b|"
    r"\byou (?:forgot|'ve forgotten|have forgotten|lost)\b|\bwould you (?:want|like|ever)\b|\bdo you (?:wish|ever)\b|"
    r"\bnot what i (?:told|said)\b|\byou (?:mixed|got) .{0,30}(?:up|wrong|backwards)\b|"
    r"\b(?:why|how come) (?:did|do|would|didn't|don't|can't|won't|haven't) you\b|\byou (?:were supposed to|should "
    r"have|should've|still don't|don't even)\b|\byou got .{1,40} wrong\b|\btold you .{1,60} (?:already|before)\b"
    r"|\b(?:you|u) (?:clearly|obviously|really|still|even|seriously) (?:don't|do not|didn't|never) "
    r"(?:remember|recall)\b"
    r"|\b(?:you|u) (?:don't|do not|didn't|never) (?:remember|recall) (?:anything|a thing|a single thing|any of it)\b"
)
# "Do you still know my address?", "show me what you've stored": asking what is remembered.
_WHAT_YOU_KNOW = re.compile(
    r"\b(?:do|did|can|could|will|are|have) you (?:still |really |actually |even |ever )?(?:know|remember|recall|store|"
    r"keep|have|save|see)\b|\bshow me what you\b|\b(?:list|tell me) (?:the facts|what|everything) you\b|"
    r"\bwhat (?:do|have|did) you (?:know|remember|stored?|kept|keep|saved)\b|\bwhat data\b|\bremind me what\b"
    r"|(?<!\bwhy )\b(?:did|have) i (?:ever |already |even )?(?:tell|told|mention|mentioned|give|gave|say|said|send|"
    r"sent|share|shared)\b|\bi (?:don't|do not|can't|cannot) remember (?:if|whether) i\b"
)
# "Stop using bullet points", "don't mention my age in the bio": an instruction about anything but memory.
_STOP_OTHER = re.compile(
    r"(?:^|[,.;:!?-] |\b(?:can you|could you|would you|please|just|now|ok|and|you to|you should) )"
    r"(?:stop|quit|don't|do not|never)\s+(?!remember|keep|stor|sav|retain|hold|hang|log|track|hav|know|forget|"
    r"delet|remov|eras|wip|purg|scrub|drop|clear|lose|get rid|want|need|mind|think|worry|care|feel|let|tell)[a-z]{3,}"
    r"|\b(?:you|u) (?:don't|do not) (?:have|need) to (?:mention|bring up|say|repeat|talk about|remind)\b"
    r"|\b(?:forget|never mind|skip) (?:about )?(?:being|sounding|trying to|the (?:formalities|pleasantries|"
    r"politeness|small talk|intro|rules))\b"
)
# "X needs to go", "can X be deleted?", "I want X wiped": deletion said in the passive.
_PARTICIPLE = r"(?:deleted|erased|removed|wiped|forgotten|purged|scrubbed|cleared|dropped|redacted|gone)"
_RETAINED = (r"stored|kept|saved|remembered|retained|recorded|logged|held on to|hung on to|on file|on record|"
             r"in your memory")
# What "neither X nor Y" must not be: "... should be remembered", "... has to stay" (the targets read X and Y).
SHOULD_NOT_STAY = rf"(?:should|must|needs? to|has to|have to)\s+(?:be\s+)?(?:{_RETAINED}|stay|remain)\b"
_PASSIVE = re.compile(
    # "X needs to go", "can X be deleted?", "X shouldn't be remembered"
    rf"\b(?:needs? to|has to|have to|must|should|ought to|can|could|may|will|would|shall)\b.{{0,60}}?\bbe "
    rf"{_PARTICIPLE}\b|\b(?:needs? to|has to|have to|must|should|ought to) go\b|\b(?:being|get|gets) {_PARTICIPLE}\b"
    # "I want X gone", "have X removed", "make sure X is wiped"
    rf"|\b(?:want|like|need|have|get|make sure|ensure|see to it that)\b.{{1,60}}?\b(?:is |are |gets? )?"
    rf"{_PARTICIPLE}\b"
    # "make it gone", "can you make that disappear from your memory?"
    r"|\bmake\b.{1,60}?\b(?:gone|disappear|vanish|go away)\b"
    # "I'd prefer it is not kept", "I would feel better if that weren't stored", "it shouldn't stay on file"
    rf"|\b(?:not|never|no longer|wasn't|weren't|isn't|aren't)\b (?:be |been |being |to be |get |getting )?"
    rf"(?:{_RETAINED})\b"
    # "Neither Elif's girlfriend nor Deniz's nose job should be remembered"
    rf"|\bneither\b[^.?!]{{1,80}}?\bnor\b[^.?!]{{1,80}}?\b{SHOULD_NOT_STAY}"
)

# A deletion verb whose object is a whole clause, a fact stated after "that": "forget that I'm vegan", "delete that
# my sister lives in Porto", "forget that the author was born in 1956". "That" alone, or before a noun, points at
# something just said or suggested ("forget that, I'll do it later", "scrap that last idea") and does not fire; a
# run of seven words or more after "that" with no pause is read as a clause.
_SUBJECT = (r"(?:i|i'm|im|i'd|i've|i'll|we|we're|we've|he|he's|she|she's|they|they're|you|you're|it's|it was|it is|"
            r"there|my|our|his|her|their|the|a|an|in|when|during|since)")
_FACT_VERB = (r"(?:is|was|were|are|has|had|have|'s|can|will|would|did|does|do|got|works?|lives?|loves?|likes?|"
              r"hates?|wrote|writes|began|grew|identifies|finds|went|moved|used|owns?)")
_THAT_CLAUSE = re.compile(
    rf"\b(?:{IMPERATIVE_VERBS})\b (?:about |the fact )?that ['\"]?(?:{_SUBJECT} |[a-z]+ing |"
    rf"[a-z'-]+(?: [a-z'.\"-]+){{0,3}} {_FACT_VERB} |[a-z'\"-]+(?: [a-z'.\"+-]+){{6}})"
)

# The user is the one who deletes, and nothing points at the assistant: "I have a tattoo of his name, I want to
# remove it", "we're going to clear out the garage".
_USER_DOES_IT = re.compile(
    rf"\b(?:i|we)(?:'m| am|'re| are)? (?:want|need|'d like|would like|have|plan|planning|going|gonna|will|'ll|"
    rf"try|trying|decided|hope|hoping)(?: to)? (?:finally |just |also )?(?:{DELETE_VERBS})\b"
    r"(?![^.?!]*\b(?:you|your|u|ur|yours)\b)"
)
# Something told to someone else, or posted somewhere: regret about it is no request to the assistant ("I regret
# telling my sister about the loan", "I shouldn't have posted that on insta").
_TOLD_OTHERS = re.compile(
    r"\b(?:told|tell|telling|said|saying|mentioned|mentioning|shared|sharing|posted|posting|sent|sending|showed|"
    r"showing|texted|texting)\b(?:(?! (?:you|u|about|i|i'm|where|how|what|any|all|every|everything)\b) [\w']+){0,2}? "
    r"(?:to|with|on|in front of) (?:my|his|her|their|"
    r"our|the|a|an|everyone|everybody|people|instagram|insta|facebook|twitter|tiktok|whatsapp)\b(?! (?:memory|chat)\b)"
    r"|\b(?:told|tell|telling|texted|texting) (?:my|his|her|our|their) [a-z]+"
)
# "Forget it, I'll just call them myself", "never mind, I found it": giving up on the current question.
_NEVER_MIND = re.compile(
    r"\bforget that (?:i'll|i will) (?:just|do it|figure|handle|ask|call|sort|look)\b|"
    r"(?:\b(?:forget it|never mind|nevermind|nvm)\b[,.!;:-]*|\bforget that\b[,.!;:-]+) (?:i'll|i will|i can|i found|"
    r"i figured|i got|i'll just|let's|lets|we'll|just|i just|i already|found it|figured it|i'm (?:going|gonna|just|"
    r"done|good|fine))\b"
)
# A text to write, translate or polish that itself asks for something to go: "Translate into German: 'Please
# forget what I said'", "help me write polite email: please remove me from your mailing list".
_WRITING_TASK = re.compile(
    r"^\W*(?:(?:please|pls|can you|could you|hey|ok|so)\W+)?(?:translate|rewrite|rephrase|reword|proofread|paraphrase|"
    r"make this|make it sound|fix|correct|improve|polish|shorten|summari[sz]e|write|draft|compose|reply to|respond to|"
    r"help (?:me )?(?:write|draft|reply|answer|word))\b[^\n]{0,80}?(?::\s*|\s+)['\"‘“]"
    r"|^\W*(?:(?:please|pls|can you|could you|hey|ok|so)\W+)?(?:help (?:me )?)?(?:write|draft|compose) "
    r"(?:a |an |the |my |this )?(?:[a-z]+ ){0,2}(?:msg|message|email|e-mail|text|reply|letter|note|post|caption|"
    r"tweet)\b[^:]{0,40}:"
)

# A rule for the future that takes something out of what the assistant knows: "from now on, my diagnosis is
# something you don't know", "going forward, the loan is off the table for you", "act as if the egg freezing idea
# was never mentioned", "X is not for you to keep".
_NO_LONGER_KNOWN = re.compile(
    r"\b(?:is|are|was|were|'s|isn't|aren't|wasn't)\s+(?:not |never |no longer )?(?:something|anything)\s+"
    r"(?:that\s+)?(?:(?:you|u)\s+(?:(?:don't|do not|never|no longer|shouldn't|should not|won't|will not|can't|cannot)"
    r"\s+)?(?:know|keep|remember|learned|learnt|heard|hold|have|store|are aware of|were told)|(?:you're|ur) aware of)\b"
    r"|\boff the (?:table|books|record) for (?:you|u)\b|\bnot for (?:you|u) to (?:keep|know|remember|have|hold)\b"
    r"|\bas far as (?:your memory goes|you'?re concerned)\b"
    r"|\b(?:act|behave) (?:as if|as though|like) [^.?!]{0,60}?\b(?:was|were|had been) never (?:mentioned|said|told|"
    r"shared|brought up)\b"
)

SIGNALS: dict[str, re.Pattern] = {
    "deletion_verb": _DEL,
    "request_to_you": _REQUEST,
    "stop_keeping": _STOP,
    "memory_of_you": _MEMORY,
    "everyday_object": _EVERYDAY,
    "keep_request": _KEEP,
    "reminder": _REMINDER,
    "self_forgetting": _SELF_FORGET,
    "howto_question": _HOWTO,
    "question": _QUESTION,
    "generic_memory_question": _GENERIC,
    "first_person_wish": _WISH,
    "narrative": _NARRATIVE,
    "complaint_or_hypothetical": _COMPLAINT,
    "asks_what_you_know": _WHAT_YOU_KNOW,
    "stop_doing_other": _STOP_OTHER,
    "passive_deletion": _PASSIVE,
    "that_clause": _THAT_CLAUSE,
    "user_does_it": _USER_DOES_IT,
    "told_someone_else": _TOLD_OTHERS,
    "never_mind": _NEVER_MIND,
    "writing_task": _WRITING_TASK,
    "no_longer_known": _NO_LONGER_KNOWN,
}
# Evidence for and against, pooled: a pooled cue still fires on phrasings no single signal was written for.
REQUEST_CUES = ("request_to_you", "stop_keeping", "first_person_wish", "passive_deletion")
ORDINARY_CUES = ("everyday_object", "keep_request", "reminder", "self_forgetting", "howto_question", "narrative",
                 "complaint_or_hypothetical", "asks_what_you_know", "stop_doing_other", "generic_memory_question",
                 "user_does_it", "told_someone_else", "never_mind", "writing_task")
SIGNAL_NAMES = [*SIGNALS, "first_person_target", "request_cue", "ordinary_cue", "rule_request"]


# Words that turn what follows around: "I don't want you to remember that", "I'd prefer you forgot".
_TURNED = re.compile(r"\b(?:don't|do not|no longer|stop|never|not|rather|wish|prefer|if|better|knowing|unless|"
                     r"no need)\b"
                     r"[^.?!]{0,24}$")
_UNLESS_TURNED = {"keep_request", "complaint_or_hypothetical"}


def _fires(name: str, pattern: re.Pattern, norm: str) -> bool:
    for found in pattern.finditer(norm):
        if name not in _UNLESS_TURNED or not _TURNED.search(norm, 0, found.start()):
            return True
    return False


# Any word or idiom that can carry a wish for something to be gone. A message with none of them ("what do you
# remember about me?", "your memory is terrible") is never a deletion request, whatever its topic.
_CUE = re.compile(
    rf"\b(?:{DELETE_VERBS})\b|\boff the (?:record|books)\b|\bout of (?:the|your|my) (?:records?|books|files|notes)\b|"
    rf"\b(?:not|no|no longer|never|stop|quit|don't|do not) (?:to )?"
    rf"(?:{_KEEP_VERBS}|know(?:ing)?|track(?:ing)?|hav(?:e|ing))\b|"
    r"\b(?:take|taking|took|leave|leaving|keep|keeping) (?:[\w'-]+ ){0,4}?(?:out|off)\b|"
    r"\b(?:unsee|unhear|unknow|unlearn|unremember|un-remember|unsaid|unsay)\b|\berasure\b|\bright to be forgotten\b"
    # Metaphors: "let it fade", "bury what I told you", "that never happened", "into the void"
    r"|\b(?:fade|fades|bury|burn|vanish|disappear|dissolve|evaporate)\b|\bnever happened\b"
    r"|\b(?:the|a) (?:void|shredder)\b"
    r"|\bgo up in smoke\b|\bwithdraw(?:n)?\b"
    # "cease to remember", "let it go from your side", "not something I want kept", "didn't live in your memory"
    rf"|\bcease (?:to )?(?:{_KEEP_VERBS}|know(?:ing)?)\b|\blet (?:it|that|this|them) go\b"
    r"|\bnot something (?:i|you) (?:want|need)\b|\b(?:didn't|did not|wouldn't|would not|doesn't|does not) (?:live|stay|"
    r"sit|remain) in your\b"
    r"|\b(?:something|anything) (?:that )?(?:you|u) (?:don't |do not |never |no longer )?(?:know|keep|remember|learned|"
    r"heard)\b|\bsomething (?:you're|ur) aware of\b|\boff the table\b|\bnot for (?:you|u) to (?:keep|know|remember)\b"
    r"|\bwas never mentioned\b|\bas far as your memory goes\b|\b(?:you|u) never (?:heard|learned|learnt|knew)\b"
    rf"|{_YOU_NOT_POSSESS}"
)


_NEGATED_DELETION = re.compile(rf"\b(?:don't|do not|never|please don't|no need to)\s+(?:ever\s+|you\s+)?"
                               rf"(?:{DELETE_VERBS})\b")


def keeps_only(text: str) -> bool:
    """Is every deletion verb in ``text`` negated ("don't erase what I told you about my ex"), with no other way of
    asking for something to go (a wish, a passive, "stop keeping")? Such a message asks to keep, not to forget."""
    norm = normalise(text)
    verbs = list(_DEL.finditer(norm))
    negated = {m.end() for m in _NEGATED_DELETION.finditer(norm)}
    if not verbs or any(v.end() not in negated for v in verbs):
        return False
    return not (_WISH.search(norm) or _PASSIVE.search(norm) or _STOP.search(norm))


def has_cue(text: str) -> bool:
    """Does ``text`` hold any word or idiom that can ask for something to be gone (or no longer kept)?"""
    norm = normalise(text)
    return bool(_CUE.search(norm) or _WISH.search(norm) or _PASSIVE.search(norm))


def signals(text: str) -> dict[str, int]:
    """The rule signals of ``text`` as {name: 0 or 1}, in ``SIGNAL_NAMES`` order."""
    norm = normalise(text)
    out = {name: int(_fires(name, pattern, norm)) for name, pattern in SIGNALS.items()}
    # Personal content after the deletion phrase: "forget *my* address", not "delete a git branch".
    found = _DEL.search(norm) or _STOP.search(norm)
    out["first_person_target"] = int(bool(found and _FIRST_PERSON.search(norm, found.end())))
    request = any(out[name] for name in REQUEST_CUES) or (out["deletion_verb"] and out["memory_of_you"])
    ordinary = any(out[name] for name in ORDINARY_CUES)
    out["request_cue"], out["ordinary_cue"] = int(request), int(ordinary)
    out["rule_request"] = int(request and not ordinary)
    return out
