"""Whether a text closes the conversation ("thanks, bye", "ok that's all", "gracias, eso es todo").

A sign-off is a flush trigger (seed 001: "conversation ended"): the package goes at once instead
of waiting out the idle window. The rule is strict on purpose, since a missed sign-off costs a few
minutes and a false one splits a package: the whole text must be made of closing phrases
(gratitude, a farewell, "that's all") and the small words around them ("ok", "great", "again",
"for your help"), with at least one phrase that closes. One other word anywhere ("thanks, the
sink still drips", "gracias pero sigue goteando") and it is not a sign-off. The one exception is
a name after a thanks or a farewell ("Thanks Ana!", "bye Vic"): a capitalised word there is
allowed once.

English and Spanish; accents, case, apostrophes, punctuation, emoji and drawn-out letters
("byeee", "graciasss") are ignored. Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["is_sign_off"]

MAX_SIGN_OFF_CHARS = 160
"""Longer than a text message's worth of goodbyes is a message with something in it."""

_CLOSING = """
    thanks | thank you | thank u | thankyou | thanx | thx | ty | tysm | tyvm | many thanks |
    thanks a lot | thanks a ton | thanks a bunch | thanks a million | much appreciated |
    appreciate it | appreciate you | appreciate that | appreciate your help | appreciated |
    cheers | bye | bye bye | byebye | goodbye | good bye | bye for now | see you | see ya | cya |
    talk later | talk soon | talk to you later | ttyl | later | take care | good night | goodnight |
    nite | have a good day | have a nice day | have a great day | have a good one |
    have a good night | have a nice night | have a good evening | have a nice evening |
    have a good weekend | have a great weekend | have a nice weekend | have a great one |
    thats all | that is all | thats it | that is it | thatll be all | that will be all |
    thats everything | nothing else | nothing more | no more | all set | were all set |
    im all set | all good | were good | im good | were done | im done | done for now |
    that should be all | thats all i needed | thats all for now |
    gracias | muchas gracias | mil gracias | muchisimas gracias | gracias mil |
    se lo agradezco | te lo agradezco | le agradezco | te agradezco | agradecido | agradecida |
    adios | chao | chau | hasta luego | hasta pronto | hasta manana | nos vemos | buenas noches |
    que tenga buen dia | que tengas buen dia | que tenga un buen dia | que tengas un buen dia |
    que tenga buena noche | que tengas buena noche | que tenga buenas noches |
    que tenga buena tarde | que tengas buena tarde | buen dia | buen fin de semana |
    feliz dia | cuidese | cuidate | saludos | bendiciones | eso es todo | es todo |
    eso seria todo | seria todo | eso era todo | era todo | nada mas | nada mas por ahora |
    ya es todo | ya esta todo | todo bien | estamos bien | estoy bien
"""
"""Phrases that close: gratitude, a farewell, "nothing more"."""

_AROUND = """
    ok | okay | okey | oki | k | kk | alright | all right | great | perfect | awesome | cool |
    nice | good | excellent | wonderful | lovely | sounds good | got it | understood | noted |
    sure | yes | yeah | yep | no | nope | and | so | so much | very much | again | a lot |
    for everything | for your help | for the help | for all your help | for helping |
    for the update | for letting me know | for that | for now | you too | to you too | as well |
    oh | ah | well | then | all | that | guys | everyone | again then | for all | really |
    vale | perfecto | perfecta | listo | lista | bueno | muy bien | de acuerdo | entendido |
    genial | excelente | claro | si | y | pues | entonces | muchas | por todo | por su ayuda |
    por tu ayuda | por la ayuda | por avisar | por el aviso | igualmente | usted tambien |
    tu tambien | otra vez | de nuevo | por ahora | senor | senora | amigo | amiga | ok gracias
"""
"""Words that may stand around a closing phrase, and are not one by themselves."""


def _phrases(source: str) -> frozenset[tuple[str, ...]]:
    return frozenset(tuple(p.split()) for p in source.split("|") if p.strip())


_CLOSING_PHRASES = _phrases(_CLOSING)
_AROUND_PHRASES = _phrases(_AROUND)
_LONGEST = max(len(p) for p in _CLOSING_PHRASES | _AROUND_PHRASES)
_ADDRESSED_AFTER = frozenset(
    {("thanks",), ("thank", "you"), ("thx",), ("bye",), ("goodbye",), ("gracias",), ("adios",)}
    | {("cheers",), ("chao",), ("chau",), ("thank", "u")}
)
"""A name may follow these ("Thanks Ana", "gracias Luis")."""

_TOKEN = re.compile(r"[^\W\d_]+|\d+|[^\w\s]", re.UNICODE)
_DRAWN_OUT = re.compile(r"(\w)\1{2,}")


def _fold(text: str) -> str:
    """Accents off, curly apostrophes straight, apostrophes dropped ("that's" → "thats")."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return bare.replace("\u2019", "'").replace("'", "")


def _words(text: str) -> list[tuple[str, bool]] | None:
    """The text's words, each folded and with whether it may be a name (capitalised, not at a
    sentence's start); None when it holds a digit (a unit, a time, a WO number: something to
    act on)."""
    words: list[tuple[str, bool]] = []
    sentence_start = True
    for token in _TOKEN.findall(_fold(text.replace("\n", "."))):
        if token.isdigit():
            return None
        if token[0].isalpha():
            named = token[0].isupper() and not sentence_start
            words.append((_DRAWN_OUT.sub(r"\1", token.lower()), named))
            sentence_start = False
        elif token in ".!?;:":
            sentence_start = True  # "Thanks. Fire!" names no one
    return words


def is_sign_off(text: str) -> bool:
    """True when ``text`` says nothing but that the conversation is over (see the module doc)."""
    if len(text) > MAX_SIGN_OFF_CHARS:
        return False
    words = _words(text)
    if not words:
        return False
    tokens = [w for w, _ in words]
    n = len(tokens)
    # best[i]: the ways to cover tokens[:i], as (closes, name used): phrases in any order.
    best: list[set[tuple[bool, bool]]] = [set() for _ in range(n + 1)]
    best[0].add((False, False))
    for i in range(n):
        if not best[i]:
            continue
        for length in range(1, min(_LONGEST, n - i) + 1):
            phrase = tuple(tokens[i : i + length])
            closes = phrase in _CLOSING_PHRASES
            if closes or phrase in _AROUND_PHRASES:
                best[i + length] |= {(c or closes, named) for c, named in best[i]}
        # A capitalised name right after a thanks or a farewell, once.
        addressed = any(
            i >= len(p) and tuple(tokens[i - len(p) : i]) == p for p in _ADDRESSED_AFTER
        )
        if addressed and words[i][1]:
            best[i + 1] |= {(c, True) for c, named in best[i] if not named}
    return any(closes for closes, _ in best[n])
