"""Gather: what a vendor needs to know before going, and what a tenant's reply gives.

A vendor sent to a job needs the trade (who to send), where in the unit it is, whether they may
enter and what pets are there, when the tenant can have them come, and for some trades a photo.
:func:`needs` reads the WO (its category and summary) and its timeline's notes for each of those;
:func:`question` asks the tenant for what is missing in one text; :func:`items_in` reads the
tenant's reply (English or Spanish) for what it gives.

The readings are rules over the domain (clock times, days and parts of the day, rooms and
fixtures, words about entering, animals), not a list of sample replies, and they ask only
"does the text say anything about X": "no pets" and "two dogs" both answer the pets question,
"not before 5" and "mornings" both say when. What was said stays on the WO's timeline, where the
vendor reads it after accepting; nothing here keeps the words.

Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from maestro.domain.common import truncate
from maestro.domain.directory import Trade
from maestro.domain.dispatch import GATHER_ITEMS, GatherItem
from maestro.domain.fixed_texts import GATHER_ABOUT, GATHER_ASK, GATHER_QUESTION, OPTION, say
from maestro.domain.models import Urgency, WorkOrder

__all__ = [
    "LOCATION_FREE_TRADES",
    "MAX_QUESTION_CHARS",
    "PHOTO_TRADES",
    "availability_in",
    "items_in",
    "job_trade",
    "needs",
    "question",
    "skip_reason",
    "trade_for",
    "trade_in",
]

MAX_QUESTION_CHARS = 320
"""Two SMS segments of plain text: the question must be read whole, not in pieces."""

PHOTO_TRADES: frozenset[Trade] = frozenset({Trade.APPLIANCE, Trade.ROOFING, Trade.PEST})
"""The trades whose vendor needs to see the problem before going:
- appliance: the make and model (the label) and the fault, so the right part comes on the
  first visit;
- roofing: how big the damage or the ceiling stain is, to bring the ladder, the materials and
  maybe a second person;
- pest: which pest it is (droppings, insects), which decides the treatment and the products.
A plumber, an electrician or a handyman is told enough by words."""

LOCATION_FREE_TRADES: frozenset[Trade] = frozenset({Trade.LOCKSMITH})
"""Trades whose place is the job itself: a lock is at the door it locks."""


def _normal(text: str) -> str:
    """Lower case, no accents ("baño" and "bano" are one word: people type both), straight
    apostrophes, single spaces."""
    decomposed = unicodedata.normalize("NFKD", text.lower().replace("’", "'"))
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(bare.split())


def _rule(*alternatives: str) -> re.Pattern[str]:
    """One pattern matching any of ``alternatives`` (regex fragments over normalised text) as
    whole words."""
    return re.compile(r"(?<![\w'])(?:" + "|".join(alternatives) + r")(?![\w'])")


# ---------------------------------------------------------------------------------------------
# Trade: the category's name first (a closed list the brain chooses from), else the words of
# the problem.
# ---------------------------------------------------------------------------------------------

_CATEGORY_TRADES: dict[str, Trade] = {
    "plumbing": Trade.PLUMBING,
    "plumber": Trade.PLUMBING,
    "electrical": Trade.ELECTRICAL,
    "electric": Trade.ELECTRICAL,
    "electrician": Trade.ELECTRICAL,
    "hvac": Trade.HVAC,
    "heating": Trade.HVAC,
    "cooling": Trade.HVAC,
    "air conditioning": Trade.HVAC,
    "appliance": Trade.APPLIANCE,
    "appliances": Trade.APPLIANCE,
    "pest": Trade.PEST,
    "pests": Trade.PEST,
    "pest control": Trade.PEST,
    "locks": Trade.LOCKSMITH,
    "lock": Trade.LOCKSMITH,
    "locksmith": Trade.LOCKSMITH,
    "roofing": Trade.ROOFING,
    "roof": Trade.ROOFING,
    # Doors, walls, floors, frames: the handyman or general contractor's work.
    "structural": Trade.GENERAL,
    "carpentry": Trade.GENERAL,
    "handyman": Trade.GENERAL,
}
# "general" is deliberately absent: it is the category the brain gives when it could not tell,
# so it names no trade and the problem's own words are read instead (trade_in).

_TRADE_WORDS: dict[Trade, re.Pattern[str]] = {
    Trade.PLUMBING: _rule(
        r"leak\w*",
        r"drip\w*",
        r"clog\w*",
        r"drains?",
        r"pipes?",
        r"toilets?",
        r"faucets?",
        r"sinks?",
        r"showers?",
        r"(?:bath)?tubs?",
        r"sewer\w*",
        r"sewage",
        r"overflow\w*",
        r"flood\w*",
        r"plumb\w*",
        r"backed up",
        r"hot water",
        r"water heater",
        r"fugas?",
        r"gote\w*",
        r"tuberias?",
        r"tubos?",
        r"canerias?",
        r"desagues?",
        r"drenajes?",
        r"tapad[oa]s?",
        r"atascad[oa]s?",
        r"inodoros?",
        r"excusados?",
        r"lavabos?",
        r"fregaderos?",
        r"regaderas?",
        r"duchas?",
        r"plomer[oa]s?",
        r"fontaner[oa]s?",
        r"agua caliente",
        r"inund\w*",
    ),
    Trade.ELECTRICAL: _rule(
        r"outlets?",
        r"breakers?",
        r"fuses?",
        r"wiring",
        r"wires?",
        r"spark\w*",
        r"lights?",
        r"light switch\w*",
        r"(?:no|lost) power",
        r"power (?:is )?out",
        r"electric\w*",
        r"shock\w*",
        r"enchufes?",
        r"contactos?",
        r"tomacorrientes?",
        r"fusibles?",
        r"cables?",
        r"chispas?",
        r"luz",
        r"luces",
        r"apagador(?:es)?",
        r"interruptor(?:es)?",
        r"corriente",
    ),
    Trade.HVAC: _rule(
        r"heat",
        r"heating",
        r"heater",
        r"furnace",
        r"boiler",
        r"radiators?",
        r"thermostat",
        r"air condition\w*",
        r"a/?c",
        r"hvac",
        r"vents?",
        r"ducts?",
        r"cooling",
        r"calefaccion",
        r"aire acondicionado",
        r"clima",
        r"minisplit",
        r"termostato",
        r"ventilacion",
        r"caldera",
        r"radiador(?:es)?",
    ),
    Trade.APPLIANCE: _rule(
        r"fridge",
        r"refrigerator",
        r"freezer",
        r"dishwasher",
        r"stove",
        r"oven",
        r"cooktop",
        r"microwave",
        r"washer",
        r"washing machine",
        r"dryer",
        r"(?:garbage )?disposal",
        r"ice maker",
        r"refrigerador",
        r"refri",
        r"nevera",
        r"heladera",
        r"congelador",
        r"lavavajillas",
        r"lavaplatos",
        r"estufa",
        r"horno",
        r"microondas",
        r"lavadora",
        r"secadora",
        r"triturador",
    ),
    Trade.PEST: _rule(
        r"(?:cock)?roach\w*",
        r"mouse",
        r"mice",
        r"rats?",
        r"rodents?",
        r"bugs?",
        r"bed ?bugs?",
        r"ants",
        r"termites?",
        r"wasps?",
        r"hornets?",
        r"fleas?",
        r"pests?",
        r"infest\w*",
        r"exterminat\w*",
        r"cucarachas?",
        r"raton(?:es)?",
        r"ratas?",
        r"roedor(?:es)?",
        r"chinches?",
        r"hormigas?",
        r"termitas?",
        r"avispas?",
        r"pulgas?",
        r"plagas?",
        r"bichos?",
        r"fumig\w*",
    ),
    Trade.LOCKSMITH: _rule(
        r"locks?",
        r"locked out",
        r"deadbolt",
        r"locksmith",
        r"lost (?:my |the )?keys?",
        r"cerraduras?",
        r"chapas?",
        r"cerrojos?",
        r"cerrajer[oa]",
        r"perdi (?:mis |las |la )?llaves?",
        r"me quede afuera",
    ),
    Trade.ROOFING: _rule(
        r"roof\w*",
        r"shingles?",
        r"gutters?",
        r"skylights?",
        r"tejado",
        r"tejas?",
        r"canaletas?",
        r"azotea",
        # A "gotera" is water coming through from above: the roof, first.
        r"goteras?",
    ),
    Trade.GENERAL: _rule(
        r"doors?",
        r"windows?",
        r"drywall",
        r"cabinets?",
        r"drawers?",
        r"hinges?",
        r"shel(?:f|ves)",
        r"blinds?",
        r"paint\w*",
        r"flooring",
        r"floorboards?",
        r"tiles?",
        r"carpet",
        r"railing",
        r"handrail",
        r"fence",
        r"screens?",
        r"puertas?",
        r"ventanas?",
        r"gabinetes?",
        r"cajon(?:es)?",
        r"bisagras?",
        r"repisas?",
        r"persianas?",
        r"pintura",
        r"azulejos?",
        r"losetas?",
        r"alfombras?",
        r"barandal(?:es)?",
        r"rejas?",
        r"mosquiteros?",
    ),
}


def trade_for(category: str) -> Trade | None:
    """The trade a WO's category names ("plumbing" → PLUMBING, "locks" → LOCKSMITH), or None
    when it names none ("general", anything unknown)."""
    return _CATEGORY_TRADES.get(_normal(category))


def trade_in(text: str) -> Trade | None:
    """The trade the words of a problem point to ("the dishwasher won't drain", "hay
    cucarachas"): the one with the most matching words; a tie goes to the first in the
    trade list. GENERAL only when no other trade's words are there."""
    normal = _normal(text)
    counts = {
        trade: len(pattern.findall(normal))
        for trade, pattern in _TRADE_WORDS.items()
        if trade is not Trade.GENERAL
    }
    best = max(counts, key=lambda trade: counts[trade])  # first of the ties, in list order
    if counts[best]:
        return best
    return Trade.GENERAL if _TRADE_WORDS[Trade.GENERAL].search(normal) else None


def job_trade(wo: WorkOrder, notes: Iterable[str] = ()) -> Trade | None:
    """The trade of a job: its category's, else what its summary and notes say, else None."""
    return trade_for(wo.category) or trade_in("\n".join((wo.summary, *notes)))


# ---------------------------------------------------------------------------------------------
# What a text says about each item.
# ---------------------------------------------------------------------------------------------

_LOCATION = _rule(
    # Rooms and parts of a home.
    r"(?:\w+ )?rooms?",
    r"kitchen\w*",
    r"bath\w*",
    r"restrooms?",
    r"washroom",
    r"(?:master )?bedrooms?",
    r"office",
    r"hall(?:way)?s?",
    r"entryway",
    r"entry (?:hall|closet)",
    r"foyer",
    r"laundry",
    r"basement",
    r"cellar",
    r"attic",
    r"garage",
    r"closets?",
    r"pantry",
    r"balcony",
    r"patio",
    r"porch",
    r"deck",
    r"(?:back|front)?yard",
    r"garden",
    r"stair\w*",
    r"upstairs",
    r"downstairs",
    r"ceilings?",
    r"floors?",
    r"walls?",
    r"roof",
    r"crawl ?space",
    r"(?:front|back|main|entry|entrance|patio|garage) doors?",
    r"entrance",
    # A place given by a fixture: under / behind / next to it, or one a home has one of.
    r"(?:under|underneath|beneath|below|behind|next to|above|near) (?:the |my |our )?[a-z]+",
    r"toilets?",
    r"showers?",
    r"(?:bath)?tubs?",
    r"dishwasher",
    r"fridge",
    r"refrigerator",
    r"stove",
    r"oven",
    r"washer",
    r"washing machine",
    r"dryer",
    r"water heater",
    r"furnace",
    r"thermostat",
    # The whole home.
    r"whole (?:apartment|unit|house|place|home|flat)",
    r"entire (?:apartment|unit|house|place|home|flat)",
    r"every ?where",
    r"all (?:the )?rooms",
    r"throughout",
    # Spanish.
    r"cocinas?",
    r"banos?",
    r"sanitarios?",
    r"aseos?",
    r"recamaras?",
    r"dormitorios?",
    r"habitacion(?:es)?",
    r"cuartos?",
    r"sala",
    r"comedor",
    r"estancia",
    r"pasillos?",
    r"entrada",
    r"recibidor",
    r"lavanderia",
    r"sotano",
    r"atico",
    r"desvan",
    r"garaje",
    r"cochera",
    r"closets?",
    r"armarios?",
    r"roperos?",
    r"despensa",
    r"balcon",
    r"terraza",
    r"jardin",
    r"escaleras?",
    r"arriba",
    r"abajo",
    r"techos?",
    r"plafon",
    r"pisos?",
    r"suelo",
    r"paredes?",
    r"muros?",
    r"(?:debajo|detras|encima|junto) (?:de |a )?(?:el |la |los |las |del |al |mi )?[a-z]+",
    r"bajo (?:el|la|los|las|mi) [a-z]+",
    r"inodoros?",
    r"excusados?",
    r"regaderas?",
    r"duchas?",
    r"tinas?",
    r"baneras?",
    r"lavavajillas",
    r"lavaplatos",
    r"refrigerador",
    r"nevera",
    r"estufa",
    r"horno",
    r"lavadora",
    r"secadora",
    r"calentador",
    r"termostato",
    r"puerta (?:principal|de entrada|trasera|del patio)",
    r"toda la casa",
    r"todo el (?:departamento|apartamento|depa|piso)",
    r"todas partes",
)

_ACCESS = _rule(
    # Coming in, with or without the tenant.
    r"come (?:on )?in",
    r"go in",
    r"get in",
    r"let (?:yourself|yourselves|himself|herself|themselves|them|him|her|you|\w+) in",
    r"enter(?:s|ing)?",
    r"entry",
    r"access",
    r"(?:spare |the |a |my )?keys?",
    r"lock ?box",
    r"(?:door|gate|entry|building) codes?",
    r"buzz\w*",
    r"doorman",
    r"concierge",
    r"front desk",
    r"(?:the|our|my|building) super",
    r"superintendent",
    r"(?:be|i'?m|am|is|are|at|stay\w*|work\w* from) (?:at )?home",
    r"(?:i'?ll be|i'?m|i am|we'?re|we are|we'?ll be|will be|won'?t be) (?:there|around|out|away)",
    r"(?:not|won'?t be) (?:at )?home",
    r"someone(?:'?s| is| will be)? (?:home|there)",
    r"without me",
    r"(?:when|while|if) i'?m (?:out|away|gone|not (?:home|there))",
    r"permission",
    r"unlock\w*",
    r"(?:open|answer) the door",
    r"leave (?:it|the door) (?:open|unlocked)",
    # Spanish.
    r"entr(?:ar|en|ando)",
    r"que entre",
    r"(?:puede|pueden|podra|podran) pasar",
    r"pasen? (?:nomas|nada mas|adelante|sin problema|con confianza)",
    r"abrir(?:le|les)? la puerta",
    r"(?:le|les|te) abr(?:o|imos|e|en)",
    r"llaves?",
    r"codigo",
    r"porton",
    r"conserje",
    r"portero",
    r"encargad[oa]",
    r"(?:estare|estoy|estamos|estaremos|esta|estara) (?:en casa|ahi|aqui|alli)",
    r"alguien (?:estara|esta|va a estar)",
    r"sin mi",
    r"permiso",
    r"acceso",
)

_PETS = _rule(
    r"pets?",
    r"pet[- ]free",
    r"dogs?",
    r"doggy",
    r"pupp(?:y|ies)",
    r"pups?",
    r"cats?",
    r"kitty",
    r"kittens?",
    r"birds?",
    r"parrots?",
    r"fish",
    r"hamsters?",
    r"guinea pigs?",
    r"rabbits?",
    r"bunn(?:y|ies)",
    r"snakes?",
    r"lizards?",
    r"reptiles?",
    r"ferrets?",
    r"animals?",
    r"mascotas?",
    r"perr(?:o|a|ito|ita)s?",
    r"cachorr[oa]s?",
    r"gat(?:o|a|ito|ita)s?",
    r"pajar(?:o|ito)s?",
    r"pericos?",
    r"loros?",
    r"pez",
    r"peces",
    r"conejos?",
    r"culebras?",
    r"serpientes?",
    r"tortugas?",
    r"animal(?:es|itos?)?",
)

_DAYS_EN = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
_MONTHS_EN = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|march|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DAYS_ES = r"(?:lunes|martes|miercoles|jueves|viernes|sabados?|domingos?)"
_MONTHS_ES = (
    r"(?:enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre"
    r"|noviembre|diciembre)"
)
_HOUR = r"\d{1,2}(?::[0-5]\d)?"

_AVAILABILITY = _rule(
    # A clock time: "3pm", "10:30 a.m.", "14:00", "7 o'clock".
    _HOUR + r" ?(?:am|pm|a\.m\.?|p\.m\.?|o'?clock)",
    r"(?:[01]?\d|2[0-3]):[0-5]\d",
    # An hour with a word that makes it one: "after 5", "from 2", "2 onward", "9 to 5".
    r"(?:after|before|from|at|by|until|till|til|around|past|between)"
    r" " + _HOUR,
    _HOUR + r" ?(?:onwards?|or (?:later|after)|and (?:later|after)|-?ish)",
    _HOUR + r" (?:to|till|until|til|-) " + _HOUR,
    # Days, dates, parts of the day.
    _DAYS_EN,
    r"week ?days?",
    r"week ?ends?",
    r"today",
    r"tonight",
    r"tomorrow",
    r"tmrw",
    r"(?:this|next) (?:week|morning|afternoon|evening)",
    r"mornings?",
    r"afternoons?",
    r"evenings?",
    r"nights?",
    r"noon",
    r"midday",
    r"lunch ?time",
    r"(?:after|before) (?:lunch|work|school|dinner|breakfast)",
    r"(?:antes|despues) (?:de|del) (?:almuerzo|comer|comida|trabajo|la escuela|cenar)",
    r"any ?time",
    r"any ?day",
    r"every ?day",
    r"all day",
    r"whenever",
    r"asap",
    r"as soon as (?:possible|you can)",
    r"right away",
    _MONTHS_EN + r" \d{1,2}(?:st|nd|rd|th)?",
    # An ordinal is a date unless it is a floor or a unit ("the 2nd floor").
    r"\d{1,2}(?:st|nd|rd|th)(?! (?:floor|fl|story|storey|level|unit|apt|apartment|door))",
    r"\d{1,2}/\d{1,2}",
    # Spanish: "a las 3", "después de las 5", "de 9 a 1", "por la mañana", "el lunes".
    r"a las? " + _HOUR,
    # "las 3" is a time when nothing but its qualifiers follow ("las 3 tuberías" is not one).
    r"las? " + _HOUR + r"(?= ?(?:$|[,.;:!?)]|y |o |de la |en punto|am|pm|a\.m|p\.m|horas))",
    r"(?:desde|despues de|antes de|a partir de|hasta|entre|tipo|como a) (?:las? )?" + _HOUR,
    r"de " + _HOUR + r" a " + _HOUR,
    _HOUR + r" (?:y media|y cuarto|de la (?:manana|tarde|noche))",
    _DAYS_ES,
    r"entre semana",
    r"fin(?:es)? de semana",
    r"hoy",
    r"manana",
    r"(?:por|en|de) la (?:manana|tarde|noche)",
    r"(?:las|por las|en las) (?:mananas|tardes|noches)",
    r"tardes?",
    r"noches?",
    r"mediodia",
    r"medio dia",
    r"(?:esta|la proxima|la otra) semana",
    r"semana que viene",
    r"cualquier (?:hora|momento|dia)",
    r"todo el dia",
    r"todos los dias",
    r"cuando (?:sea|quiera|quieran|guste|gusten|pueda|puedan)",
    r"lo (?:antes|mas pronto) posible",
    r"ya mismo",
    r"\d{1,2} de " + _MONTHS_ES,
)

_RULES: dict[GatherItem, re.Pattern[str]] = {
    "location": _LOCATION,
    "access": _ACCESS,
    "pets": _PETS,
    "availability": _AVAILABILITY,
}


def _said(text: str) -> set[GatherItem]:
    normal = _normal(text)
    found: set[GatherItem] = {item for item, rule in _RULES.items() if rule.search(normal)}
    # A reply names a trade by a trade's own words: its doors and windows are, far more often,
    # how to get in ("door code 4412", "the back door is open") than the job.
    if trade_in(text) not in (None, Trade.GENERAL):
        found.add("trade")
    return found


def _in_order(items: Iterable[GatherItem]) -> tuple[GatherItem, ...]:
    wanted = set(items)
    return tuple(item for item in GATHER_ITEMS if item in wanted)


def items_in(text: str) -> tuple[GatherItem, ...]:
    """What a tenant's reply tells (English or Spanish), in GATHER_ITEMS order: "fine to come
    in, 2 onward" → access and availability; "tengo un perro" → pets. The trade only by a
    trade's own words (a handyman's "door" in a reply is how to get in). Never "photo": a photo
    comes as media, which the caller counts."""
    return _in_order(_said(text))


# Words that join two time expressions into one ("friday after 3pm", "mon or tue morning").
_TIME_GLUE = re.compile(
    r"[\s,]*(?:(?:and|or|from|to|after|before|at|by|around|between|until|on|the|y|o|a|de|"
    r"desde|hasta|las?|el|-)[\s,]+)*"
)


# Words that rule a time out rather than offer it, before it in its clause ("not mornings",
# "can't do friday", "anything but monday", "no puedo el lunes") or after it ("mornings are
# bad", "friday doesn't work", "las mananas no me sirven").
_RULED_OUT_BEFORE = re.compile(
    r"(?:\b(?:not|no|never|except|but|cannot|can'?t|won'?t|don'?t|isn'?t|aren'?t|excepto|menos|"
    r"salvo|nunca)\b|\bno\s+puedo\b)[^.,;!?\n]{0,24}$"
)
_RULED_OUT_AFTER = re.compile(
    r"^[^.;!?\n,]{0,12}?\b(?:(?:is|are|'s|'re)\s+(?:bad|no\s+good|not\s+good|out|impossible|"
    r"a\s+no)|(?:do|does|will|would)\s*(?:n'?t|\s+not)\s+work|won'?t\s+work|(?:is|are)n'?t\s+"
    r"(?:good|possible|great)|no\s+good|no\s+(?:me\s+)?(?:sirven?|va|van|puedo))\b"
)


def _ruled_out(normal: str, start: int, end: int) -> bool:
    return bool(
        _RULED_OUT_BEFORE.search(normal[max(0, start - 40) : start])
        or _RULED_OUT_AFTER.search(normal[end : end + 40])
    )


def availability_in(text: str) -> str:
    """The times ``text`` gives, lower case and unaccented, "" when it gives none: "need to push
    them back to friday after 3pm" → "friday after 3pm"; "el jueves por la tarde" → "jueves
    por la tarde". Only time words: what the rest of the sentence says is left out, and so is a
    time it rules out ("mornings are bad", "not friday"): a reply that repeated it would say
    the opposite of what was asked."""
    normal = _normal(text)
    spans: list[list[int]] = []
    for match in _AVAILABILITY.finditer(normal):
        start, end = match.span()
        if _ruled_out(normal, start, end):
            continue
        if spans and _TIME_GLUE.fullmatch(normal[spans[-1][1] : start]):
            spans[-1][1] = end
        else:
            spans.append([start, end])
    said = dict.fromkeys(normal[start:end].strip(" ,") for start, end in spans)
    return truncate(", ".join(s for s in said if s), 80)


def skip_reason(wo: WorkOrder) -> str | None:
    """Why gather is skipped: urgent and emergency work goes to a vendor at once (they ask on
    the way); else None."""
    if wo.urgency in (Urgency.URGENT, Urgency.EMERGENCY):
        return f"{wo.urgency.value}: no time to ask"
    return None


def needs(wo: WorkOrder, notes: Sequence[str], photos: int) -> tuple[GatherItem, ...]:
    """What a vendor still lacks for ``wo``, given its timeline's notes (the tenant's words) and
    how many photos it has, in GATHER_ITEMS order. Empty: the job can be judged as it is.

    The summary is the problem as the brain put it: it is read for the trade and the place
    only. Its words about time ("leaks every night", "since this morning") describe the problem,
    not when a vendor may come, so access, pets and availability come from the notes alone."""
    summary = _normal(wo.summary)
    known = _said("\n".join(notes))
    if trade_for(wo.category) is not None or trade_in(summary) is not None:
        known.add("trade")
    trade = job_trade(wo, notes)
    if _LOCATION.search(summary) or trade in LOCATION_FREE_TRADES:
        known.add("location")
    missing: set[GatherItem] = {i for i in GATHER_ITEMS if i != "photo" and i not in known}
    if trade in PHOTO_TRADES and photos < 1:
        missing.add("photo")
    return _in_order(missing)


# ---------------------------------------------------------------------------------------------
# The one question.
# ---------------------------------------------------------------------------------------------


def question(wo: WorkOrder, missing: Sequence[GatherItem], language: str) -> str:
    """One text asking the tenant for every ``missing`` item, naming the WO (and what it is,
    when it fits), in ``language`` (English when there is no translation), at most
    MAX_QUESTION_CHARS."""
    items = _in_order(missing)
    if not items:
        raise ValueError("nothing to ask")
    asks = [say(GATHER_ASK[item], language) for item in items]
    listed = (
        asks[0]
        if len(asks) == 1
        else "; ".join(say(OPTION, language, number=n, line=a) for n, a in enumerate(asks, 1))
    )

    def text(about: str) -> str:
        return say(GATHER_QUESTION, language, about=about, listed=listed)

    bare = text(wo.wo_id)
    room = MAX_QUESTION_CHARS - len(bare) - len(" ()")
    if room >= 12:
        summary = truncate(wo.summary, min(room, 80))
        bare = text(say(GATHER_ABOUT, language, wo_id=wo.wo_id, summary=summary))
    return truncate(bare, MAX_QUESTION_CHARS)
