"""Which language a person reads: the directory's word first, else a guess from their message.

The guess tells Spanish from English only, and only when the message says enough: it counts
the short function words every sentence of a language is made of ("el", "que", "hay", "está";
"the", "is", "there", "my") and the marks only Spanish writes (ñ, ¿, ¡, an accented vowel).
Content words are left out on purpose: a hazard word in one language or the other says nothing
about the sentence around it. A message with no clear majority ("ok", "WO-204", "👍") is None:
the caller keeps English, the language every fixed text has.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

__all__ = ["DEFAULT_LANGUAGE", "detect_language", "in_language", "language_for"]

DEFAULT_LANGUAGE = "en"

_WORD = re.compile(r"[a-záéíóúüñ']+")
_SPANISH_MARKS = re.compile(r"[ñ¿¡áéíóú]")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that are common in one language and not words (or rare ones) in the other. Shared
# spellings ("a", "no", "me", "con", "favor", "real") count for neither.
_SPANISH = _words(
    """
    el la los las del de que y en por para una es está esta están estan hay mi mis su sus se
    muy pero como cómo tengo tiene tenemos ya yo aquí aqui hola gracias porque cuando cuándo donde
    dónde qué estoy estamos puede puedo necesito necesitamos algo lo nos le les desde todavía
    también tambien nada ahora hoy mañana ayer sí usted ustedes ellos nuestro nuestra este esto
    eso esa ese otra otro vez cuál cual quién quien huele viene vino hace
    """
)
_ENGLISH = _words(
    """
    the is are was were i i'm im my it it's its and to of in on at there this that with have
    had please thanks thank you your we our for from can will what when where just get got be
    been do does did don't dont hi hello here still again any some out up an not doesn't isn't
    won't can't would could should they their she his
    """
)


def detect_language(text: str) -> str | None:
    """The message's language, "es" or "en", when it says which; else None."""
    lowered = text.lower().replace("’", "'")
    words = _WORD.findall(lowered)
    spanish = sum(word in _SPANISH for word in words) + len(_SPANISH_MARKS.findall(lowered))
    english = sum(word in _ENGLISH for word in words)
    if spanish > english:
        return "es"
    if english > spanish:
        return "en"
    return None


def language_for(preferred: str | None, text: str = "") -> str:
    """The language to write in: the directory's preference, else the message's, else English."""
    if preferred:
        return preferred
    return detect_language(text) or DEFAULT_LANGUAGE


def in_language(texts: Mapping[str, str], language: str) -> str:
    """``texts`` (a text by language code, English always there) in ``language`` when it has a
    translation, else in English."""
    return texts.get(language) or texts[DEFAULT_LANGUAGE]
