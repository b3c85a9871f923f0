"""The safety floor's Spanish rules: the same hazards as a Spanish-speaking tenant texts them.

Spanish is texted the way it sounds: accents are left off ("calefaccion"), the silent h is
dropped or added ("uele", "umo"), and letters that sound alike are swapped (b/v, s/z/soft c,
k/hard c/qu, y/ll, "güele" for "huele"). So the rules never read the text as sent: they read
its *sound spelling* (:func:`sound_spelling`), where every such variant of a word is the same
string, and every rule is written in that spelling:

=======================  ===============================  ==================================
what the tenant types     the sound spelling               rule
=======================  ===============================  ==================================
á é í ó ú ü ñ             a e i o u u n                     accents off
h (not after c)           (nothing)                         silent h: "huele", "uele" → uele
v, z, x                   b, s, s                           "nevando" → nebando
c before e/i              s                                 "incendio", "insendio" → insendio
c elsewhere, qu+e/i, k    k                                 "quemado", "kemado" → kemado
cc, cs, ks                s                                 "calefacción" → kalefasion
ll                        y                                 "llamas", "yamas" → yamas
g before e/i, j           j                                 "congelado" → konjelado
gu + e/i                  g                                 "manguera" → mangera
gu + vowel, word start    u + vowel                         "güele", "guele" → uele
a doubled letter          one                               "fuegooo" → fuego
=======================  ===============================  ==================================

Like the English rules, no bare word fires alone ("la factura del gas", "fuegos artificiales",
"inundado de trabajo"): each needs the context that makes it an emergency (a smell of gas, smoke
coming out, water that will not stop, no heat with the cold). A Spanish negator in the same
clause ("no huele a gas", "no se siente ningún olor a gas", "sin olor") or a resolution after
the hit ("... ya se fue", "ya lo arreglaron") suppresses a hit, as "no"/"is gone now" do in
English. Each hit's span is mapped back to the text as sent.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from maestro.domain.safety_rules import Category, Rule, Severity, alt, compiled

__all__ = ["SPANISH_RULES", "SoundSpelling", "negated", "sound_spelling"]

_VOWELS = frozenset("aeiou")


@dataclass(frozen=True, slots=True)
class SoundSpelling:
    """A text in its sound spelling, and for each of its characters the span it came from."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the text as sent that ``text[start:end]`` came from."""
        return self.starts[start], self.ends[end - 1]


def _plain(char: str) -> str:
    """``char`` lower case with its accent off ("Á" → "a", "ñ" → "n")."""
    if char.isascii():
        return char.lower()
    lowered = char.lower()
    if len(lowered) != 1:
        return lowered[:1] or char
    decomposed = unicodedata.normalize("NFD", lowered)
    return decomposed[0] if decomposed[0].isascii() and decomposed[0].isalpha() else lowered


def _is_letter(char: str) -> bool:
    return char.isalpha()


def sound_spelling(text: str) -> SoundSpelling:
    """``text`` spelled as it sounds (see the module docstring); pure and deterministic."""
    plain = [_plain(c) for c in text]
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []

    def at(i: int) -> str:
        return plain[i] if 0 <= i < len(plain) else ""

    dropped: list[int] = []  # a silent letter's index, joined to the next letter's span

    def emit(char: str, start: int, end: int) -> None:
        if dropped:
            start = dropped[0]
            dropped.clear()
        if out and char.isalpha():
            last = out[-1]
            # "ks" is one sound (x, cc, cs); a doubled letter is one letter.
            if (last, char) == ("k", "s") or last == char:
                out[-1] = char
                ends[-1] = end
                return
        out.append(char)
        starts.append(start)
        ends.append(end)

    i = 0
    while i < len(plain):
        c, following = plain[i], at(i + 1)
        word_start = i == 0 or not _is_letter(at(i - 1))
        if c == "h" and at(i - 1) != "c":
            dropped.append(i)  # silent
            i += 1
            continue
        if c == "g" and following == "u" and at(i + 2) in _VOWELS:
            if word_start and at(i + 2) in "aeio":
                dropped.append(i)  # "güele", "guevo": the h-word said with a g
                i += 1
                continue
            if at(i + 2) in "ei":
                emit("g", i, i + 2)  # "manguera": the u is silent
                i += 2
                continue
        if c == "q" and following == "u" and at(i + 2) in "ei":
            emit("k", i, i + 2)
            i += 2
            continue
        if c == "l" and following == "l":
            emit("y", i, i + 2)
            i += 2
            continue
        if c == "c":
            emit("s" if following in ("e", "i") else ("c" if following == "h" else "k"), i, i + 1)
        elif c == "g" and following in ("e", "i"):
            emit("j", i, i + 1)
        elif c in ("v", "z", "x"):
            emit({"v": "b", "z": "s", "x": "s"}[c], i, i + 1)
        else:
            emit(c, i, i + 1)
        i += 1
    return SoundSpelling(text="".join(out), starts=tuple(starts), ends=tuple(ends))


# ---------------------------------------------------------------------------------------------
# Building blocks, all in the sound spelling.
# ---------------------------------------------------------------------------------------------

_NEGATOR = r"(?:no|ni|nunka|jamas|sin|tampoko)"
_JOINER = r"(?:y|e|o|pero|porke|pues|aunke|kuando|si|luego|despues|mientras|ademas)"
_SEP = r"[^\w.!?;:]+"


def _gap(n: int) -> str:
    """A separator plus up to ``n`` filler words that are neither negators nor joiners."""
    return rf"{_SEP}(?:(?!{_NEGATOR}\b|{_JOINER}\b)\w+{_SEP}){{0,{n}}}?"


_alt = alt


# "huele", "olía", "oliendo", "olor", "apesta", "hedor", "tufo", "peste"
_SMELL = (
    r"(?:uel(?:e|en|o|a)|ol(?:er|ia|ian|iendo|ido|iera|or|ores|orsito|orsote)|apest\w*|peste|"
    r"edor|tufo)"
)
_GAS = r"(?:gas|propano|gas\W+natural)"
_HUEVO = r"uebos?\W+podridos?"
_SMOKE = r"(?:umo|umito|umareda|umasal)"
_SMOKING = r"(?:umea\w*|echa(?:ndo)?\W+umo|sak(?:a|ando)\W+umo)"
_COMING = (
    r"(?:sale|salen|saliendo|salia|salio|sal[ei]|entra|entrando|se\W+mete|metiendose|kae|kaen|"
    r"kayendo|baja|bajando|echa|echando|brota|brotando|chorea\w*|sale\W+a\W+chorros)"
)
_PLACE = (
    r"(?:kasa|apartamento|departamento|depa|apto|depto|kuarto|rekamara|resamara|sala|kosina|"
    r"bano|pasiyo|edifisio|sotano|garaje|pisos?|eskaleras?|labanderia|komedor)"
)
_ELEC_PART = (
    r"(?:enchufes?|kontaktos?|tomakorientes?|tomas?\W+de\W+koriente|kables?|alambres?|"
    r"interuptor(?:es)?|apagador(?:es)?|paneles?(?:\W+elektriko)?|breakers?|breiker|"
    r"kaja\W+de\W+fusibles|fusibles?|medidor(?:es)?(?:\W+de\W+lus)?|estension(?:es)?|"
    r"multikontakto|regleta|sokets?|soket)"
)
_APPLIANCE = (
    r"(?:estufa|orno|mikroondas|sekadora|labadora|refrijerador|nebera|kalentador|kalefaktor|"
    r"kaldera|kalefasion|tostador|tele|televisor|ensendedor|ekipo|motor|bentilador|aire|"
    r"lampara|foko|plancha|kompu\w*|kargador)"
)
_FIRE = r"(?:fuego|fuegos|yamas|yamarada|insendios?|kemando(?:se)?|kemandose|ardiendo|arde)"
_BODY = (
    r"(?:mareo|mareos|marea\w*|dolor\w*\W+de\W+kabesa|duele\w*\W+(?:\w+\W+)?kabesa|"
    r"nause\w*|bomit\w*|gomit\w*|somnolient\w*|sueno|desmay\w*|atontad\w*|"
    r"no\W+(?:se\W+)?despierta\w*|mal\W+de\W+la\W+kabesa|nos\W+sentimos\W+mal|se\W+siente\w*\W+mal)"
)
_SOUNDING = (
    r"(?:suena|suenan|sonando|sono|sonaba|pita|pitan|pitando|pito|pitaba|chiya\w*|grita\w*|"
    r"se\W+(?:aktibo|prendio|disparo)|aktibad[ao]|aktib[oa]|no\W+(?:para|deja)\W+de\W+(?:sonar|"
    r"pitar)|no\W+para|marka|dise|indika)"
)
_CO_DEVICE = r"(?:alarmas?|detektor(?:es)?|sensor(?:es)?|monitor|aparato|medidor)"
_CO_NAME = r"(?:monosido\w*|monoksido|ko\b|c0\b|ko2\b|karbono)"
_COLD = _alt(
    r"frio\w*",
    r"elad[ao]s?\b",
    r"elando",
    r"ielo",
    r"konjel\w*",
    r"bajo\W+sero",
    r"menos\W+\d+",
    r"nieb\w*",
    r"neb(?:ando|ada|o|a)\b",
    r"tirit\w*",
    r"temblando",
    r"inbierno",
    r"(?<![\d.])(?:[0-9]|[1-5]\d|6[0-2])\W*(?:°|grados?)",
)
_HEAT = (
    r"(?:kalefasion|kalenton|kaldera|kalefaktor|radiador(?:es)?|kalentador\W+de\W+ambiente|"
    r"eater|boiler|furnace)"
)
_DEAD = _alt(
    r"no\W+(?:\w+\W+)?(?:funsiona|sirbe|prende|ensiende|kalienta|jala|arranka|trabaja|esta\W+"
    r"funsionando|kiere\W+prender|da\W+kalor|sale)",
    r"(?:se\W+)?(?:apago|deskompuso|murio|dano|rompio|bloko)",
    r"dejo\W+de\W+(?:funsionar|serbir|kalentar)",
    r"(?:esta|sigue)\W+(?:apagad[ao]|deskompuest[ao]|rot[ao]|muert[ao]|fria)",
    r"deskompuest[ao]",
)

_SMOKE_VETO = (
    r"sigar\w*|fuma\w*|fumar|fumando|tabako|marijuana|mota\b|bape\w*|simulakro|"
    r"parija|asador|karne\W+asada|chimenea"
)
_COOKING = (
    r"kosin(?:o|ando|ar|aba|e)\b|komida|aros|frijol\w*|tortiya\w*|pan\b|tostad\w*|sarten|oya\b|"
    r"palomitas|bela\w*|insienso|kafe\b"
)
_ALARM_ROUTINE = (
    r"bateria\w*|pilas?\b|instal\w*|rebis\w*|nueb[oa]s?\b|kompr\w*|kambi\w*|falta\w*|bensid\w*|"
    r"kaduk\w*|prueba|simulakro|falsa\W+alarma"
)
_BILL = (
    r"\b(?:faktura|resibo|kuenta\W+del?\W+gas|presios?|pag(?:ar|o|ue|e|amos|an|ando)|kobr\w*|"
    r"kargos?|gasolin\w*)\b"
)


def _compiled(source: str) -> re.Pattern[str]:
    """Compiled once per process, when first needed (nothing is compiled at import)."""
    return compiled(source)


def _rule(
    category: Category,
    severity: Severity,
    *patterns: str,
    veto: str | None = None,
    requires: str | None = None,
    trigger: str | None = None,
) -> Rule:
    """A rule whose patterns are all over the sound spelling (see the module docstring)."""
    return Rule.of(category, severity, *patterns, veto=veto, requires=requires, trigger=trigger)


SPANISH_RULES: tuple[Rule, ...] = (
    # --- gas ------------------------------------------------------------------------------------
    _rule(
        "gas",
        "emergency",
        # "huele a gas", "hay olor a gas", "huele muchísimo a gas", "olorcito a gas"
        rf"\b{_SMELL}{_gap(4)}{_GAS}\b",
        rf"\b{_GAS}{_gap(2)}(?:se\W+)?(?:{_SMELL}|siente)\b",
        # "fuga de gas", "escape de gas", "se está saliendo el gas", "sale gas de la estufa"
        rf"\b(?:fugas?|eskapes?|perdida|salida|sale)\W+(?:\w+\W+)?de(?:l)?\W+{_GAS}\b",
        rf"\b{_GAS}{_gap(2)}(?:se\W+)?(?:esta\W+)?(?:sale|saliendo|salio|eskapa|eskapando|"
        rf"eskapo|fuga|fugando|sali[eé]ndose|eskapandose)\b",
        rf"\b(?:se\W+)?(?:esta\W+)?(?:sale|saliendo|salio|eskapa|eskapando|eskapo|tira|tirando|"
        rf"soltando|suelta|echando){_gap(2)}{_GAS}\b",
        # the smell of mercaptan, and a hiss at a gas appliance
        rf"\b{_SMELL}{_gap(4)}{_HUEVO}",
        rf"\b(?:siseo|silbido|chiflido|sumbido|sise\w*|silba\w*|chifla\w*){_gap(5)}"
        rf"(?:{_GAS}|estufa|orno|kemador\w*|orniyas?|tuberia\W+del\W+gas|medidor)\b",
        r"^\W*(?:fuga\W+de\W+)?gas\W*!+\W*$",
        veto=_BILL,
        trigger=r"gas|propano|uebo|sis|silb|chifl|sumb",
    ),
    # --- carbon monoxide ------------------------------------------------------------------------
    _rule(
        "carbon_monoxide",
        "emergency",
        # a CO device sounding or reading: "la alarma de CO suena", "el detector de carbono pita"
        rf"\b{_CO_DEVICE}\W+(?:de(?:l)?\W+)?{_CO_NAME}{_gap(5)}{_SOUNDING}",
        rf"\b{_SOUNDING}{_gap(4)}{_CO_DEVICE}\W+(?:de(?:l)?\W+)?{_CO_NAME}",
        r"\bmonosido\w*",
        rf"\b(?:{_CO_DEVICE}|{_CO_NAME}){_gap(4)}\d+\W*ppm\b",
        veto=_ALARM_ROUTINE,
        trigger=r"monos|monoks|ko|c0|karbono|ppm",
    ),
    _rule(
        "carbon_monoxide",
        "emergency",
        # symptoms: an alarm or detector sounding while people feel dizzy or sick
        rf"\b(?:alarmas?|detektor(?:es)?|sensor(?:es)?){_gap(5)}{_SOUNDING}",
        rf"\b{_SOUNDING}{_gap(4)}(?:alarmas?|detektor(?:es)?|sensor(?:es)?)\b",
        requires=_BODY,
        veto=_ALARM_ROUTINE + r"|de\W+umo|de\W+insendio|kare?o|koche|despertador|reloj|"
        r"mikroondas|seguridad|" + _COOKING,
        trigger=r"alarm|detekt|sensor",
    ),
    # --- fire and smoke -------------------------------------------------------------------------
    _rule(
        "smoke_fire",
        "emergency",
        r"\binsendios?\b",
        r"\b(?:ay|se\W+prendio|prendio|agaro|kojio|tomo|empeso|komenso|se\W+iniso|prendido\W+en)"
        r"\W+(?:un\W+|el\W+|en\W+)?(?:fuego|yamas)\b",
        rf"\bfuego{_gap(2)}(?:en|de|dentro|adentro|ensima|debajo)\W+(?:\w+\W+)?{_PLACE}\b",
        r"\b(?:en|entre)\W+yamas\b",
        rf"\b(?:sale|salen|saliendo|salia|salio|echa|echando|bota|botando)\W+"
        rf"(?:(?!{_JOINER}\b)\w+\W+)?(?:fuego|yamas)\b",
        rf"\byamas{_gap(2)}(?:salen|saliendo|sale|de|en|por|del)\b",
        rf"\b(?:se\W+)?(?:esta\W+)?kemando(?:se)?{_gap(2)}(?:el|la|los|las|mi|nuestra|nuestro|"
        rf"todo|toda)\W+(?:{_PLACE}|{_APPLIANCE}|edifisio|techo|pared)",
        rf"\b(?:{_PLACE}|{_APPLIANCE}|edifisio|techo|pared){_gap(2)}(?:se\W+)?(?:esta\W+)?"
        rf"(?:kemando|kemandose|ardiendo|prendiendo\W+fuego|en\W+yamas)\b",
        r"^\W*(?:fuego|insendio)\W*!*\W*$",
        r"\bfuego\W*!+",
        veto=r"fuegos\W+artifisiales|simulakro|estintor\w*|(?:alarma|salida|seguro|eskalera|"
        r"puerta|detektor|prebension|sistema)\w*\W+(?:de|kontra)\W+insendios?|parija|asador|"
        r"chimenea|fogata|belas?\b|kumple\w*|pelikula\w*|notisia\w*|serie\b|bideo\w*|"
        r"libro\w*|kurso\w*",
        trigger=r"insendi|fuego|yama|kemand|ardi|arde",
    ),
    _rule(
        "smoke_fire",
        "emergency",
        # smoke that is moving or somewhere: "sale humo del horno", "se llena de humo"
        rf"\b(?:ay|sale|salen|saliendo|salia|salio|entra|entrando|mucho|muchisimo|yeno|yena|"
        rf"yenando|yenandose|yeno\W+de|se\W+yena|se\W+yeno|negro|espeso|bastante|tanto)"
        rf"{_gap(2)}{_SMOKE}\b",
        rf"\b{_SMOKE}{_gap(2)}(?:sale|saliendo|entra|entrando|por\W+todas?|en\W+todo|en\W+toda|"
        rf"negro|espeso|del|de\W+la|de\W+el|por\W+debajo|debajo|desde)\b",
        rf"\b{_SMELL}{_gap(2)}{_SMOKE}\b",
        rf"\b(?:{_APPLIANCE}|{_ELEC_PART}|pared|techo){_gap(2)}(?:esta\W+)?{_SMOKING}",
        r"^\W*(?:umo)\W*!*\W*$",
        veto=_SMOKE_VETO,
        trigger=r"umo|umit|umar|umas|umea",
    ),
    _rule(
        "smoke_fire",
        "urgent",
        # a smoke or fire alarm sounding may be a fire; a chirp for the battery is routine
        rf"\b(?:alarmas?|detektor(?:es)?)\W+(?:de(?:l)?\W+)?(?:umo|insendios?|fuego){_gap(4)}"
        rf"{_SOUNDING}",
        rf"\b{_SOUNDING}{_gap(3)}(?:alarmas?|detektor(?:es)?)\W+(?:de(?:l)?\W+)?(?:umo|insendios?)",
        veto=_ALARM_ROUTINE + r"|" + _COOKING + r"|kema\w*|bapor|regadera|todo\W+bien|"
        r"ya\W+(?:paso|esta)",
        trigger=r"alarm|detekt",
    ),
    # --- electrical -----------------------------------------------------------------------------
    _rule(
        "electrical",
        "emergency",
        # sparks: "echa chispas", "salen chispas del enchufe", "el panel está chisporroteando"
        rf"\b(?:echa|echando|sale|salen|saliendo|saka|sakando|bota|botando|tira|tirando|saltan|"
        rf"saltando|buelan|ay|salio|salieron){_gap(2)}chispas?\b",
        rf"\bchispas?{_gap(3)}(?:{_ELEC_PART}|pared|kaja)",
        rf"\b{_ELEC_PART}{_gap(4)}chisp\w*",
        r"\bchispor?otea\w*|\bchispea\w*",
        # a burning smell with no cooking to explain it: "huele a quemado", "olor a cable quemado"
        rf"\b{_SMELL}{_gap(3)}(?:kemad[oa]|plastiko\W+kemado|kable\W+kemado|elektriko)\b",
        # a part that melts, burns, smokes or is hot
        rf"\b{_ELEC_PART}{_gap(4)}(?:deretid[oa]s?|se\W+derit\w*|derit\w*|kemad[oa]s?|"
        rf"se\W+kemo|kemandose|negr[oa]s?|ennegresid[oa]s?|muy\W+kaliente|ardiendo|echando\W+umo|"
        rf"umea\w*|trona\w*|chiya\w*)",
        rf"\b(?:deretid[oa]s?|kemad[oa]s?)\W+(?:el|la|los|las|un|una)?\W*{_ELEC_PART}",
        # shocks and live wires
        rf"\b(?:tokes?|deskargas?|korientasos?|elektrokut\w*){_gap(4)}{_ELEC_PART}",
        rf"\b{_ELEC_PART}{_gap(4)}(?:(?:da|dan|dio|daba|me\W+dio|echa)\W+(?:\w+\W+)?)?"
        r"(?:tokes?|deskargas?|korientasos?|elektrokut\w*)\b",
        r"\b(?:kables?|alambres?)\W+(?:\w+\W+)?(?:pelad[oa]s?|expuest[oa]s?|desnud[oa]s?|"
        r"suelt[oa]s?|kolgando|kolgado|kaid[oa]s?)",
        veto=_COOKING + r"|sigar\w*|fuegos\W+artifisiales",
        trigger=r"chisp|kemad|kemo|kemand|elektr|deret|derit|tok|deskarg|korientas|kabl|alambr|"
        r"negr|ennegres|kalient|ardi|umo|umea|trona|chiya",
    ),
    _rule(
        "electrical",
        "urgent",
        # a part that is warm or buzzes
        rf"\b{_ELEC_PART}{_gap(4)}(?:tibio|kaliente|kalentando|sumba\w*|sumbido|chispor\w*|trona\w*)",
        rf"\b(?:sumbido|tronidos?){_gap(4)}{_ELEC_PART}",
        trigger=r"tibio|kalient|sumb|chisp|trona|tronid",
    ),
    # --- flooding -------------------------------------------------------------------------------
    _rule(
        "flooding",
        "emergency",
        r"\binund(?:a|o|an|aron|ando|ado|ada|ados|adas|asion|andose|andonos)\b",
        rf"\b(?:se\W+)?(?:rebento|rebentaron|rompio|rompieron|estayo|estayaron|kebro|partio)"
        rf"{_gap(2)}(?:tuberias?|tubos?|kanerias?|kaños?|kanos?|mangeras?|tinako|kalentador)\b",
        rf"\b(?:tuberias?|tubos?|kanerias?|kanos?|mangeras?){_gap(2)}(?:rebent\w*|estay\w*|"
        rf"rot[oa]s?|se\W+rompi\w*|kebrad\w*)",
        rf"\bagua{_gap(3)}(?:por\W+todas\W+partes|por\W+todos\W+lados|por\W+todo\W+el|"
        rf"no\W+para|no\W+deja\W+de|subiendo|asta\W+los?\W+(?:tobiyos?|rodiyas?)|a\W+chorros)",
        rf"\b(?:{_COMING}){_gap(2)}agua{_gap(3)}(?:de(?:l)?|por|desde)\W+(?:el\W+|la\W+|los\W+)?"
        rf"(?:techo|lampara|foko|luz|plafon|pared)\b",
        rf"\bagua{_gap(2)}(?:{_COMING}){_gap(2)}(?:de(?:l)?|por|desde)\W+(?:el\W+|la\W+)?"
        rf"(?:techo|lampara|foko|luz|plafon)\b",
        r"\b(?:yen[oa]|yenandose|yenando|yenandonos)\W+de\W+agua\b",
        r"\bno\W+para\W+de\W+(?:salir|kaer|entrar|brotar)\W+(?:el\W+)?agua\b",
        veto=r"(?:inundad[oa]s?|inundando)\W+de\W+(?:trabajo|mensajes|koreos|yamadas|tareas|"
        r"pedidos|kejas|estres)|noti[sc]ias|sona\W+inundable|seguro\W+de\W+inundasion|"
        r"pesera|akuario|tina\W+(?:para|pa)",
        trigger=r"inund|rebent|romp|estay|kebr|parti|tuber|tubo|kaner|kano|mangera|agua|yen",
    ),
    _rule(
        "flooding",
        "urgent",
        # a ceiling or roof that leaks
        rf"\b(?:techo|plafon){_gap(3)}(?:gotea\w*|se\W+gotea|chorea\w*|se\W+pasa\W+el\W+agua)",
        rf"\bgoteras?{_gap(2)}(?:en|del)\W+(?:el\W+)?techo",
        r"\bse\W+(?:esta\W+)?desbord\w*",
        rf"\b(?:sale|entra|kae|kayendo|gotea\w*|se\W+filtra)\W+(?:\w+\W+)?agua{_gap(2)}"
        rf"(?:de(?:l)?|por)\W+(?:el\W+|la\W+)?(?:enchufe|kontakto|tomakoriente|pared)",
        trigger=r"techo|plafon|gotera|desbord|agua",
    ),
    # --- no heat in the cold --------------------------------------------------------------------
    _rule(
        "no_heat_freezing",
        "emergency",
        rf"\b(?:no\W+(?:ay|tenemos|tengo|tiene|tienen|funsiona\W+la)|sin){_gap(1)}(?:{_HEAT})\b",
        rf"\b{_HEAT}{_gap(3)}{_DEAD}",
        rf"\b{_DEAD}{_gap(2)}(?:la\W+|el\W+)?{_HEAT}\b",
        requires=_COLD,
        trigger=r"kalef|kalent|kald|kalenton|radiad|eater|boiler|furnace",
    ),
    _rule(
        "no_heat_freezing",
        "urgent",
        rf"\b(?:no\W+(?:ay|tenemos|tengo|tiene|tienen)|sin){_gap(1)}(?:kalefasion|kalenton|kaldera)\b",
        rf"\b(?:kalefasion|kalenton|kaldera){_gap(3)}{_DEAD}",
        rf"\b(?:tuberias?|tubos?|kanerias?){_gap(2)}(?:konjelad[oa]s?|se\W+konjel\w*)",
        veto=_BILL + r"|berano|kuando\W+(?:prenden|ensienden)",
        trigger=r"kalef|kalent|kald|tuber|tubo|kaner",
    ),
)

# A Spanish negator governing the hit: "no huele a gas", "no se siente ningún olor a gas".
_NEG_BEFORE = (
    rf"\b(?:{_NEGATOR}|ya\W+no)(?:\W+(?:se|me|nos|le|lo|la|el|los|las|un|una|ay|siente|"
    r"sentimos|siento|senti|uele|uelo|olia|nota|notamos|noto|beo|bemos|bi|bimos|ningun|ninguna|"
    r"nada|de|del|a|al|mas|tanto|ya|pareze|parese|kreo|ke|es|esta|era|tiene|tenemos|tengo|"
    r"algun|alguna|otra|bes|realmente|mucho|muy))*\W*$"
)
_CLAUSE_BREAK = rf"[.!?;,\n]|\b{_JOINER}\b"
# A resolution right after the hit: "el olor a gas ya se fue", "ya lo arreglaron".
_RESOLVED_AFTER = (
    r"^\W*(?:\w+\W+){0,3}?ya\W+(?:se\W+|lo\W+|la\W+|no\W+)?(?:fue|kito|paso|apago|apagaron|"
    r"arreglo|areglo|areglaron|areglado|areglada|resolbio|resuelto|termino|desaparesio|"
    r"kontrolo|kontrolado|esta\W+bien|esta\W+areglad[oa]|ay|uele|sale)\b"
)


def negated(spelled: str, start: int, end: int) -> bool:
    """Whether a hit at ``spelled[start:end]`` is negated or resolved (Spanish rules)."""
    before = spelled[max(0, start - 60) : start]
    breaks = list(_compiled(_CLAUSE_BREAK).finditer(before))
    if breaks:
        before = before[breaks[-1].end() :]
    if _compiled(_NEG_BEFORE).search(before):
        return True
    return _compiled(_RESOLVED_AFTER).match(spelled[end : end + 40]) is not None
