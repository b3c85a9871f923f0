"""Completion from the field, read without a model: a vendor's "it's done", and the tenant's
answer to "Vic says … is fixed — all good?" (docs/completion.md).

Asymmetric on purpose (seed 000, I3): a report that is not a completion ("done for today",
"will finish tomorrow", "almost done") must never read as one, so any sign that work is left
wins over any word of being done; a miss only costs the vendor a second text. The tenant's
side is the other way round: anything that sounds like something is still wrong is a complaint
(it goes back to the vendor); only a plain yes, with nothing wrong said, confirms.

Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["confirms_done", "disputes_done", "reports_done", "which_done"]


def _fold(text: str) -> str:
    """Lower case, accents dropped ("quedó" → "quedo"), curly apostrophes straightened."""
    decomposed = unicodedata.normalize("NFKD", text.lower().replace("’", "'"))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _words(pattern: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w']){pattern}(?![\w'])")


# What vendors text when a job is finished, in English and Spanish (accents folded).
_DONE = re.compile(
    "|".join(
        (
            r"(?<![\w'])(?:all\s+|job\s+|work\s+|i'?m\s+|we'?re\s+|it'?s\s+|is\s+|all\s+)?"
            r"(?:done|finished|complete|completed)(?![\w'])",
            r"(?<![\w'])(?:fixed|repaired|replaced|installed|unclogged|cleared|swapped|patched|"
            r"sealed|resolved|sorted|serviced)(?![\w'])",
            r"(?<![\w'])(?:wrapped|wrapping)\s+(?:it\s+|things\s+|everything\s+)?up(?![\w'])",
            r"(?<![\w'])all\s+(?:set|good|sorted|fixed|squared\s+away)(?![\w'])",
            r"(?<![\w'])good\s+to\s+go(?![\w'])",
            r"(?<![\w'])taken\s+care\s+of(?![\w'])",
            # Whatever it does, it does it right now: "slides fine now", "should be good now".
            r"(?<![\w'])(?:fine|good|great|properly|perfectly|normally)\s+now"
            r"(?![\w'])",
            r"(?<![\w'])(?:works?|working|runs?|running|drains?|draining|flushes)\s+"
            r"(?:fine|great|good|perfectly|properly|normally|again|now)(?![\w'])",
            # Spanish
            r"(?<![\w'])ya\s+(?:quedo|esta|estuvo)(?![\w'])",
            r"(?<![\w'])quedo\s+(?:listo|lista|bien|arreglad[oa]|reparad[oa])(?![\w'])",
            r"(?<![\w'])(?:terminad[oa]s?|termine|terminamos|list[oa]s?|arreglad[oa]s?|arregle|"
            r"reparad[oa]s?|repare|completad[oa]s?|complete|hechos?)(?![\w'])",
            r"(?<![\w'])trabajo\s+(?:hecho|terminado|completado)(?![\w'])",
            r"✅|☑️|✔️?",
        )
    )
)

# Signs that work is left: any of them and it is not a completion.
_NOT_YET = re.compile(
    "|".join(
        (
            r"(?<![\w'])(?:not|isn'?t|aren'?t|wasn'?t|ain'?t|never)\s+(?:\w+\s+){0,2}"
            r"(?:done|finished|complete|completed|fixed|repaired|set|good|working)(?![\w'])",
            r"(?<![\w'])(?:haven'?t|hasn'?t|didn'?t|couldn'?t|can'?t|won'?t|unable\s+to)\s+"
            r"(?:\w+\s+){0,2}(?:finish|fix|complete|repair|get|do|wrap)",
            r"(?<![\w'])(?:almost|nearly|mostly|partly|partially|half(?:way)?|about\s+to\s+be|"
            r"close\s+to\s+being|not\s+quite)\s+(?:\w+\s+)?(?:done|finished|complete|there)",
            r"(?<![\w'])done\s+for\s+(?:today|the\s+day|now|tonight|the\s+night|the\s+week)",
            r"(?:(?<![\w'])(?:will|gonna|going\s+to|should|plan\s+to|hope\s+to|need\s+to|"
            r"have\s+to|must)|'ll)\s+(?:\w+\s+){0,2}(?:finish|be\s+done|wrap|complete|come\s+back|"
            r"return|go\s+back)",
            r"(?<![\w'])(?:finish|finishing|wrap(?:ping)?\s+up|complete|be\s+done|be\s+back|"
            r"come\s+back|coming\s+back)\s+(?:\w+\s+){0,3}(?:tomorrow|tmrw|later|monday|tuesday|"
            r"wednesday|thursday|friday|saturday|sunday|next\s+week|next\s+time|in\s+the\s+"
            r"morning)",
            r"(?<![\w'])(?:still|yet\s+to)\s+(?:need|needs|have|has|got|working|waiting|to|"
            r"leaking|dripping|broken|not)",
            r"(?<![\w'])(?:waiting\s+(?:on|for)|ordered|order(?:ing)?\s+(?:a|the)|need\s+(?:a|"
            r"the|another|to\s+order)|needs\s+(?:a|the|another|to\s+be))\s+(?:\w+\s+)?"
            r"(?:part|parts|piece|replacement|valve|cartridge|motor|pump|compressor)",
            r"(?<![\w'])(?:once|when|after|as\s+soon\s+as|until)\s+(?:i'?m|we'?re|it'?s|i|we|"
            r"it|the\s+\w+)\s+(?:\w+\s+)?(?:done|finished|fixed|complete)",
            r"(?<![\w'])(?:needs?|has|have)\s+to\s+be\s+\w+",
            r"(?<![\w'])(?:done|finished|fixed|complete)\s+by\s+(?:\d|noon|tonight|tomorrow|"
            r"the\s+end|end\s+of|monday|tuesday|wednesday|thursday|friday|saturday|sunday)",
            r"(?<![\w'])back\s+(?:\w+\s+){0,3}(?:tomorrow|tmrw|later|monday|tuesday|wednesday|"
            r"thursday|friday|saturday|sunday|next\s+week|in\s+the\s+morning)",
            r"(?<![\w'])(?:first|one)\s+(?:part|half|step|coat|side|stage)(?![\w'])",
            r"(?<![\w'])for\s+now(?![\w'])",
            r"(?<![\w'])(?:isn'?t|aren'?t|not|hasn'?t|haven'?t)\s+(?:\w+\s+)?yet(?![\w'])",
            # A caveat: the rest is news for the record, not a clean completion.
            r"(?<![\w'])(?:but|however|except|although|though)(?![\w'])",
            r"(?<![\w'])needs?\s+(?:\w+\s+)?\w+ing(?![\w'])",
            r"(?<![\w'])list[oa]\s+para(?![\w'])",
            r"(?<![\w'])temporar(?:y|ily)(?![\w'])",
            # Spanish
            r"(?<![\w'])(?:no|todavia\s+no|aun\s+no|aun\s+no\s+esta|todavia\s+no\s+esta)\s+"
            r"(?:\w+\s+){0,2}(?:termin\w*|quedo|esta\s+list[oa]|arregl\w*|complet\w*|list[oa])",
            r"(?<![\w'])(?:todavia|aun|falta|faltan|casi|pero)(?![\w'])",
            r"(?<![\w'])(?:mañana|manana)\s+(?:\w+\s+){0,2}(?:termin\w*|vuelvo|regreso|sigo|paso|vengo|voy)",
            r"(?<![\w'])(?:termino|terminare|vuelvo|regreso|sigo)\s+(?:\w+\s+){0,2}(?:mañana|"
            r"manana|luego|despues|el\s+lunes|la\s+proxima)",
            r"(?<![\w'])por\s+hoy(?![\w'])",
        )
    )
)


def reports_done(text: str) -> bool:
    """Whether a vendor's ``text`` reports the job finished: words of being done, and no sign
    of work left; a question ("done?") reports nothing."""
    folded = _fold(text)
    if _NOT_YET.search(folded):
        return False
    for sentence in re.split(r"(?<=[.!?\n])\s*", folded):
        hit = _DONE.search(sentence)
        if hit is not None and not sentence.rstrip().endswith("?"):
            return True
    return False


# What is left of "2 is done", "both are finished", "la 1 ya está lista" once the words of being
# done are out: the verb before them.
_LINKING = re.compile(r"(?<![\w'])(?:is|are|was|were|esta|estan|son|ya)\s*$")


def which_done(text: str) -> str:
    """A vendor's answer to "which of these jobs is finished?" without its words of being done
    ("2 is done" → "2", "both are finished" → "both", "all done" → "all", "la 1 ya quedó" →
    "la 1"), for the answer reader; unchanged when it says work is left ("1 is done, 2 isn't
    yet")."""
    folded = _fold(text)
    if _NOT_YET.search(folded):
        return text
    kept = " ".join(_LINKING.sub(" ", _DONE.sub(" ", folded).rstrip(" .!")).split())
    if not kept:
        # "all done" alone: all of them; "done" alone picks nothing (asked again).
        return "all" if folded.lstrip().startswith("all") else text
    return kept


# The tenant's side: a plain yes (English or Spanish), or words that the job holds up.
def _vocab(words: str) -> frozenset[str]:
    return frozenset(words.split())


_YES_WORDS = _vocab(
    "yes y yeah yea yep yup ya yess yesss si sure correct confirmed confirm affirmative ok okay "
    "k great perfect awesome excellent good fine thanks thank you thx ty gracias perfecto bien "
    "bueno claro all looks seems it is its works working everything now todo esta funciona "
    "much so very indeed totally definitely absolutely de acuerdo vale"
)
# A word that can open a plain yes. The tenant was just asked "All good? Reply YES, or tell us
# what's still wrong": an ok or a thanks with nothing else said answers it as a yes does.
_YES_LEAD = _vocab(
    "yes y yeah yea yep yup ya yess yesss si sure correct confirmed confirm ok okay k thanks "
    "thank thx ty great perfect awesome excellent gracias perfecto vale claro"
)
# A thumbs-up or a check mark alone is a yes too.
_YES_MARKS = re.compile(
    "^[\\s!.]*(?:[\U0001f44d\U0001f44c\u2705\u2714\U0001f64f\U0001f64c]"
    "[\ufe0f\U0001f3fb-\U0001f3ff]?[\\s!.]*)+$"
)
_HOLDS_UP = re.compile(
    r"(?<![\w'])(?:all\s+good|looks\s+good|looks\s+great|works?\s+(?:now|great|fine|perfectly)|"
    r"working\s+(?:now|great|fine|perfectly)|it'?s\s+(?:fixed|good|fine|working|perfect)|"
    r"(?:todo\s+)?(?:esta\s+)?bien|todo\s+bien|funciona(?:\s+bien)?|ya\s+quedo|"
    r"(?:is|are)\s+(?:fixed|fine|good)|good\s+now|fixed\s+now|perfect)(?![\w'])"
)
_TOKEN = re.compile(r"[a-z0-9]+!?")

# Something still wrong: any of these and the answer is a complaint, not a yes.
_WRONG = re.compile(
    "|".join(
        (
            r"(?<![\w'])(?:no|nope|nah|not|isn'?t|aren'?t|wasn'?t|doesn'?t|don'?t|didn'?t|"
            r"won'?t|can'?t|never|still|again|worse|same|wrong|broken|broke|leak\w*|drip\w*|"
            r"clog\w*|problem|issue|stopped|loose|nothing|barely|only|except|but)(?![\w'])",
            r"(?<![\w'])(?:todavia|aun|sigue|siguen|otra\s+vez|gotea\w*|roto|rota|mal|nada|"
            r"pero|igual|tampoco)(?![\w'])",
        )
    )
)


def disputes_done(text: str) -> bool:
    """Whether the tenant's answer says something is still wrong ("still dripping", "no it's
    not fixed", "sigue goteando")."""
    return _WRONG.search(_fold(text)) is not None


def confirms_done(text: str) -> bool:
    """Whether the tenant's answer confirms the job is done: a plain yes ("YES", "yep all
    good", "sí, todo bien", "works great now, thanks"), with nothing wrong said."""
    folded = _fold(text)
    if disputes_done(folded):
        return False
    words = [w.rstrip("!") for w in _TOKEN.findall(folded)]
    if not words:
        return _YES_MARKS.match(text) is not None
    if len(words) > 12:
        return False
    if words[0] in _YES_LEAD and set(words) <= _YES_WORDS:
        return True
    return _HOLDS_UP.search(folded) is not None and len(words) <= 8
