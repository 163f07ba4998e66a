"""Deletion requests with words of another language mixed in, and chat shorthand, read as English.

People who write to the assistant in English often switch language for the word that matters most: "porfa borra
lo de Ramiro", "apaga aí what I said", "aadhaar wala number hata do", "that about prison. zapomnij". ``gloss``
rewrites a small lexicon of such words into English: the verbs that ask for something to be forgotten, deleted or
removed (Spanish, Portuguese, French, Italian, German, Polish, Hindi/Urdu written in Latin letters, Tagalog,
Indonesian), the ways of saying "please", "I don't want you to ..." and "I forgot" in those languages, and chat
shorthand ("rmv", "del my ...") and learner grammar ("i no want") around them. Nothing else is translated: the
rest of the message keeps its words, and a message with none of these words comes back unchanged.

The rule signals read the glossed text; the detector's features are of the message as written, so the turn's one
pass through the model serves it as well. The past tenses are glossed as well ("se me olvidó", "esqueci",
"zapomniałam" -> "I forgot"), so the user's own forgetting stays recognisable as such in any of these languages.
"""

from __future__ import annotations

import re
from functools import cache

from stop_words import get_stop_words

# Object pronouns that may follow a glossed verb ("olvida eso", "efface ça", "usuń to", "apaga aí", "isse hata do").
_PRONOUN = (r"(?:\s+(?P<p>eso|esto|isso|isto|aquilo|ça|ca|cela|das|to|aí|ai|yeh|ye|woh|wo|ise|use|isse|eto|questo|"
            r"quello|onu|bunu|şunu|hii|hiyo|hilo|hada|haida|hatha|itu|ini))?")

# (pattern, English): each pattern is a whole word or phrase, matched without regard to case.
_VERBS: list[tuple[str, str]] = [
    # Spanish
    (r"olv[ií]date de(?:l)?", "forget about"),
    (r"olv[ií]date", "forget"),
    (r"olv[ií]d(?:a|e|en|es|ar)(?P<c>lo|la|los|las|le)?", "forget"),
    (r"b[oó]rr(?:a|e|en|es|ar)(?P<c>lo|la|los|las|le)?", "delete"),
    (r"elim[ií]n(?:a|e|en|es)(?P<c>lo|la|los|las)?", "delete"),
    (r"qu[ií]ta(?P<c>lo|la|los|las|le)?", "remove"),
    (r"suprim(?:e|a|elo|ela)", "delete"),
    # Portuguese
    (r"apag(?:a|ue|uem|ar|ues)(?P<c>-o|-a)?", "delete"),
    (r"esque(?:ce|ça|ca|çam|cer|cam)(?P<c>-o|-a)?", "forget"),
    (r"delet(?:a|ar)", "delete"),
    (r"exclu(?:a|i|ir)", "delete"),
    (r"tir(?:a|ar)(?P<c>-o|-a)?", "remove"),
    # French
    (r"oubli(?:e|ez)", "forget"),
    (r"effac(?:e|ez)", "delete"),
    (r"supprim(?:ez)", "delete"),
    # Italian
    (r"dimentic(?:a|ala|alo|ate)", "forget"),
    (r"cancell(?:a|ala|alo|ate)", "delete"),
    # German
    (r"vergiss|vergesst", "forget"),
    (r"l[öo]sch(?:e|en|t)?", "delete"),
    (r"entfern(?:e|en|t)?", "remove"),
    # Polish
    (r"zapomnij(?:cie)?", "forget"),
    (r"usu[ńn](?:cie)?|usun(?:ąć|ac)", "delete"),
    (r"skasuj(?:cie)?", "delete"),
    (r"wyma[żz](?:cie)?", "erase"),
    (r"wyrzu[ćc](?:cie)?", "throw away"),
    # Hindi / Urdu in Latin letters: the verb after its object ("number hata do")
    (r"hat(?:a|aa)\s*(?:do|de|dena|dijiye|dijie|dijiyega)|hatao|hatado", "remove"),
    (r"mit(?:a|aa)\s*(?:do|de|dena|dijiye|dijie)|mitao|mitado", "erase"),
    (r"nik(?:a|aa)l\s*(?:do|de|dena|dijiye)|nikalo", "remove"),
    (r"bh[uo]o?l\s*(?:ja|jao|jaa|jaao|jana|jaana|jaiye|jaaiye|jaiyega)", "forget"),
    # Tagalog: the imperative with "mo" (you), "paki-" (please) and "na" (already)
    (r"kalimutan(?:\s+mo)?(?:\s+na)?", "forget"),
    (r"paki-?bura(?:hin)?|burahin(?:\s+mo)?(?:\s+na)?", "delete"),  # not a bare "bura" (Hindi for "bad")
    (r"(?:paki-?)?tanggal(?:in)?(?:\s+mo)?(?:\s+na)?", "remove"),
    # Indonesian / Malay
    (r"lupakan|lupain", "forget"),
    (r"hapus(?:kan|in)?", "delete"),
    # Dutch
    (r"vergeet|vergeten", "forget"),
    (r"verwijder(?:en)?", "delete"),
    # Swahili
    (r"sahau", "forget"),
    (r"futa", "delete"),
    # Turkish: "unut" alone; "sil" (delete) only with its object, as "sil" is English too
    (r"unut(?:ur musun|urmusun|ur|)", "forget"),
    (r"sil(?= (?:onu|şunu|bunu|sunu|bunu)\b)", "delete"),
    # Arabic in Latin letters
    (r"ensa(?:ha|h|ho)?|insa(?:ha|h|ho)?", "forget"),
    (r"(?:imsa7|emsa7|emsah|imsah|ems7)(?:ha|o|oh|y|i)?", "delete"),
    (r"shilha|shilo|sheelha|sheelo", "remove"),
    # French, more forms
    (r"oublier", "forget"),
    (r"supprime(?:r)?|effacer", "delete"),
    (r"enl[eè]ve(?:r|z)?", "remove"),
    # Italian, more forms
    (r"scord(?:ati|alo|ala|a)", "forget"),
    (r"togli(?:lo|la)?|rimuovi(?:lo|la)?", "remove"),
    # Dutch: "wis" (erase) only with its object
    (r"wis(?= (?:het|dat|dit|alles)\b)", "erase"),
    # Russian and Ukrainian in Latin letters
    (r"zabud(?:'|ʹ|te|ʹte|'te|j)?", "forget"),
    (r"udal(?:i|ite)|vydal(?:y|i)|sotri", "delete"),
    # Czech and Slovak
    (r"zapome[ňn]|zabudni", "forget"),
    (r"sma[žz]|vyma[žz]", "delete"),
    # Croatian, Serbian, Bosnian
    (r"zaboravi", "forget"),
    (r"izbri[šs]i|obri[šs]i", "delete"),
    # Romanian
    (r"uită|uitaţi|uitați", "forget"),
    (r"[șşs]terge", "delete"),
    # Hungarian
    (r"felejtsd el", "forget"),
    (r"t[öo]r[öo]ld", "delete"),
    # Greek in Latin letters
    (r"xe(?:h|ch|x)ase|ksexase|kse(?:h|ch)ase", "forget"),
    (r"svise(?:to|ta)?", "delete"),
    # Turkish, more forms
    (r"siler misin|silebilir misin|silin", "delete"),
    # Persian in Latin letters
    (r"faram[ou]u?sh k[ou]n", "forget"),
    (r"pak(?:esh)? kon", "delete"),
    # Hebrew in Latin letters
    (r"tishkach|tishkechi|tishkekhi", "forget"),
    (r"timchak|timchaki|timchok", "delete"),
    # Bengali in Latin letters
    (r"bhule (?:jao|ja|jeo|jaan)", "forget"),
    (r"much(?:h)?e (?:dao|de|felo|fel)", "erase"),
    # Tamil and Telugu in Latin letters
    (r"marandh?(?:udu|idu|uru|urunga)|maranth(?:udu|idu|uru)", "forget"),
    (r"azhich(?:idu|udu|iru)", "erase"),
    (r"marchipo(?:ndi|o)?", "forget"),
    # Malay, more forms
    (r"padam(?:kan)?", "delete"),
    (r"buang(?:kan)?", "throw away"),
    # Vietnamese, with its marks (without them "quen" and "xoa" are other words) or its "đi"
    (r"(?<!đã )quên(?! mất)(?: đi| di)?|quen (?:đi|di)", "forget"),
    (r"x[oó]a(?: đi| di)?|xoá(?: đi| di)?", "delete"),
    # Korean in Latin letters
    (r"ij(?:eo|u)(?:jwo|juseyo|jullae|beoryeo|beoryeojwo)", "forget"),
    (r"jiwo(?:jwo|juseyo|jullae|beoryeo)?", "erase"),
    (r"sakje(?:hae|haejwo|haejuseyo|hae juseyo)", "delete"),
    # Japanese in Latin letters
    (r"wasurete(?: kudasai)?", "forget"),
    (r"keshite(?: kudasai)?|sakujo shite(?: kudasai)?", "delete"),
    # Chinese in pinyin
    (r"wang(?:le| le|diao| diao)(?: ba)?", "forget"),
    (r"shan(?:chu| chu|diao| diao)", "delete"),
    # Swahili, Zulu, Yoruba, Igbo, Somali, Afrikaans
    (r"ondoa", "remove"),
    (r"khohlwa|gbagbe|chefuo|iska ilow", "forget"),
    (r"susa", "remove"),
    (r"vee uit|verwyder", "delete"),
    # Nigerian Pidgin: "comot am" (take it out)
    (r"c(?:o|om)mot|komot", "remove"),
]
# The same deletion verbs in English, made imperative with a Hindi helper: "delete kr do", "forget kar dena".
# So do Tamil, Telugu and Bengali ones: "delete pannidu", "delete cheyyi", "delete kore dao".
_HELPED = (r"(?P<h>delete|remove|erase|forget|clear|wipe)\s+(?:kr|kar|kardo|krdo|karo|kro|pannu|pannidu|pannunga|"
           r"panniru|pannirunga|cheyyi|cheyandi|cheseyi|chey|kore dao|kore de|koro)"
           r"(?:\s*(?:do|de|dena|dijiye|dijie|na))?")
# Not a punctuation mark said aloud when a determiner names it as a thing: "where does the comma go?"
_SAID_ALOUD = r"(?<!\ba )(?<!\ban )(?<!\bthe )(?<!\bthis )(?<!\bthat )(?<!\bno )(?<!\boxford )(?<!\bany )"
# "period" said aloud only at the end, after a word a sentence ends with: "keep the other one period", never "after
# a long period".
_PERIOD_SAID = "(?:" + "|".join(rf"(?<=\b{w} )" for w in "one it that this them mine please pls now thanks".split()) + \
    r")period(?=\W*$)"
_PHRASES: list[tuple[str, str]] = [
    # What turns a verb into a request, or a wish
    (r"n[aã]o quero que(?: voc[eê]| vc| tu)?", "I don't want you to"),
    (r"no quiero que", "I don't want you to"),
    (r"(?:wag|huwag) mo(?: na)? (?:tandaan|alalahanin)", "don't remember"),
    (r"ich (?:will|möchte|mochte) nicht,? dass du", "I don't want you to"),
    (r"je (?:ne )?veux pas (?:que (?:tu|vous))", "I don't want you to"),
    (r"non voglio che(?: tu)?", "I don't want you to"),
    (r"(?:main |mai )?nahi? chaht(?:a|i)(?: h[uo]o?n?)?(?: ki)?(?: (?:tum|aap|tu))?", "I don't want you to"),
    (r"yaad (?:mat|na) rakh(?:o|na|iye|ein)", "don't remember"),
    (r"yaad rakh(?:o|na|iye|ein)", "remember"),
    (r"nie chc[eę],? (?:[zż]eby|aby)(?:[sś]|ś)?", "I don't want you to"),
    (r"saibas|saiba|sepas|sepa", "know"),
    (r"(?:lo |la |los |las |o |a )?guard(?:es|e|ar)", "keep"),
    (r"recuerdes|lembres|lembre", "remember"),
    (r"pode|podes|puedes|podr[ií]as|poderia|potresti|kannst du|mo[żz]esz", "can you"),
    (r"fai(?:s|tes) comme si", "act as if"),
    # "Please" and its cousins
    (r"por favor|porfa|porfis|porfavor|pfv|pfvr|s'il (?:te|vous) pla[iî]t|svp|per favore|bitte|"
     r"prosz[eę]|kripya|kripaya|tolong|pakiusap|tafadhali|l[üu]tfen|min fad(?:lak|lik|lek)|law samaht(?:i)?|"
     r"parakal[oó]|vui lòng|làm ơn|pozhalu(?:y|j)sta|molim|pros[ií]m|lotfan|bevakasha|onegai(?:shimasu)?|"
     r"kudasai|juseyo|abeg", "please"),
    # Nigerian Pidgin's "am" (it) after a verb: "forget am", "remove am"
    (r"forget am", "forget it"),
    (r"delete am", "delete it"),
    (r"remove am", "remove it"),
    (r"erase am", "erase it"),
    # Pointers to a topic: "lo de Ramiro", "sobre minha mãe", "ayesha ke baare me"
    (r"lo de(?:l)?|lo que dije (?:de|sobre)", "the thing about"),
    (r"sobre", "about"),
    # The user's own forgetting, in the past tense
    (r"se me olvid[oó]|olvid[eé]|esqueci|zapomnia(?:ł|l)(?:am|em)|j'ai oubli[eé]|ho dimenticato|"
     r"ich habe vergessen|bh[uo]o?l (?:gaya|gayi|gya|gyi)|mi sono (?:dimenticat|scordat)[oa]|quên mất|đã quên|"
     r"zabyl(?:a)?|ijeo(?:beoryeo)?sseo|wasure(?:ta|chatta)|maranth?(?:uten|utten|dhuten|dhutten)|"
     r"bhule (?:gechi|gesi|gelam)|unuttum|x(?:e|a)(?:h|ch)asa|shachachti|n(?:a)?s(?:ee|i)t|"
     r"(?:aku |saya |gue |gw )?lupa|nimesahau|zapomn[eě]l(?:a)? jsem", "I forgot"),
    # "How to" before a glossed verb: "como borrar ...", "photos kaise delete kare"
    (r"c[oó]mo(?: se)?(?= (?:delete|remove|forget|erase)\b)|kaise(?= (?:delete|remove|forget|erase|clear)\b)",
     "how to"),
    # Chat shorthand and learner grammar around a request
    (r"rmv|rmove|rmov", "remove"),
    (r"dlt|del(?=\s+(?:my|the|that|this|it|ur|your|all|everything|abt|about)\b)", "delete"),
    (r"4get|frget|fgt", "forget"),
    # Speech typed by a phone: "for get" heard as two words, punctuation said aloud ("delete that please comma
    # thanks", "keep the british one full stop"); never "the comma", "a full stop", "my period".
    (r"for get(?=\s+(?:it|that|this|them|those|about|abt|everything|all|what|the|my|where|how|any|anything|i|me)\b)",
     "forget"),
    (rf"{_SAID_ALOUD}comma", ","),
    (rf"{_SAID_ALOUD}full stop|{_PERIOD_SAID}", "."),
    (rf"{_SAID_ALOUD}question mark", "?"),
    (rf"{_SAID_ALOUD}exclamation (?:mark|point)", "!"),
    (r"i no want|i not want", "I don't want"),
    (r"no need(?= (?:remember|keep|store|save|know|have|hold)\b)", "no need to"),
]


def _compile(pairs: list[tuple[str, str]], pronoun: bool) -> list[tuple[re.Pattern, str]]:
    tail = _PRONOUN if pronoun else ""
    return [(re.compile(rf"(?<![\w'-])(?:{p}){tail}(?![\w'-])", re.IGNORECASE), english) for p, english in pairs]


_VERB_PATTERNS = _compile(_VERBS, pronoun=True)
_PHRASE_PATTERNS = _compile(_PHRASES, pronoun=False)
_HELPED_PATTERN = re.compile(rf"(?<![\w'-]){_HELPED}(?![\w'-])", re.IGNORECASE)
# Tagalog's "paki-" (please) before an English verb: "pakidelete", "paki-forget".
_PAKI = re.compile(r"(?<![\w'-])paki-?(?=(?:delete|remove|erase|forget|clear|wipe)\b)", re.IGNORECASE)


def _object(match: re.Match) -> str:
    found = match.groupdict()
    return " that" if found.get("p") else " it" if found.get("c") else ""


def gloss(text: str) -> str:
    """``text`` with the lexicon's words in English ("porfa borra eso" -> "please delete that"); otherwise as is."""
    if not text:
        return text or ""
    out = _HELPED_PATTERN.sub(lambda m: m.group("h"), _PAKI.sub("please ", text))
    for pattern, english in _VERB_PATTERNS:
        out = pattern.sub(lambda m, english=english: english + _object(m), out)
    for pattern, english in _PHRASE_PATTERNS:
        out = pattern.sub(english, out)
    return out


# --- function words of other languages --------------------------------------------------------------------------
# A request written partly in another language ("Ce que je t'ai dit sur la santé d'Inès, please forget it") names
# its target with that language's function words around it: "que", "je", "sur", "la" say nothing about which
# statement is meant, and weighed as rare words they drown "Inès". The lists of the languages written in Latin
# letters come from the stop-words package; for languages it lists only in another script, or not at all, and
# which people often mix into English in Latin letters, short lists of our own.
_LATIN_SCRIPT = ("catalan", "czech", "danish", "dutch", "finnish", "french", "german", "hungarian", "indonesian",
                 "italian", "malaysian", "norwegian", "polish", "portuguese", "romanian", "slovak", "spanish",
                 "swedish", "turkish")
_OWN_LISTS = {
    "hindi_urdu": "hai hain tha thi the ho hoga hogi ka ki ke ko se ne mein mai main mera meri mere tera teri tere "
                  "uska uski uske woh wo yeh ye aur ya par pe bhi nahi nahin kya kyun jo jab tab toh hi wala wali "
                  "wale baat kuch abhi ab sab apna apni apne hum tum aap unka unki unke raha rahi rahe kar karo",
    "tagalog": "ang ng mga sa ko mo niya namin natin nila ako ikaw siya kami tayo sila yung iyong ito iyan iyon "
               "na pa po ba lang din rin naman kasi pero kung para may wala hindi amin akin atin ninyo nito niyan",
    "swahili": "na ya wa za la kwa ni si hii ile huo hiyo yangu yako wake wetu kuhusu lakini au kama pia sana "
               "kitu nilikuambia",
    "arabic_latin": "ana inta enta inti huwa hiya wa fi min ala 3ala ya yaani bas mish msh illi elli",
}
# The fewest different function words of one language that make a message partly written in it: "my son's car"
# holds two French ones and is English.
CODE_SWITCH_MIN = 3
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


@cache
def _function_words() -> tuple[frozenset[str], list[tuple[frozenset[str], frozenset[str]]]]:
    """English function words, and per other language: its function words, and those of them that are not also
    English ones (only these tell that a message is partly written in it)."""
    english = frozenset(w for w in get_stop_words("english") if _WORD.fullmatch(w))
    lists = [{w for w in get_stop_words(language) if _WORD.fullmatch(w)} for language in _LATIN_SCRIPT]
    languages = [(frozenset(words), frozenset(words - english)) for words in lists]
    languages += [(frozenset(words.split()), frozenset(words.split())) for words in _OWN_LISTS.values()]
    return english, languages


def foreign_function_words(text: str) -> set[str]:
    """The function words (lower case) of each other language ``text`` is partly written in: one with at least
    CODE_SWITCH_MIN different words of its own there, used at least half as often as English ones ("forget what I
    said about Dan and the door, we might die" holds three Dutch words, and is English)."""
    words = [w.lower() for w in _WORD.findall(text or "")]
    distinct = set(words)
    english, languages = _function_words()
    found: set[str] = set()
    for function_words, own in languages:
        theirs = sum(w in own for w in words)
        ours = sum(w in english and w not in function_words for w in words)
        if len(distinct & own) >= CODE_SWITCH_MIN and 2 * theirs >= ours:
            found |= distinct & function_words
    return found


def content_words_only(text: str) -> str:
    """``text`` glossed, without the function words of another language it is partly written in."""
    glossed = gloss(text)
    drop = foreign_function_words(glossed)
    if not drop:
        return glossed
    return _WORD.sub(lambda m: "" if m.group(0).lower() in drop else m.group(0), glossed)
