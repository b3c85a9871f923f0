"""The deterministic emergency-phrase floor (invariants I1, I5).

The model is the primary safety detector; this floor backs it up so an obvious emergency ("i smel
gas", "water coming thru the celing") escalates even when the model is down, slow or wrong. It is
pure and fast: a fixed list of compiled regexes over the raw text, so a hit's ``start``/``end``
index the message exactly as the tenant sent it (no normalisation that would shift offsets).

Design choices, in order of priority:

* recall on real emergencies first: missing one is dangerous, so patterns tolerate lower case,
  common typos, missing apostrophes ("theres"), SMS punctuation and a few filler words;
* precision second: bare ambiguous words ("gas", "fire", "smoke", "flood", "break in", "heat") never
  fire alone; each needs an emergency context ("gas smell", "on fire", "smoke coming out", ...);
* cheap negation: a negator right before a hit ("no smoke", "don't smell gas") or a resolution
  right after it ("... is gone now") suppresses it. Fillers inside a pattern never include a
  negator, so "there's no smoke" cannot match "there's ... smoke".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Literal

from pydantic import model_validator

from maestro.domain import safety_framing, safety_spanish
from maestro.domain.common import Frozen
from maestro.domain.safety_lexicon import (
    KEYWORDS,
    KNOWN_VARIANTS,
    REAL_WORD_NEIGHBOURS,
    typo_variants,
)
from maestro.domain.safety_rules import CATEGORIES, Category, Rule, Severity, alt, compiled


class SafetyHit(Frozen):
    """One emergency phrase found by the floor; ``text[start:end] == phrase``."""

    category: Category
    severity: Severity
    phrase: str
    start: int
    end: int
    language: Literal["en", "es"] = "en"
    """The language of the rule that read it: a Spanish hit is a Spanish reader's, whatever
    else the message says too little to tell (safety_spanish)."""
    source: Literal["rules", "model"] = "rules"
    """Who found it: a phrase rule, or the learned model (``safety_model``) when no rule did."""
    evidence: str = ""
    """For the model's hit, its score, category and strongest words (a rule's is its phrase)."""

    @property
    def explained(self) -> str:
        """What an operator reads: the phrase, and for the model's hit why the model raised it."""
        return f"{self.evidence}: {self.phrase}" if self.evidence else self.phrase

    @model_validator(mode="after")
    def _span_matches_phrase(self) -> SafetyHit:
        # A span that disagrees with its phrase would point an operator at the wrong words.
        if self.start < 0 or self.end <= self.start or self.end - self.start != len(self.phrase):
            raise ValueError("start/end must be a non-empty span of exactly len(phrase)")
        return self


# ---------------------------------------------------------------------------------------------
# Building blocks. Patterns are compiled with IGNORECASE; "'" stands for any apostrophe form.
# ---------------------------------------------------------------------------------------------

_A = "['’`]?"  # optional apostrophe, straight or curly
_NEG = (
    rf"(?:no|not|never|nothing|without|nor|don{_A}t|doesn{_A}t|didn{_A}t|isn{_A}t|wasn{_A}t|"
    rf"aren{_A}t|weren{_A}t|can{_A}t|cannot|couldn{_A}t|haven{_A}t|hasn{_A}t)"
)
# Fillers never join clauses, so "the floor is fine and my phone fell" cannot read as a collapse.
_JOIN = r"(?:and|but|or|so|because|then|when|while|after|before|if|until|though|although)"
# Separator between two words: spaces, apostrophes, dashes, commas; not sentence punctuation.
_SEP = r"[^\w.!?;:]+"


def _gap(n: int) -> str:
    """A separator plus up to ``n`` filler words that are neither negators nor clause joiners."""
    return rf"{_SEP}(?:(?!{_NEG}\b|{_JOIN}\b)[\w'’]+{_SEP}){{0,{n}}}?"


_alt = alt


_THERES = (
    r"(?:(?:there|ther|their)\W{0,3}s\b|there\W+is|there\W+was|there\W+are|theirs|"
    r"ther\W+is)"
)
_LIKE = r"(?:like|lik|liek|lyk|lk)"
_SMELL = (
    r"(?:sme+l+(?:s|l?ing|l?in|l?ed|t|y)?|smel|stinks?|stinking|stinky|reeks?|reeking|"
    r"odou?rs?|whiff|fumes?|stench|stank)"
)
_GAS = r"(?:ga+s+(?:es)?|propane|natural\W+gas)"
_SMOKE = rf"(?:smo+a?ke?(?:{_A}s)?)"
_CEIL = r"(?:[cs](?:ei|ie|e|ee|ii|i)l+(?:i|e)?ng?s?|cei?lings?)"
_ELEC = (
    r"(?:outlets?|plugs?|sockets?|receptacles?|(?:light\W+)?switch(?:es)?|wires?|wiring|cords?|"
    r"panel|breakers?|breaker\W+box|fuse\W*box|fuses?|electrical\W+box|meter|power\W+strip|"
    r"extension\W+cord|light\W+fixture|fixture|lamp|lights?|charger|transformer|power\W+lines?)"
)
# The electrical parts that can be hot/buzzing/melting; lights are left out ("bulb burnt out").
_ELEC_STRONG = (
    r"(?:outlets?|plugs?|sockets?|receptacles?|(?:light\W+)?switch(?:es)?|wires?|wiring|cords?|"
    r"panel|breakers?|breaker\W+box|fuse\W*box|electrical\W+box|meter|power\W+strip|"
    r"extension\W+cord)"
)
_APPLIANCE = (
    r"(?:oven|stove|range|microwave|dryer|washer|dishwasher|fridge|refrigerator|toaster|heater|"
    r"furnace|boiler|vent|vents|fan|motor|a/?c|air\W+conditioner|tv|appliance|walls?|attic|"
    r"basement|garage|chimney|fireplace|roof|radiator|unit|hood)"
)
_PLACE = (
    r"(?:apartment|apt|unit|house|home|building|kitchen|bedroom|bathroom|room|hallway|hall|"
    r"stairwell|basement|garage|attic|closet|living\W+room|laundry\W+room|place|floor|lobby)"
)
_THROUGH = r"(?:through|thru|threw|throught|thro|tru|from|out\W+of|down\W+from|into|in\W+from)"
_HEAT = r"(?:he+a?t|he+a?ting|he+a?ter|heaters|furnace|boiler|radiators?|heat\W+pump)"
_HEAT_DEAD = _alt(
    rf"not{_SEP}(?:work\w*|on|coming\W+on|turning\W+on|kicking\W+on)",
    rf"(?:isn{_A}t|aren{_A}t|ain{_A}t|isnt|arent){_SEP}(?:work\w*|on|coming\W+on|turning\W+on)",
    rf"(?:doesn{_A}t|don{_A}t|doesnt|dont|didn{_A}t|didnt){_SEP}(?:work|come\W+on|turn\W+on|start)",
    rf"(?:hasn{_A}t|haven{_A}t|hasnt|havent){_SEP}(?:been{_SEP})?(?:work\w*|come\W+on|on|warm|hot|"
    r"heating)",
    rf"(?:won{_A}t|wont|will\W+not){_SEP}(?:turn|come|kick|start|work|fire|light)\w*",
    r"stopped(?:\W+working)?",
    r"quit(?:\W+working)?",
    r"died",
    r"dead",
    r"(?:went|gone|is|s|has\W+gone)\W+out\b",
    r"out\b(?!\W+of\b)",
    r"broke\b",
    r"broken",
    r"busted",
    r"failed",
    r"shut\W+off",
    r"off\b",
    r"out\W+of\W+(?:order|oil|fuel|gas|propane)",
    r"(?:blowing\W+)?(?:ice\W+)?cold\b",
    rf"not{_SEP}(?:warm|hot|heating)\w*",
)
_COLD = _alt(
    r"freez\w*",
    r"frozen",
    r"froze\b",
    r"below\W+(?:zero|freezing|0)",
    r"sub\W?zero",
    r"(?:negative|minus)\W+\d+",
    r"(?<![\d.])(?:[0-5]?\d|6[0-2])\W*(?:°|degrees?|deg\b)",
    r"(?<![\d.])[1-5]\d\W+(?:in\W+here|inside|indoors|in\W+the\W+(?:apartment|apt|unit|house))",
    r"snow\w*",
    r"frost\w*",
    r"ic(?:e|y)\b",
    r"frigid",
    r"cold",
    r"chilly",
    r"blizzard",
    r"winter",
    r"shiver\w*",
    r"see\W+(?:our|my|your|their|his|her)\W+breath",
)
_CO_DEVICE = r"(?:alarms?|detectors?|detecter|dectector|detectr|monitor|sensor|meter)"
_NO_HEAT_HAVE = (
    rf"\b(?:don{_A}t|dont|do\W+not|doesn{_A}t|doesnt|haven{_A}t|havent|didn{_A}t|didnt)\W+"
    rf"(?:have|got|get|has){_SEP}(?:any\W+)?(?:heat|heating|hot\W+air)\b"
)
# "broke in half", "get in touch": the words after "in" that make it no break-in.
_NOT_IN_HALF = r"(?!\W+(?:half|two|pieces?|touch|line|contact)\b)"
# "break-in at the building" is a crime; "a break in the fence/pipe/schedule" is not.
_BREAK_IN_OBJECT_OK = (
    r"(?!\W+(?:the|my|our|a|an|your|his|her|their|these|those|new|them|it)\W+"
    r"(?!building|apartment|apt|unit|house|home|garage|complex|office|lobby|mail\w*|storage|"
    r"basement|cars?\b|place)\w)"
)
# "no heat issues so far": the "no" is about problems, not about heat.
_NOT_AN_ISSUE = r"(?!\W+(?:issues?|problems?|complaints?|concerns?|trouble)\b)"
_PERSON = (
    r"(?:some\W?one|some\W?body|sombody|somebdy|somone|some1|sum1|sumone|sumbody|smbdy|"
    r"(?:a|some|this)\W+(?:guy|man|dude|woman|person|stranger|kids?)|people|they|"
    r"thie(?:f|ves)|burglars?|robbers?|intruders?|ppl)"
)
# Where a gas hiss comes from; a radiator, a kettle or a tyre hisses too, and is vetoed.
_GAS_SOURCE = (
    r"(?:stove|stovetop|oven|range|burners?|cooktop|gas\W+(?:line|pipe|valve|meter)|meter|"
    r"furnace|dryer|grill|fireplace|valve|pilot(?:\W+light)?|knobs?)"
)
# How a body reacts to carbon monoxide: with a sounding alarm, these name the hazard.
_BODY_SYMPTOM = (
    rf"\b(?:dizz\w*|light\W?headed|head\W?aches?|headachy|migraines?|nause\w*|nausi\w*|"
    rf"vomit\w*|puk(?:e|ed|ing)|drowsy|woozy|groggy|fainted|short\W+of\W+breath)\b|"
    rf"\bheads?\W+(?:(?:is|are|s|keeps?|really|so)\W+)*(?:hurt\w*|pound\w*|throb\w*|spinning|"
    rf"killing)\b|\b(?:throw(?:ing|n)?|threw)\W+up\b|\bpass(?:ed|ing)?\W+out\b|"
    rf"\b(?:feel|feels|feeling|felt|getting|got|gotten|all|super|so|really|very|s|is|are)\W+"
    rf"(?:\w+\W+)?(?:sick|sleepy|drowsy|confused|faint|weak|out\W+of\W+it)\b|"
    rf"\b(?:can{_A}t|cant|won{_A}t|wont)\W+(?:\w+\W+)?wake\W+(?:up|him|her|them)\b"
)


# Someone other than the writer, in the third person: who a medical emergency happens to.
_SOMEBODY_NAMED = (
    r"(?:(?:my|our|the|a|an|his|her|their|this|that)\W+(?:\w+\W+)?(?:son|daughter|kids?|child|"
    r"children|baby|toddler|infant|husband|wife|partner|boyfriend|girlfriend|mom|mother|dad|"
    r"father|grandma|grandmother|grandpa|grandfather|brother|sister|roommate|roomate|neighbou?r|"
    r"friend|man|woman|guy|lady|person|tenant|boy|girl)|grandma|grandpa|nana|papa|mommy|daddy)"
)
_SOMEONE = (
    r"(?:he|she|they|him|her|them|he\W?s|she\W?s|they\W?re|someone|somebody|some\W?one|"
    rf"{_SOMEBODY_NAMED})"
)
# A group of people: carbon monoxide makes several people sick at once.
_EVERYONE = (
    r"(?:every\W?(?:one|body)|all\W+of\W+us|we\W+all|we\W+both|both\W+of\W+us|us\W+all|"
    r"(?:whole|entire)\W+(?:family|house|household|apartment)|all\W+(?:the\W+)?(?:kids|family)|"
    r"me\W+and\W+(?:the|my|our)\W+\w+|(?:my|the|our)\W+\w+\W+and\W+(?:i|me)\b|"
    r"we(?:['’]?re|\W+are|\W+have|\W+keep|\W+both|\W+all))"
)
# Symptoms that ease away from home are the classic tell of carbon monoxide in it.
_BETTER_AWAY = (
    r"\b(?:better|goes\W+away|go\W+away|went\W+away|gone|fine|ok|okay|clears?\W+up)\W+"
    r"(?:\w+\W+){0,3}?(?:outside|outdoors|(?:when|once|after)\W+(?:we|i)\W+(?:leave|left|go\W+out|"
    r"step\W+out|get\W+out)|at\W+(?:work|school))\b"
)
# What burns fuel indoors: with several people sick, a source of carbon monoxide.
_COMBUSTION = (
    r"\b(?:furnace|boiler|heater|stove|oven|generator|fireplace|water\W+heater|gas|exhaust|"
    r"garage|car\W+(?:running|idling)|kerosene|propane|grill|chimney|flue|vent)\b"
)
# Weapons, and the tools and toys that share their names.
_WEAPON = (
    r"(?:guns?|gunn|pistols?|rifles?|shotguns?|firearms?|knife|knives|knif|nife|machete|"
    r"weapons?)"
)
_NOT_A_WEAPON = (
    r"\b(?:nail|caulk\w*|glue|staple|heat|spray|water|squirt|nerf|toy|paint|grease|foam|"
    r"butter|putty|utility|box|steak|bread|kitchen|pocket)\W+(?:guns?|knife|knives)\b|"
    r"\b(?:knife|knives)\W+(?:drawer|block|set|sharpener)\b|\btoy\b|\bnerf\b|video\W*game"
)


def _compiled(source: str) -> re.Pattern[str]:
    """``source`` compiled with IGNORECASE, once per process, when first needed."""
    return compiled(source, re.IGNORECASE)


def _rule(
    category: Category,
    severity: Severity,
    *patterns: str,
    veto: str | None = None,
    requires: str | None = None,
    trigger: str | None = None,
    stems: str = "",
) -> Rule:
    return Rule.of(
        category,
        severity,
        *patterns,
        veto=veto,
        requires=requires,
        trigger=trigger,
        flags=re.IGNORECASE,
        stems=tuple(stems.split()),
    )


_SMOKE_VETO = (
    r"cigar\w*|weed|marijuana|\bpot\b|vap(?:e|ing)|tobacco|hookah|second\W*hand|smokers?\b|"
    r"\bgrill\w*|\bbbq\b|barbe?cue|"
    r"smoke\W+(?:break|shop|show|signals?|screen|and\W+mirrors)"
)
# "people smoke in the stairwell" is a complaint about smokers, not a fire.
_SMOKE_AS_VERB = r"(?<!people )(?<!they )(?<!he )(?<!she )(?<!i )(?<!we )(?<!to )(?<!you )"
_FIRE = r"(?:fi+re|fyre|fier|fiyre|fiyer)"
_FIRE_NOUN = (
    rf"{_FIRE}\b(?!\W*(?:alarms?|extinguishers?|escapes?|drills?|inspections?|doors?|exits?|"
    r"trucks?|engines?|brigade|crews?|chief|captain|lanes?|"
    r"codes?|safety|marshal|hydrants?|pits?|place|wall|works|fighters?|m[ae]n|proof|rated|rating|"
    r"sprinklers?|department|dept|station|insurance|hazards?|ants?|sale|tv|stick|up|away|off|"
    r"at\W+will)\b|\W+(?:in|on)\W+(?:the|my|our|a)\W+(?:fire\W*place|fire\W*pit|grill|bbq|"
    r"barbecue|wood\W*stove|camp\w*))"
)

_RULES: tuple[Rule, ...] = (
    # --- gas ------------------------------------------------------------------------------------
    _rule(
        "gas",
        "emergency",
        # "smell gas", "smells like gas", "reeks of gas", "odor of natural gas", "smel gass"
        rf"\b{_SMELL}(?:{_SEP}(?:{_LIKE}|of|some|a|the|strong|strongly|much|so|lots|lot|faint|bit|"
        rf"little|slight|really|definitely|kinda|kind|sort|maybe|possibly|what|sure|heavy|"
        rf"heavily|it|its|is|s|smells?|something|somethin|smth|sth|s[ou]me?th?(?:ing|in|n|ng)|smthn?g?))"
        rf"{{0,4}}{_SEP}{_GAS}\b",
        rf"\b{_SMELL}{_SEP}(?:\w+\W+)?gassy\b",
        # "gas smell", "gas leak", "gas is leaking", "gas line leak", "gass leek"
        rf"\b{_GAS}{_SEP}(?:(?:is|s|line|pipe|pipes|main|valve|stove|oven|range|dryer|heater|"
        rf"furnace|fireplace|meter|outside|inside|here|again|still|really|definitely)\W+){{0,3}}"
        rf"(?:{_SMELL}|le+a?k\w*|leek\w*|hiss\w*|fumes?)",
        rf"\ble+a?k(?:ing|s|ed)?{_SEP}(?:(?:some|a|of|natural)\W+){{0,2}}{_GAS}\b",
        r"^\W*ga+s+(?:\W+le+a?k)?\W*$",
        rf"\b{_GAS}\W+(?:i|we)\W+(?:can\W+|could\W+)?{_SMELL}",
        # rotten eggs is how people describe mercaptan without saying "gas"
        rf"\b{_SMELL}{_gap(3)}rott?(?:en|on)\W+eggs?",
        r"\brott?(?:en|on)\W+eggs?\W+(?:smell|odou?r|stench|stink)",
        rf"\bhiss\w*{_gap(4)}{_GAS}\b(?!\W+(?:bill|station|price|prices|card|tank|money|mileage))",
        trigger=r"ga|propane|rott",
    ),
    _rule(
        "gas",
        "emergency",
        # symptoms (no "gas"): a hiss at a gas appliance, a sulfur smell
        rf"\bhiss\w*{_gap(7)}{_GAS_SOURCE}\b",
        rf"\b{_GAS_SOURCE}{_gap(4)}hiss\w*",
        rf"\b(?:sulf|sulph)\w*{_gap(2)}(?:{_SMELL})",
        rf"\b{_SMELL}{_gap(3)}(?:sulf|sulph)\w*",
        # a struck match, rotten cabbage: how people describe the odorant without saying "gas"
        rf"\b{_SMELL}{_gap(3)}(?:(?:a|struck|burnt|lit)\W+)+match(?:es)?\b|"
        rf"\b{_SMELL}{_gap(3)}rott?(?:en|on)\W+cabbage\b",
        # a burner hisses for a moment before it lights: that is how it works
        veto=r"(?:before|until|then|and|till)\W+(?:it\W+|the\W+\w+\W+)?(?:lights|ignites|catches)|"
        r"radiator|steam|kettle|fridge|refrigerator|freezer|\btires?\b|snake|\bcats?\b|"
        r"speaker|radio|\btv\b|static|pressure\W+cooker|air\W+fryer|espresso|coffee|"
        r"(?:hot\W+)?water\W+(?:smells?|stinks?|reeks?)|tap\W+water|faucet|shower|well\W+water",
        trigger=r"hiss|sulf|sulph|match|cabbage",
    ),
    # --- carbon monoxide ------------------------------------------------------------------------
    _rule(
        "carbon_monoxide",
        "emergency",
        # "carbon monoxide ... going off", "CO alarm beeping"; a bare "co"/"carbon" needs a device
        rf"\b(?:(?:carb[oa]n\W*m[a-z]{{4,}}|m[oa]n[oi]x\w*)(?:\W*{_CO_DEVICE})?|"
        rf"(?:carbon|c\W?[o0]2?)\W*{_CO_DEVICE}){_gap(4)}(?:going\W+off|"
        rf"goes\W+off|went\W+off|gone\W+off|go(?:ing|in)?\W+off|beep\w*|sound\w*|ring\w*|"
        rf"blar\w*|scream\w*|alarm\w*|reading|reads|says|shows|display\w*|ppm|triggered|"
        rf"activated|poison\w*|(?:le+a?k|leek)\w*|high\b|headaches?|dizzy|nause\w*|sick)",
        # the device names the gas itself: "the alarm in the hall says CO"
        rf"\b{_CO_DEVICE}{_gap(4)}(?:says|reads|reading|shows|showing|display\w*)\W+"
        rf"(?:co|c0|carbon)\b(?!\W*op\b)",
    ),
    _rule(
        "carbon_monoxide",
        "emergency",
        r"\bcarb[oa]n\W*m[a-z]{4,}|\bm[oa]n[oi]x[a-z]*|\bmonixide\b",
        veto=r"missing|\bnew\b",
    ),
    _rule(
        "carbon_monoxide",
        "emergency",
        # symptoms (no "carbon monoxide"): an alarm or detector sounding while people feel dizzy,
        # sick, sleepy or have headaches; an alarm named as a smoke, fire, car or security alarm,
        # and an alarm explained by cooking or a test, are left to the other rules
        rf"\b(?:alarms?|detectors?|detecter|sensors?|monitors?)\b{_gap(5)}(?:go(?:ing|in)?\W+off|"
        rf"goes\W+off|went\W+off|gone\W+off|beep\w*|sound\w*|ring\w*|blar\w*|scream\w*|"
        rf"shriek\w*|wail\w*|squeal\w*|going\W+crazy|won{_A}t\W+stop|wont\W+stop|keeps?\W+going)",
        r"\bbeep(?:ing|s|ed|in)?\b",
        requires=_BODY_SYMPTOM,
        veto=r"smoke\W*(?:alarm|detector)|fire\W*alarm|\bcar\b|alarm\W+clock|"
        r"\bclock\b|security|burglar|keypad|microwave|timer|truck|\bphone\b|washer|dryer|"
        r"dishwasher|fridge|cook\w*|toast|popcorn|burnt|\btest\w*|drill|false\W+alarm|\bflu\b|"
        r"\bshot\b|all\W+good|\bfine\W+now",
        trigger=r"alarm|detect|sensor|monitor|beep",
    ),
    # --- smoke / fire ---------------------------------------------------------------------------
    _rule(
        "smoke_fire",
        "emergency",
        # "fir" is a tree, so the typo pass leaves it; "on fir" and "caught fir" are fires
        rf"\bon{_SEP}(?:{_FIRE}|fir)\b(?!\W+trees?)",
        rf"\b(?:caught|catch|catching|catches|cought|caugh|set){_SEP}(?:on{_SEP})?(?:{_FIRE}|fir)\b"
        rf"(?!\W+trees?)",
        rf"\b(?:an?|small|big|huge|kitchen|grease|electrical|electric|house|building|apartment|"
        rf"stove|oven|dryer|garage|attic|basement|trash|garbage|real|major|massive)\W+{_FIRE_NOUN}",
        rf"(?<!cease )(?<!camp )(?<!open )\b{_FIRE_NOUN}(?=\W+(?:in|at|on|near|inside|upstairs|"
        rf"downstairs|"
        rf"next\W+door)\W+(?:the|my|our|unit|apt|apartment|building|kitchen|bedroom|hallway|"
        rf"basement|\d))",
        rf"\b{_FIRE}\b\W*!+",
        rf"\b{_THERES}{_gap(1)}{_FIRE_NOUN}",
        r"\bfire\W+everywhere\b",
        r"^\W*(?:fire\W*)+$",
        rf"\b{_FIRE_NOUN}{_SEP}(?:is\W+|s\W+)?(?:spread\w*|growing|getting\W+bigger)",
        rf"\b(?:{_PLACE}|{_APPLIANCE}|{_ELEC}){_gap(2)}(?:burning|in\W+flames)"
        rf"\b(?!\W+(?:smell|hot|up|out))",
        r"\bburning\W+down\b",
        rf"\bflames{_gap(1)}(?:coming|shooting|from|out|everywhere|on|in|inside|under|behind|"
        r"spreading)\b",
        r"\b(?:in|into)\W+flames\b",
        rf"\b(?:see|saw|seeing|{_THERES}){_gap(1)}flames?\b",
        # a fire told as past ("a small grease fire last month, its fine") is a repair story:
        # the past frame (safety_framing), which yields when the text says it is burning now
        trigger=r"fi+re|fyre|fier|fiyre|fiyer|fir\b|flame|burning",
    ),
    _rule(
        "smoke_fire",
        "emergency",
        # smoke that is moving or somewhere: "smoke coming out of the oven", "smokes coming thru"
        rf"{_SMOKE_AS_VERB}\b{_SMOKE}{_gap(1)}(?:coming|comming|pouring|billowing|bellowing|"
        rf"filling|fills|filled|rising|everywhere|spreading|seeping|leaking|pour\w*|com(?:in|es)|"
        rf"from|out\W+of|inside|under|in\W+(?:the|my|our|here|this|every))\b",
        # someone sees or smells smoke: "theres smoke", "i smell smoke", "full of smoke"
        rf"\b(?:{_THERES}|see|seeing|saw|{_SMELL}(?:\W+{_LIKE})?|full\W+of|"
        rf"fill(?:ed|ing|s)?\W+(?:up\W+)?with|lots\W+of|so\W+much|black|thick|heavy|white|gr[ae]y){_gap(1)}{_SMOKE}\b"
        rf"(?!\W+(?:detector|alarm|break))",
        # an appliance or part that is smoking: "outlet is smoking", "the dryer started smoking"
        rf"\b(?:{_ELEC}|{_APPLIANCE}){_gap(2)}smok(?:ing|in|es|ed)\b",
        r"^\W*smoke\W*$|\bsmoke\W*!+",
        # smoke said to be outdoors ("from the neighbors fireplace but it's outside") is not in here
        veto=_SMOKE_VETO + r"|\b(?:but|it['’]?s|it\W+is)\W+(?:all\W+|just\W+|only\W+)?outside\b",
        trigger=r"smo+a?k",
    ),
    _rule(
        "smoke_fire",
        "urgent",
        # a sounding alarm may be a fire; a chirp is a battery (routine)
        rf"\b(?:smoke|fire|smok)\W*(?:alarms?|detectors?|detecter|dectector|detectr){_gap(3)}"
        rf"(?:go(?:ing|in)?\W+off|goes\W+off|went\W+off|gone\W+off|sounding|blaring|screaming|"
        rf"ringing|won{_A}t\W+stop|wont\W+stop|alarming|triggered|activated|beeping\W+nonstop)",
        # cooking, steam and an all-clear explain the alarm; a fire would match the rules above
        veto=r"cook\w*|toast|steam|shower|false\W+alarm|all\W+good|all\W+fine|"
        rf"it{_A}s\W+fine|its\W+fine|everything{_A}s\W+fine|no\W+fire",
    ),
    _rule(
        "smoke_fire",
        "emergency",
        # symptoms: smoky or hazy air with a burning smell or an alarm; no "smoke" or "fire"
        rf"\b{_SMELL}{_gap(1)}smoky\b",
        r"\b(?:really|so|very|super|too|getting|all|kinda|pretty|real|is|s)\W+smoky\b",
        r"\b(?:hazy|haze)\b",
        requires=r"burn\w*|smok\w*|alarm|\bfire\b|soot|smell\w*",
        veto=_SMOKE_VETO + r"|bbq|grill\w*|barbe?cue|whiske?y|scotch|flavou?r|bacon|salmon|"
        r"paprika|wild\W*fires?|fire\W*place|fire\W*pit|candle|incense|weather|forecast|outside|"
        r"smog|\bfog|\bsky\b|pollen|memory|memories|vision|glasses|\bipa\b|\bbeer\b",
        trigger=r"smoky|haz",
    ),
    _rule(
        "smoke_fire",
        "urgent",
        # symptoms of a fire out of sight: a glow under a door, soot pouring out, a hot wall
        r"\b(?:orange|red)\W+glow\w*|\bglow\w*\W+(?:orange|red)\b",
        rf"\bsoot{_gap(3)}(?:coming|everywhere|pouring|blowing|all\W+over|out)\b",
        r"\bblack\W+(?:stuff|dust|soot|gunk|flakes)\W+(?:\w+\W+)?(?:coming|pouring|blowing|"
        r"billowing)\W+(?:out|from|through|thru)\b",
        rf"\bwalls?{_gap(3)}(?:is|are|s|feels?|getting)\W+(?:really\W+|very\W+|so\W+|super\W+)?"
        rf"hot\b(?!\W+water)",
        veto=r"heater|toaster|coils?|\blamp\b|sunset|\bsky\b|neon|night\W*light|\bleds?\b|"
        r"radiator|\bsun\b|oven|fire\W*place|\bpipes?\b|shower|hot\W+water|summer|heat\W+wave",
        trigger=r"glow|soot|black|hot",
    ),
    _rule(
        "carbon_monoxide",
        "emergency",
        # symptoms, no alarm: several people sick at once, with something burning fuel nearby
        rf"\b{_EVERYONE}\W+(?:\w+\W+){{0,6}}?(?:{_BODY_SYMPTOM})",
        requires=_COMBUSTION + "|" + _BETTER_AWAY,
        veto=r"\bflu\b|covid|virus|\bcold\b|food\W+poison\w*|stomach\W+bug|allerg\w*|paint|"
        r"\bmold\b|\bmould\b|hangover|\bbeer\b|drunk|\bate\b|take\W?out|\bfood\b|dinner|lunch|"
        r"restaurant",
    ),
    _rule(
        "gas",
        "emergency",
        # symptoms: gas is said to smell of skunk, inside, near what burns it
        rf"\b{_SMELL}{_gap(3)}skunk\w*",
        rf"\bskunk\w*{_gap(2)}{_SMELL}",
        requires=rf"\b{_GAS_SOURCE}\b|kitchen|basement|furnace|heater|boiler|\binside\b",
        veto=r"weed|marijuana|\bpot\b|smok\w*|outside|\byard\b|\bdogs?\b|porch|\bdeck\b|"
        r"garbage|trash|\bbeer\b",
        trigger=r"skunk",
    ),
    _rule(
        "gas",
        "emergency",
        # symptoms: a pilot light gone out, and a smell
        rf"\bpilot(?:\W+light)?{_gap(2)}(?:went|is|s|blew|keeps\W+going|has\W+gone)\W+out\b",
        requires=rf"(?<!\bno\W)(?<!\bany\W)\b{_SMELL}",
        trigger=r"pilot",
    ),
    # --- electrical -----------------------------------------------------------------------------
    _rule(
        "electrical",
        "emergency",
        r"\bspark(?:ing|ed|in)\b(?!\W+(?:joy|interest|conversation|debate|ideas?))",
        rf"\bsparks{_gap(1)}(?:coming|flying|shooting|everywhere|out|from|when|in\W+the\W+wall)",
        rf"\b(?:{_ELEC}|{_APPLIANCE}){_gap(3)}sparks?\b",
        rf"\bsparks?\b(?!\W*plugs?){_gap(3)}{_ELEC}",
        rf"\belectrical{_gap(1)}(?:smell|odou?r|fire)",
        # a hot, buzzing, melting or scorched part
        rf"\b{_ELEC_STRONG}{_gap(4)}(?:melt\w*|scorch\w*|charred|blackened|burn(?:ing|t|ed)\b"
        rf"(?!\W+out)|hot\W+to\W+the\W+touch|too\W+hot|really\W+hot|very\W+hot|so\W+hot|buzz\w*|"
        rf"smok\w*|arcing|popping)",
        rf"\b(?:melted|melting|scorched|charred|burnt|burned){_gap(1)}{_ELEC_STRONG}",
        # symptoms: a part gone black or marked black; "sparkling" is what autocorrect makes of
        # "sparking", so it counts at an electrical part (not "sparkling clean")
        rf"\b{_ELEC_STRONG}{_gap(3)}(?:turned|turning|gone|going|went|is|s|are|got|getting)\W+"
        rf"(?:all\W+)?(?:black|charred)\b",
        rf"\bblack\W+(?:marks?|spots?|stains?|streaks?|residue)\b{_gap(3)}{_ELEC_STRONG}",
        rf"\b{_ELEC_STRONG}{_gap(4)}black\W+(?:marks?|spots?|stains?|streaks?|residue)",
        rf"\b{_ELEC_STRONG}{_gap(3)}sparkl(?:ing|ed|es|e)\b(?!{_SEP}(?:clean|new|white|bright))",
        rf"\bsparkl(?:ing|ed|es)\b(?!{_SEP}(?:clean|new|white|bright|water)){_gap(3)}"
        rf"{_ELEC_STRONG}",
        # shocks and live wires
        rf"\b(?:shock\w*|electrocut\w*|zapp?\w*){_gap(3)}{_ELEC}",
        rf"\b{_ELEC}{_gap(3)}(?:shock\w*|electrocut\w*|zapp?ed)",
        r"\belectrocut\w*",
        rf"\b(?:live|exposed|bare|hanging|loose|downed|fallen|sparking){_SEP}(?:electrical\W+|"
        rf"electric\W+|power\W+|live\W+)?(?:wires?|wiring|lines?)\b",
        rf"\bpower\W+lines?{_gap(2)}(?:down|fell|fallen|sparking|on\W+the)",
        trigger=r"spark|electr|melt|scorch|charr|black|burn|hot|buzz|smok|arcing|popping|shock|"
        r"zap|wir|line",
    ),
    _rule(
        "electrical",
        "urgent",
        # a part that is hot, warm, crackling ("the switch plate is warm and crackling")
        rf"\b{_ELEC_STRONG}{_gap(4)}(?:and\W+(?:it{_A}s\W+|its\W+|it\W+is\W+|is\W+|s\W+)?)?"
        rf"(?:hot\b(?!\W+(?:water|tub|plate|pot|sauce|tea|food))|warm\b|crackl\w*|sizzl\w*|"
        rf"flash\w*)",
        rf"\b{_SMELL}{_SEP}(?:(?:really|very|so|kinda|like)\W+)?hot\b(?!\W+(?:sauce|food|dog))",
        # the sound first: "crackling noise in the wall behind the outlet"
        rf"\b(?:crackl\w*|sizzl\w*|buzz\w*|popping|arcing){_gap(6)}{_ELEC_STRONG}\b",
        # a wire burning out of sight: crackling inside a wall; an arc seen as a flash and a pop
        r"\b(?:crackl\w*|sizzl\w*|popping|arcing)\W+(?:\w+\W+)?(?:in|inside|behind|within|from)\W+"
        r"(?:the\W+|my\W+|our\W+)?(?:\w+\W+)?walls?\b",
        rf"\b(?:blue|white|bright)\W+(?:flash|spark|arc)\w*{_gap(3)}(?:and\W+)?(?:a\W+)?"
        rf"(?:loud\W+)?(?:pop|bang|boom)\b|\bflash\w*\W+and\W+(?:a\W+)?(?:loud\W+)?(?:pop|bang)"
        rf"\b(?={_gap(8)}(?:plug\w*|outlets?|sockets?|switch\w*|panel|breakers?|walls?)\b)",
        trigger=r"hot|warm|crackl|sizzl|flash|buzz|popping|arcing|blue|white|bright",
    ),
    _rule(
        "electrical",
        "emergency",
        # a burning smell with no cooking to explain it: "smells like something's burning"
        rf"\bburn(?:ing|t|ed|in){_gap(1)}{_SMELL}",
        rf"\b{_SMELL}(?:{_SEP}(?:{_LIKE}|of|some|something|somethings|smth|sth|a|the|strong|"
        rf"electrical|electric|plastic|rubber|wires?|wiring|is|s|kinda|really)){{0,3}}{_SEP}"
        rf"(?:burn\w*|melt\w*|electrical|scorch\w*)",
        rf"\bsomething(?:{_A}s|\W+is)?{_SEP}(?:\w+\W+)?burning\b",
        veto=r"\btoast\w*|popcorn|candle|incense|\bfood\b|dinner|cooking|\bpan\b|\bpot\b",
        trigger=r"burn|melt|electric|scorch",
    ),
    _rule(
        "electrical",
        "emergency",
        # symptom: overheating plastic smells of fish; only with an electrical part in the story
        r"\bfish(?:y|ie)?\W+(?:smell\w*|odou?rs?|stench)",
        rf"\b{_SMELL}{_gap(2)}fish(?:y|ie)?\b",
        requires=rf"\b{_ELEC_STRONG}\b|flicker\w*",
        veto=r"fish\W+(?:tank|food|market|sauce|store|fry)|cook\w*|dinner|salmon|tuna|seafood|"
        r"trash|garbage|fridge|refrigerator|freezer|drain|sink|disposal|\bcats?\b",
        trigger=r"fish",
    ),
    _rule(
        "electrical",
        "emergency",
        # symptoms: a shock from a tap, a pipe or an appliance (static is not a hazard)
        r"\b(?:got|getting|get|gets|been|keep\w*\W+getting)\W+(?:a\W+)?(?:shocked|zapped|"
        r"electrocuted|shock|jolt)\b",
        rf"\b(?:faucet|tap|sink|metal|pipes?|shower|tub|bathtub|fridge|stove|oven|washer|dryer|"
        rf"appliance|handle|railing){_gap(3)}(?:shock(?:s|ed|ing)?|tingl\w*|zapp?(?:ed|ing|s)?)\b",
        r"\b(?:shock\w*|tingl\w*|zapp?\w*|jolt\w*)\W+(?:\w+\W+)?(?:from|by|when|touching)\W+"
        r"(?:\w+\W+){0,2}(?:faucet|tap|sink|metal|pipes?|shower|tub|bathtub|fridge|stove|oven|"
        r"washer|dryer|appliance|handle|railing)\b",
        veto=r"static|carpet|door\W*knob|sweater|blanket|\bbill\b|\brent\b|price|news|surpris\w*|"
        r"\bcar\b",
        trigger=r"shock|zap|electrocut|jolt|tingl",
    ),
    # --- flooding -------------------------------------------------------------------------------
    _rule(
        "flooding",
        "emergency",
        # "flooding", "flooded", "flodding", "floding"; not "flooded with work"
        r"\bfl(?:o{1,3}|u)d{1,2}(?:ing|in|ed|s|e)?\b(?!\W+(?:with|of|insurance|zones?|lights?|"
        r"plains?|warnings?|watch|advisory|gates?|inbox|by\W+(?:calls|emails|messages|requests|"
        r"work)))",
        # liquid coming through the ceiling / light fixture: "leaking into my bathroom ceiling"
        rf"\b(?:pour|le+a?k|leek|drip|gush|stream|seep|spray|spew|rain|flow|pissing|pissin)\w*"
        rf"{_SEP}(?:in\W+|down\W+|out\W+)?{_THROUGH}{_gap(2)}(?:{_CEIL}|roof|light\W*fixtures?|"
        rf"fixtures?|lights?|vents?)\b",
        rf"\bwater(?:{_A}s|\W+is|\W+was)?{_gap(2)}(?:through|thru|threw){_gap(2)}(?:{_CEIL}|roof|"
        rf"light|fixture|walls?|floor)",
        # burst pipes and tanks
        rf"\b(?:burst|bursted|busted|broken|broke|exploded|split|blown|ruptured|leaking|cracked)"
        rf"{_gap(1)}(?:water\W+)?(?:pipes?|water\W+main|main\W+line|water\W+line|supply\W+line)",
        rf"\b(?:pipes?|pip|water\W*main|water\W+line|supply\W+line|water\W*heater|"
        rf"hot\W+water\W+tank|"
        rf"tank|washer\W+hose|hose){_gap(2)}(?:burst\w*|bust(?:ed)?\b|broke\b|exploded|split\b|"
        rf"blew|ruptured|popped)",
        # water that will not stop
        rf"\bwater{_gap(3)}(?:gushing|spraying|pouring|shooting|spewing|everywhere|all\W+over|"
        rf"rising|won{_A}t\W+stop|wont\W+stop|not\W+stopping|keeps\W+(?:coming|pouring|rising))",
        # symptoms: water or a puddle that keeps spreading (a stain or a mark is not water)
        rf"\b(?:water|puddles?)\b(?!\W+(?:stains?|spots?|marks?|damage|rings?|bills?)){_gap(3)}"
        rf"(?:spreading|growing|getting\W+(?:bigger|deeper|worse))\b",
        r"\b(?:inch|inches|foot|feet|ankle|ankles)\W+(?:of\W+|deep\W+(?:of\W+)?)?water\b",
        r"\b(?:full|filled|filling|fills)\W+(?:up\W+)?(?:of|with)\W+water\b",
        rf"\bwater{_gap(2)}(?:coming|pouring|gushing|flowing|seeping|leaking|rushing)\W+in\W+"
        rf"(?:under|through|thru|from)\b",
        r"\b(?:is|are|s|got|went|now)\W+under\W?water\b",
        rf"\bwater{_gap(2)}(?:coming|pouring|gushing|flowing|seeping|leaking|rushing)\W+(?:in|into)"
        rf"\W+(?:the\W+|my\W+|our\W+)?(?:apartment|apt|unit|house|home|basement|room|bedroom|"
        rf"kitchen|living|garage|hallway|building)\b",
        trigger=r"fl[ou]+d|water|pour|le+a?k|leek|drip|gush|stream|seep|spray|spew|rain|flow|piss|"
        r"pip|main|line|tank|hose|heater|puddle",
    ),
    _rule(
        "flooding",
        "emergency",
        # keyword-light (I5): "it's coming through the light fixture now"; upstairs noise, light
        # and air also "come through the ceiling", so those messages are left to the model
        rf"\b(?:com(?:ing|in|e|es)|came|running|falling)\W+(?:in\W+|down\W+)?(?:through|thru|"
        rf"threw|throught|into|in\W+through){_gap(2)}(?:{_CEIL}|roof|light\W*fixtures?|"
        rf"fixtures?|lights?)\b",
        veto=r"nois\w*|music|loud|hear\w*|sounds?|bass|footsteps?|stomp\w*|talk\w*|voices?|"
        r"yell\w*|scream\w*|\btv\b|sun\w*|draft\w*|\bair\b|wind|bugs?|\bants?\b|roach\w*|mice|"
        r"rats?\b|smell\w*|smoke",
    ),
    _rule(
        "flooding",
        "urgent",
        rf"\b{_CEIL}{_gap(2)}(?:(?:le+a?k|leek)\w*|drip\w*|pour\w*|gush\w*|rain\w*)",
        rf"\b(?:le+a?k|leek)\w*{_gap(1)}(?:in|from|through|thru){_gap(1)}{_CEIL}",
        rf"\broof{_gap(2)}(?:(?:le+a?k|leek)\w*|pour\w*|gush\w*)",
    ),
    _rule(
        "flooding",
        "emergency",
        # symptoms: water that will not stop, or a room under it
        rf"\b(?:le+a?k|pour|gush|spray|spew|pissing|shoot)\w*{_gap(1)}(?:like\W+crazy|like\W+a\W+"
        rf"(?:river|faucet|hose|fire\W*hose|waterfall|sieve)|non\W?stop)",
        r"\b(?:whole|entire)\W+(?:floor|kitchen|bathroom|room|basement|apartment|apt|unit|"
        r"hallway|carpet|laundry\W+room)\W+(?:is\W+|s\W+|got\W+|was\W+)?(?:covered|soaked|"
        r"under\W?water|flooded|swamped)\b",
        rf"\b{_PLACE}{_gap(2)}(?:is|s|looks)\W+(?:like\W+)?an?\W+(?:lake|pond|pool|swimming\W+pool|"
        rf"river|swamp)\b",
        # rain indoors, a river down the stairs: water where no weather reaches
        r"\b(?:rain\w*)\W+(?:on\W+(?:us|me|my|our|the\W+(?:bed|couch|floor|stove))|inside|"
        r"indoors|in\W+(?:my|our|the)\W+(?:bedroom|kitchen|bathroom|living|hall\w*|apartment|apt|"
        r"unit|room|closet|house))\b",
        r"\b(?:a\W+)?(?:river|waterfall|stream|creek)\W+(?:is\W+|s\W+)?(?:going|running|coming|"
        r"pouring|flowing|rushing)\W+(?:down|through|thru|across|into|under|out)\b",
        veto=r"\bsun\w*|\blight\w*(?!\W+fixture)|\bnois\w*|\bcomplaints?\b|\bviews?\b|\bpaint\b|"
        r"\bweather\b|forecast|\bumbrella|\bsongs?\b|\bmusic\b|\bgames?\b",
    ),
    # --- sewage ---------------------------------------------------------------------------------
    _rule(
        "sewage",
        "emergency",
        r"\bsew(?:age|ege|adge|erage|ag|ar|er)\b(?=.*\b(?:back\w*\W*up|overflow\w*|coming|"
        r"everywhere|all\W+over|flood\w*|bubbl\w*|in\W+the\W+(?:tub|sink|shower|basement|floor)))",
        r"\bsew(?:age|ege|adge|erage)\b",
        rf"\bback(?:ing|ed|s)?\W*up{_SEP}(?:in(?:to)?|through|thru|out\W+of|from){_gap(2)}(?:tub|"
        rf"bathtub|shower|sinks?|basement|toilets?|floor|drains?)",
        rf"\b(?:main|sewer|drain)(?:\W+\w+)?\W+line{_gap(2)}back(?:ed|ing)\W*up",
        rf"\b(?:poop|poo|feces|faeces|excrement|shit|crap|waste\W*water|toilet\W+water){_gap(1)}"
        rf"(?:water|coming|backing|everywhere|all\W+over|bubbl\w*|up\W+(?:through|in|from))",
        r"\b(?:backing|backed|coming|bubbling|pushing)\W+up\W+(?:\w+\W+)?(?:poop|poo|feces|"
        r"faeces|sewage|shit|crap|waste)\b",
        veto=r"\bbills?\b|\bcharges?\b|\bfees?\b|\brates?\b|payment|\btax\b|district",
    ),
    _rule(
        "sewage",
        "urgent",
        r"\bsewer\b",
        rf"\btoil\w*{_gap(3)}over\W?flow\w*",
        rf"\bover\W?flow\w*{_gap(2)}toil\w*",
        rf"\b(?:coming|bubbl\w*|backing|gurgl\w*|pouring){_SEP}(?:up\W+)?(?:through|thru|from|"
        rf"out\W+of|in){_gap(2)}(?:drains?|tub|bathtub|shower)\b",
        veto=r"\bbills?\b|\bcharges?\b|\bfees?\b|\brates?\b|payment|\btax\b|district",
    ),
    _rule(
        "sewage",
        "urgent",
        # symptoms: a tub, shower or drain filling with brown water that smells of sewage
        r"\b(?:fill\w*|full|coming|bubbl\w*|backing|gurgl\w*|rising)\W+(?:up\W+)?(?:with\W+|of\W+)?"
        r"(?:\w+\W+)?brown\W+(?:water|sludge|gunk|muck|stuff)\b",
        rf"\bbrown\W+(?:water|sludge|gunk|muck|stuff){_gap(2)}(?:coming|bubbl\w*|backing|"
        rf"gurgl\w*|rising|filling)\W+(?:up|in|out)\b",
        rf"\b{_SMELL}(?:\W+{_LIKE})?\W+(?:poop|poo|shit|crap|feces|sewage)\b",
        requires=r"\b(?:tub|bathtub|shower|drains?|sinks?|basement|floor\W+drain)\b",
        veto=r"\bdogs?\b|\bcats?\b|litter|diaper|\bfaucet\b|\btap\b|rust\w*",
        trigger=r"brown|poop|poo|shit|crap|feces|sewage",
    ),
    # --- no heat in the cold --------------------------------------------------------------------
    _rule(
        "no_heat_freezing",
        "emergency",
        rf"\b(?:no|without){_gap(1)}(?:{_HEAT}|hot\W+air)\b{_NOT_AN_ISSUE}",
        rf"\b{_HEAT}{_gap(3)}{_HEAT_DEAD}",
        _NO_HEAT_HAVE,
        rf"\b(?:nothing\W+but|only|just)\W+(?:ice\W+)?cold\W+air\W+(?:\w+\W+){{0,3}}?{_HEAT}\b",
        requires=_COLD,
    ),
    _rule(
        "no_heat_freezing",
        "urgent",
        rf"\b(?:no|without){_gap(1)}(?:he+a?t|he+a?ting)\b{_NOT_AN_ISSUE}",
        _NO_HEAT_HAVE,
        rf"\b{_HEAT}{_gap(2)}(?:is\W+off\b(?!\W+for\W+the\W+(?:summer|season))|not\W+work\w*|"
        rf"isn{_A}t\W+work\w*|isnt\W+work\w*|doesn{_A}t\W+work|doesnt\W+work|stopped\W+working|"
        rf"died|is\W+dead|went\W+out|is\W+out\b|(?:won{_A}t|wont)\W+(?:turn|come|kick)\W+on|"
        rf"broke\b|broken)",
        rf"\bpipes?{_gap(2)}(?:frozen|froze|freezing|(?:going|gonna|about)\W+to\W+freeze)",
        # symptom: the thermostat reads a cold room ("thermostat says 50"; "is at 55" is a setting)
        rf"\bthermostat{_gap(3)}(?:says|reads|reading|shows|showing)\W+(?:only\W+)?"
        rf"(?:[3-5]\d|6[0-2])\b(?!\W*(?:%|percent|minutes|mins|hours|seconds|days|dollars|bucks))",
        r"\bfrozen\W+pipes?",
        veto=r"\bbill\b|\bpayment\b",
    ),
    # --- break-in -------------------------------------------------------------------------------
    _rule(
        "break_in",
        "emergency",
        rf"\b{_PERSON}{_gap(2)}"
        rf"(?:broke|brok|broken|break|breaking|bust(?:ed)?|forced|forcing|kicked|(?:trying|tried|"
        rf"tryna|attempted)\W+to\W+(?:get|break|come|force|kick))"
        rf"\W*(?:in|into|inside|in\W+to|in2)\b{_NOT_IN_HALF}",
        rf"\b(?:was|been|got|were|is|are|being|getting|get){_gap(1)}broken\W*in(?:to)?\b"
        rf"{_NOT_IN_HALF}",
        rf"\bbreak(?:-|)ins?\b{_BREAK_IN_OBJECT_OK}",
        # "brake in" is a real word, so the typo pass leaves it; only these two contexts read it
        rf"\b{_THERES}{_gap(1)}(?:an?\W+)?(?:attempted\W+)?br(?:ea|a)ke?\W?ins?\b"
        rf"{_BREAK_IN_OBJECT_OK}",
        r"\bbr(?:ea|a)ke?\W?in\b(?=\W+(?:at|last|tonight|today|earlier|this\W+(?:morning|afternoon|"
        r"evening)|right\W+now|in\W+progress)\b|\W*$|\W*!)",
        rf"\bdoors?{_gap(3)}(?:kicked|forced|pried|bashed|smashed)\W+(?:in|open|down|off)\b",
        rf"\b(?:kicked|forced|pried|bashed)\W+(?:in\W+|down\W+|open\W+)?(?:my|our|the){_gap(1)}"
        rf"doors?\b",
        r"\b(?:burglar\w*|burgu?l[ae]r\w*|burgler\w*|robbed|robbery|home\W+invasion|ransacked)\b",
        rf"\b{_PERSON}{_gap(2)}(?:broke|smashed|busted|kicked|forced|pried)\W+(?:\w+\W+){{0,2}}"
        rf"(?:windows?|doors?|locks?)\b",
        rf"\b{_PERSON}(?:{_A}s|\W+is|\W+was|\W+has)?(?:\W+been)?\W+(?:in|inside)\W+(?:my|our)\W+"
        rf"(?:apartment|apt|"
        rf"unit|house|home|room|bedroom|place|basement)\b",
        veto=r"shoes|boots|sneakers|heels|\bgloves?\b|\bbaseball\b|\bmitt\b",
    ),
    _rule(
        "break_in",
        "urgent",
        r"\b(?:strangers?|intruders?|prowlers?)\b",
        rf"\btrying{_gap(1)}(?:doors|door\W+handles|to\W+open\W+(?:my|our|the)\W+doors?)",
    ),
    _rule(
        "break_in",
        "urgent",
        # keyword-light: belongings gone, with a door, window or lock in the story
        r"\b(?:stuff|things|items|belongings|valuables|tv|laptop|jewelry|electronics)\W+"
        r"(?:\w+\W+)?(?:is|are|were|was|s|got|been)?\W*(?:missing|stolen|gone|taken)\b",
        # symptoms: drawers dumped, the place ransacked
        rf"\b(?:drawers?|closets?|cabinets?|dressers?){_gap(3)}(?:dumped|emptied|rifled|"
        rf"pulled\W+out|thrown|tossed|gone\W+through|ransacked)",
        r"\b(?:place|apartment|apt|room|bedroom|house|everything|stuff)\W+(?:(?:was|is|got|s|"
        r"been|all)\W+)*(?:trashed|tossed|ransacked|turned\W+upside\W+down|gone\W+through)\b",
        requires=r"\bdoors?\b|\bwindows?\b|\blocks?\b",
    ),
    # --- structural -----------------------------------------------------------------------------
    _rule(
        "structural",
        "emergency",
        rf"\b(?:{_CEIL}|roof|balcon(?:y|ies)|deck|porch|stairs|stairway|staircase|steps|railing|"
        rf"walls?|floors?|floorboards|beams?|joists?|foundation|chimney|building|awning|soffit)"
        rf"{_gap(6)}(?:and\W+(?:it{_A}s\W+|its\W+|it\W+is\W+|is\W+|are\W+)?)?"
        rf"(?:sag\w*|bow(?:ing|ed|s)?\b|bulg\w*|buckl\w*|collaps\w*|cav(?:ing|ed|e)\b|"
        rf"fell\b|falling\W+(?:in|down|apart|off)|fall\W+(?:in|down)|coming\W+(?:down|apart|"
        rf"loose|off)|came\W+(?:down|off|apart)|gave\W+way|giv(?:e|ing)\W+way|pull(?:ing|ed)"
        rf"\W+away|separat\w*|detach\w*|sinking|sunk|sank|crumbl\w*|lean(?:ing|s)\b|tilt\w*|"
        rf"droop\w*|dropp(?:ing|ed)|(?:about|going|gonna)\W+to\W+(?:fall|collapse|give)|"
        rf"cracking\W+open|split\w*\W+open)",
        rf"\b(?:sagging|collaps\w*|caved?\W+in|caving|bowing|bulging|buckl\w*|crumbling|"
        rf"falling){_gap(1)}(?:{_CEIL}|roof|balcon(?:y|ies)|deck|porch|stairs|staircase)\b",
        rf"\b(?:plaster|drywall|sheetrock|chunks?|pieces?|debris|bricks?){_gap(3)}(?:fall\w*|fell|"
        rf"coming\W+down|came\W+down|dropp\w*)",
        rf"\b(?:fall\w*|fell|coming\W+down|came\W+down){_SEP}(?:from|off|out\W+of){_gap(1)}"
        rf"{_CEIL}",
    ),
    _rule(
        "structural",
        "urgent",
        # keyword-light (I5): "it's sagging more every hour"; the model judges what "it" is
        rf"\b(?:it|it{_A}s|its|it\W+is|they{_A}re|theyre|they\W+are|it\W+keeps)\W+(?:\w+\W+)?"
        rf"(?:sagging|bowing|bulging|buckling|collapsing|caving|crumbling|giving\W+way)\b",
        rf"\bcracks?{_gap(4)}(?:getting|growing|gotten)\W+(?:bigger|wider|larger|worse)",
    ),
    _rule(
        "structural",
        "emergency",
        # symptoms: a wet ceiling that cracks, bulges or bubbles can come down
        rf"\b{_CEIL}{_gap(3)}(?:cracking|crack(?:ed|s)?|bubbl\w*|blister\w*|bulg\w*|swell\w*|"
        rf"swollen)\b",
        rf"\b(?:bubbles?|bulges?|blisters?|cracks?|swelling){_gap(3)}(?:in|on)\W+"
        rf"(?:the\W+|my\W+|our\W+)?(?:\w+\W+)?{_CEIL}",
        requires=r"water|\bwet\b|drip\w*|leak\w*|soak\w*|\bdamp\b|pour\w*|soggy",
        # an old, dried or fixed crack is a repair request
        veto=r"steam|condensation|\bdry\b|dried|\bold\b|last\W+(?:year|month|week|winter|summer|"
        r"spring|fall)|(?:months?|years?|weeks?)\W+ago|no\W+(?:more\W+)?(?:leak|drip|water)|"
        r"fixed|repaired|\bpatch\w*",
    ),
    _rule(
        "structural",
        "emergency",
        # symptoms: a floor, step or deck someone is about to go through
        r"\b(?:gonna|going\W+to|about\W+to|will|could|might)\W+(?:fall|go|crash|step|break)\W+"
        r"(?:right\W+)?(?:through|thru)\b",
        requires=r"\b(?:stairs|steps?|floors?|floorboards?|deck|balcony|porch|ceiling|roof|boards?|"
        r"landing|treads?)\b",
        veto=r"\bdeal\b|\bplans?\b|appointment|schedule|\bsale\b|contract|cracks\W+in\W+the\W+"
        r"system",
    ),
    # --- other ----------------------------------------------------------------------------------
    _rule(
        "other",
        "emergency",
        rf"\b(?:stuck|trapped|locked){_gap(2)}(?:elevator|elavator|elevater|lift)\b",
        rf"\b(?:elevator|elavator|elevater){_gap(4)}(?:inside|trapped|stuck\W+(?:in|inside))\b",
        rf"\b(?:i{_A}m|im|we{_A}re|were|someone|somebody|kids?|child|baby|he|she|they|"
        rf"he{_A}s|she{_A}s|they{_A}re){_gap(1)}trapped\b",
        r"\b(?:call(?:ed|ing)?|dial(?:ed|ing)?|phoned?)\W+911\b",
        rf"\b911{_gap(1)}(?:is|are|on\W+the\W+way|here|coming)\b",
        r"\bfire\W+(?:department|dept|truck|trucks|fighters)\W+(?:is\W+|are\W+)?(?:here|on|"
        r"coming|outside)\b",
    ),
    _rule(
        "other",
        "emergency",
        # someone trapped in a place they cannot leave
        rf"\b(?:can{_A}t|cant|cannot|can\W+not|unable\W+to)\W+get\W+(?:\w+\W+)?out\b",
        requires=r"\b(?:elevator|elavator|elevater|lift|trapped|fire|smoke|flames)\b",
    ),
    _rule(
        "other",
        "urgent",
        # a small child locked in alone
        r"\b(?:toddler|baby|infant|little\W+one|[1-5]\W*(?:yo|year\W*old))\W+"
        r"(?:\w+\W+)?locked\W+(?:himself|herself|themselves|themself)\W+in\b",
    ),
    _rule(
        "other",
        "emergency",
        # medical (I5: someone may be in danger now): the floor reports it as "other", whose
        # advice is to call 911; the model judges the rest
        r"\bunconcious\b|\bunconscious\b|\bpassed\W+out\W+cold\b",
        rf"\b{_SOMEONE}{_gap(2)}(?:is\W+|s\W+|was\W+|went\W+)?(?:unresponsive|not\W+responsive|"
        rf"not\W+responding|non\W?responsive|limp|blue|turning\W+(?:blue|purple|grey|gray))\b",
        rf"\b(?:not|isn{_A}t|isnt|stopped|barely|can{_A}t|cant|cannot|trouble|struggling\W+to|"
        rf"hard\W+to)\W+(?:\w+\W+)?breath(?:e|ing)?\b",
        rf"\b(?:can{_A}t|cant|cannot|won{_A}t|wont|couldn{_A}t)\W+(?:\w+\W+)?wake\W+"
        rf"(?:(?:him|her|them|{_SOMEONE})\W+)?up\b|\bnot\W+waking\W+up\b",
        rf"\b{_SOMEONE}{_gap(6)}(?:and\W+)?(?:is\W+|isn{_A}t\W+|isnt\W+|s\W+|not\W+|still\W+)*"
        rf"(?:not\W+moving|isn{_A}t\W+moving|isnt\W+moving)\b",
        r"\b(?:having|had|has)\W+(?:a\W+)?(?:seizure|stroke|heart\W+attack|convulsions?)\b|"
        r"\bseiz(?:ing|ures?)\b|\bconvuls\w*|\bheart\W+attack\b",
        r"\boverdos\w*|\bo\.?d(?:['’]d|['’]?ed|['’]?ing)\b",
        rf"\b{_SOMEONE}{_gap(3)}(?:and\W+)?(?:is\W+|s\W+)?chok(?:ing|in)\b",
        r"\b(?:lips?|face)\W+(?:\w+\W+)?(?:turning|turned|going|are|is)\W+(?:blue|purple|grey|"
        r"gray)\b|\bface\W+(?:is\W+)?droop\w*|\bslurr\w*",
        rf"\bbleed\w*\W+(?:\w+\W+)?(?:a\W+lot|alot|badly|bad\b|heavily|everywhere|"
        rf"won{_A}t\W+stop|wont\W+stop|so\W+much|profusely|like\W+crazy)|"
        rf"\b(?:won{_A}t|wont|can{_A}t|cant)\W+stop\W+(?:the\W+)?bleed\w*|"
        rf"\bblood\W+(?:is\W+)?(?:everywhere|all\W+over)\b|\b(?:lots|so\W+much|pool)\W+of\W+blood\b",
        r"\bchest\W+pains?\b",
        rf"\b(?:fell|fallen|collapsed|lying|laying|on\W+the\W+floor){_gap(6)}(?:and\W+)?"
        rf"(?:(?:he|she|they|i)\W+)?(?:can{_A}t|cant|cannot|won{_A}t|wont|unable\W+to)\W+(?:get\W+up|move|talk|speak|answer|respond)\w*\b",
        rf"\b{_SOMEONE}\W+(?:just\W+)?collapsed\b",
        rf"\b(?:fell|fallen|collapsed|dropped|lying|laying){_gap(10)}(?:and\W+)?(?:(?:is|s|still)\W+)*"
        rf"(?:not|isn{_A}t|isnt|hasn{_A}t|hasnt|stopped)\W+(?:moving|breathing|responding|"
        rf"answering)\b",
        r"\b(?:bent|twisted|pointing)\W+the\W+wrong\W+way\b|\bbones?\W+(?:is\W+|are\W+)?"
        r"(?:sticking|poking)\W+out\b",
        # a chest that hurts from a cough, a past fall, a seizure or choking in a story or a plan
        veto=r"cough\w*|\blol\b|(?<!since )\blast\W+(?:week|month|year|night)|"
        r"(?:days?|weeks?|months?|years?)\W+ago|yesterday|\bokay\W+now\b|\bfine\W+now\b|\bbetter\W+now\b|recover\w*|"
        r"\bgame\b|\bmovie\b|\bshow\b|\bbook\b|phone|\bapp\b|screen|website|router|wifi|"
        r"laugh\w*|giggl\w*",
        trigger=r"uncon|unres|respon|limp|blue|purple|gr[ae]y|breath|wake|waking|moving|seiz|"
        r"stroke|attack|convuls|overdos|o\.?d|chok|droop|slurr|bleed|blood|chest|get\W+up|mov|breath|"
        r"wrong\W+way|sticking|poking|"
        r"talk|speak|answer|respond|collapsed|passed",
    ),
    _rule(
        "other",
        "emergency",
        # violence now: a weapon in someone's hands, shots, a stabbing, someone being beaten
        rf"\b{_WEAPON}\W*(?:shots?|fire\b|fired)|\bshots\W+(?:fired|in|outside|from)\b|"
        rf"\bgun\W?shots?\b",
        rf"\b(?:with|has|had|have|got|pulled|pulling|pointing|pointed|waving|holding|carrying|"
        rf"brandishing|swinging|swings|wielding)\W+(?:a\W+|an\W+|his\W+|her\W+|their\W+)?{_WEAPON}\b",
        rf"\b{_WEAPON}\W+(?:pointed|pulled|out)\b",
        r"\b(?:got|been|was|is|being|were|are|just)\W+(?:stabbed|shot|attacked|assaulted|"
        r"mugged|beaten|jumped)\b",
        r"\b(?:stabbing|shooting|beating|attacking|assaulting|assulting|punching|choking|"
        r"strangling)\W+(?:\w+\W+)?(?:at\W+)?(?:him|her|them|people|someone|somebody|"
        r"(?:his|her|their|a|the|my)\W+(?:\w+\W+)?(?:wife|girlfriend|boyfriend|husband|partner|"
        r"kid|son|daughter|neighbou?r|mom|mother|woman|man|guy|person|lady))\b",
        r"\b(?:someone|somebody|a\W+man|a\W+guy|a\W+woman|a\W+person|people|he|she|they)\W+"
        r"(?:is|are|s|was|were)\W+(?:shooting|stabbing)\b",
        r"\bthreat\w*\W+(?:\w+\W+)?to\W+(?:kill|hurt|shoot|stab|beat)\b",
        # a threat reported as said ("she will kill me if ..." alone is a figure of speech)
        rf"\b(?:says?|said|saying|yell\w*|scream\w*|shout\w*|told\W+(?:me|us)|texted|keeps\W+saying)"
        rf"\W+(?:that\W+)?(?:he|she|they)(?:{_A}ll|ll|\W+will|\W+(?:is|s|are)\W+(?:going\W+to|"
        rf"gonna))\W+(?:kill|hurt|shoot|stab)\W+(?:me|us|her|him|them|my)\b",
        r"\b(?:screaming|yelling|crying|calling|begging|shouting)\W+for\W+help\b",
        # a cry for help quoted: "a woman is screaming help me", "someone yelling 'help'"
        r"\b(?:screaming|screams|yelling|yells|shouting|shouts|crying|cries)\W+[\"'“‘]?help\b"
        r"(?!\W+(?:with|finding|find|moving|carry\w*|them|us\W+(?:with|move|find)))",
        veto=_NOT_A_WEAPON + r"|\bants?\b|\bbugs?\b|roach\w*|mosquito\w*|wasps?|\bbees?\b|"
        r"\bmice\b|\brats?\b|photo|\bvideo\b|\bmovie\b|\bgame\b|\bshow\b|\btv\b|\bfilm\w*|"
        r"\bhoops\b|\bpool\b|basketball|\blol\b",
        trigger=r"gun|shot|shoot|pistol|rifle|firearm|knif|nife|knives|machete|weapon|stab|attack|assault|"
        r"assult|mugged|beat|jumped|punch|chok|strangl|threat|kill|hurt|help",
    ),
    # --- what a person sees, hears, smells and feels (third tuning set, #20) -------------------
    # Each rule pairs a danger sign with what makes it one now: a person's state, a quantity, a
    # room filling, a second sign. The model judges the rest; these are the floor's backstop.
    _rule(
        "other",
        "emergency",
        # medical: a person down and not answering, fainted, convulsing, a heart attack's signs,
        # too many pills, an allergic reaction closing the throat, a head injury and confusion
        rf"\b{_SOMEONE}{_gap(6)}(?:and\W+)?(?:(?:is|s|was|still)\W+)*(?:won{_A}t|wont|isn{_A}t|"
        rf"isnt|not|doesn{_A}t|doesnt|can{_A}t|cant)\W+(?:answer|respond|react|talk|speak|"
        rf"make\W+sense|making\W+sense|open\W+(?:his|her|their)\W+eyes)\w*\b",
        rf"\b{_SOMEONE}{_gap(3)}(?:just\W+)?(?:fainted|passed\W+out|blacked\W+out|keeled\W+over)\b",
        r"\b(?:clutching|grabbing|holding)\W+(?:his|her|their|my)\W+chest\b|"
        r"\b(?:left\W+)?arm\W+(?:is\W+|went\W+|s\W+|going\W+)?numb\b",
        r"\bfoam\w*\W+(?:at|from)\W+(?:the\W+)?mouth\b|\b(?:shaking|jerking|twitching|convulsing)"
        r"\W+(?:\w+\W+)?on\W+the\W+(?:floor|ground|bed)\b",
        r"\b(?:took|swallowed|ate|taken)\W+(?:a\W+(?:bunch|lot|handful|ton|whole\W+bottle)\W+of|"
        r"too\W+many|all\W+(?:of\W+)?(?:his|her|my|their|the))\W+(?:\w+\W+)?(?:pills|meds|"
        r"medicine|medication|tablets)\b",
        r"\bal+erg\w*\W+(?:reaction|attack)\b|\banaphyla\w*|\bthroat\W+(?:is\W+)?(?:\w+\W+)?"
        r"(?:closing|swelling|swollen)\b",
        r"\b(?:hit|banged|smacked|cracked)\W+(?:his|her|their|my)\W+head\b",
        veto=r"\blol\b|\blast\W+(?:week|month|year|night)|(?:days?|weeks?|months?|years?)\W+ago|"
        r"yesterday|\bokay\W+now\b|\bfine\W+now\b|\bbetter\W+now\b|recover\w*|\bgame\b|"
        r"\bmovie\b|\bshow\b|\bbook\b|phone|\bapp\b|\bemails?\b|\btexts?\b|\bcalls?\b|"
        r"voicemail|door\W*bell|knock\w*|\bletters?\b|\bnotes?\b|\bemployees?\b|\bstaff\b|"
        r"landlord|manager|\boffice\b|\bcompany\b|plumber|contractor|vendor|technician",
        stems=(
            "answer respond react talk speak make making open faint passed blacked keeled chest "
            "numb foam shaking jerking twitching convuls pills meds medic tablets erg anaphyla "
            "throat head"
        ),
        trigger=rf"(?:won{_A}t|wont|isn{_A}t|isnt|not|doesn{_A}t|doesnt|can{_A}t|cant)\W+(?:answer|"
        r"respond|react|talk|speak|make|making|open)|faint|passed\W+out|blacked|keeled|chest|"
        r"numb|foam|shaking|jerking|twitching|convuls|pills|meds|medic|tablets|erg|anaphyla|"
        r"throat|head",
    ),
    _rule(
        "other",
        "emergency",
        # stings or bees where someone is allergic
        r"\b(?:stung|stings?|bees?|wasps?|hornets?|yellow\W?jackets?)\b",
        requires=r"\b(?<!not )(?<!isn't )(?<!isnt )allerg\w*",
        stems="stung sting bee wasp hornet jacket",
        trigger=r"stung|sting|\bbees?\b|wasp|hornet|yellow\W?jacket",
    ),
    _rule(
        "other",
        "emergency",
        # violence: a threat reported as said, a gun heard, someone hurt by a person now
        rf"\b(?:says?|said|saying|yell\w*|scream\w*|shout\w*|threaten\w*|told\W+(?:me|us)|"
        rf"texted|keeps\W+saying)\W+(?:that\W+)?(?:he|she|they)(?:{_A}?ll|\W+will|{_A}?s\W+"
        rf"(?:going\W+to|gonna)|\W+(?:is|are|was|were)\W+(?:going\W+to|gonna))\W+(?:\w+\W+)?"
        rf"(?:kill|hurt|shoot|stab|beat|burn|torch)\W+(?:me|us|her|him|them|my|you|"
        rf"some\W?(?:body|one)|every\W?(?:body|one)|people|the\W+"
        rf"(?:building|place|house|apartment))\b",
        r"\bgun\w*\W+(?:go|goes|going|went)\W+off\b|\bheard\W+(?:a\W+|some\W+|like\W+|"
        r"what\W+sounded\W+like\W+|\d+\W+|two\W+|three\W+|a\W+few\W+|several\W+)*(?:gun\W?)?"
        r"shots?\b(?!\W+(?:at\W+the\W+)?(?:clinic|pharmacy|doctor))",
        r"\b(?:punched|kicked|choked|strangled|slapped|beat|attacked|stabbed|hit)\W+me\W+"
        r"(?:and|in\W+the|so|until|again|hard)\b",
        veto=_NOT_A_WEAPON + r"|\bmovie\b|\bgame\b|\bshow\b|\btv\b|\bvideo\b|\blol\b|\bjk\b|"
        r"\bjoking\b|\bkidding\b|\bif\W+(?:the|you|my|this|it)\b|(?:days?|weeks?|months?|years?)"
        r"\W+ago|last\W+(?:week|month|year)",
        stems=(
            "kill hurt shoot stab beat burn torch gun shot punch kick chok strangl slap attack hit"
        ),
        trigger=r"kill|hurt|shoot|stab|beat|burn|torch|gun|shot|punch|kick|chok|strangl|slap|"
        r"attack|hit\W+me",
    ),
    _rule(
        "other",
        "emergency",
        # someone stuck somewhere they cannot leave, or pinned under something
        rf"\b(?:can{_A}t|cant|cannot|unable\W+to)\W+get\W+(?:\w+\W+)?out\b",
        rf"\b(?:elevator|elavator|elevater|lift){_gap(3)}(?:dropped|fell|stopped|jammed|stuck|"
        rf"(?:doors?\W+)?(?:won{_A}t|wont|will\W+not)\W+open)\b",
        r"\b(?:stuck|trapped|stranded)\W+(?:up\W+)?on\W+(?:the\W+|a\W+)?(?:roof|ledge|balcony|"
        r"fire\W*escape|scaffold\w*)\b",
        r"\b(?:locked|shut)\W+(?:behind|in\W+with)\W+(?:him|her|them|me|us)\b",
        r"\b(?:pinned|crushed|trapped|stuck)\W+(?:\w+\W+)?(?:under|beneath|between)\b",
        requires=r"\b(?:locked|stuck|trapped|jammed|shut|elevator|elavator|elevater|lift|"
        r"inside|in\W+here|with\W+me|people|someone|somebody|kids?|son|daughter|baby|him|her|"
        r"freezing|cold|roof|ledge)\b",
        veto=r"\blease\b|contract|\bbed\b|\bdebt\b|traffic|\brut\b|habit|parking|driveway|"
        r"\bspot\b|\bdeal\b|\bplans?\b|\bclass\b|\bshift\b|meeting|\bmud\b|\bsnow\b|"
        r"\bcar\b(?!\W+with)|\bstain\b|yesterday|\bearlier\b|\bago\b|\blast\W+(?:night|week)|"
        r"working\W+now|\bfixed\b|\bworks\W+now\b|\bjar\b|\blid\b|splinter|\bcouch\b|\bsofa\b|"
        r"\bstuck\W+(?:under|between)\W+(?:the\W+)?(?:couch|sofa|fridge|stove|bed|cushions?|door)",
        stems=(
            "get elevator elavator elevater lift stuck trapped stranded locked shut pinned crushed"
        ),
        trigger=rf"(?:can{_A}t|cant|cannot|unable\W+to)\W+get|elevator|elavator|elevater|lift|"
        r"stuck|trapped|stranded|locked|shut|pinned|crushed",
    ),
    _rule(
        "other",
        "emergency",
        # something heavy came down on a person
        rf"\b(?:fell|came\W+down|collapsed|landed|crashed|closed|slammed)\W+(?:right\W+)?on\W+"
        rf"(?:top\W+of\W+)?{_SOMEBODY_NAMED}\b",
        veto=r"\blol\b|birthday|anniversary|\bday\b|\bnight\b|\bweek\w*|holiday|\bwatch\b|"
        r"\bshift\b|asleep|\bfine\b|\bokay\b",
        stems="fell came collapsed landed crashed closed slammed",
        trigger=r"(?:fell|came\W+down|collapsed|landed|crashed|closed|slammed)\W+(?:right\W+)?on\b",
    ),
    _rule(
        "carbon_monoxide",
        "emergency",
        # exhaust or fumes indoors while someone feels it
        rf"\b{_SMELL}{_gap(3)}(?:exhaust|fumes|car\W+fumes|a\W+(?:car|garage))\b",
        r"\bexhaust\W+(?:fumes\W+)?(?:coming|pouring|getting|leaking|smell)\w*",
        requires=_BODY_SYMPTOM + r"|\b(?:sleepy|wobbly|lethargic)\b",
        veto=r"\bpaint\w*|varnish|\bglue\b|bleach|cleaner|nail\W+polish|marker|cook\w*|fan\b",
        stems="exhaust fume sme stink reek odo whiff stench stank",
        trigger=r"exhaust|fume|sme+l|stink|reek|odo|whiff|stench|stank",
    ),
    _rule(
        "gas",
        "emergency",
        # a burner or knob left on without a flame
        rf"\b(?:burners?|knobs?|stove|oven|range|cooktop|gas){_gap(3)}(?:left\W+on|on\W+for|"
        rf"was\W+on|been\W+on|turned\W+on)\b",
        requires=r"\b(?:no|without|not)\W+(?:a\W+|any\W+)?(?:flame|fire|lit)\b|\bunlit\b|"
        r"\bwasn['’]?t\W+lit\b|\bnever\W+(?:lit|caught)\b",
        stems="left for was been turned",
        trigger=r"left\W+on|on\W+for|was\W+on|been\W+on|turned\W+on",
    ),
    _rule(
        "smoke_fire",
        "emergency",
        # a thing blackened and still smoking; paint bubbling on a hot wall is a fire behind it
        r"\b(?:black|blackened|charred|scorched|burnt|burned|melted)\W+(?:and\W+)?(?:(?:is|s|"
        r"still|now)\W+)*smok(?:ing|in)\b",
        rf"\b(?:cabinets?|cupboards?|counters?|couch|sofa|mattress|curtains?|carpet|rug|trash|"
        rf"garbage|bin|can|closet|ceiling|floor|outside|roof|porch|deck){_gap(3)}"
        rf"(?:(?:is|s|are|still|started|starting)\W+)+smok(?:ing|in)\b",
        veto=_SMOKE_VETO + r"|\bribs\b|brisket|\bmeat\b|\bsmoker\b|\bbbq\b|grill",
        trigger=r"smok",
    ),
    _rule(
        "smoke_fire",
        "emergency",
        rf"\b(?:paint|wallpaper|plaster|drywall){_gap(2)}(?:bubbl\w*|blister\w*|peeling|"
        rf"melting|scorch\w*|brown\w*)\b",
        requires=rf"\b(?:walls?|ceiling|paint)\b{_gap(4)}(?:hot|warm|burning|smoking)\b|"
        rf"\b(?:hot|warm)\W+(?:to\W+the\W+touch|wall)\b|burn(?:ing|t)\W+smell|smell\w*\W+"
        rf"(?:like\W+)?(?:burn|smoke)",
        veto=r"shower|steam|bath|moisture|humid|damp|\bwet\b|\bleak\w*|\bsun\b|summer|heat\W+wave|"
        r"radiator|heater",
        stems="paint wallpaper plaster drywall",
        trigger=r"paint|wallpaper|plaster|drywall",
    ),
    _rule(
        "electrical",
        "urgent",
        # a live or hanging wire; a smell at the panel, an outlet or a switch
        rf"\b(?:wires?|wiring|cables?){_gap(3)}(?:hanging|dangling|sticking\W+out|exposed|"
        rf"(?:is|are|s|re)\W+(?:still\W+)?live)\b",
        rf"\b(?:they|it)(?:{_A}?re|{_A}?s|\W+are|\W+is)\W+(?:still\W+)?live\b",
        rf"\b{_ELEC_STRONG}\b{_gap(3)}{_SMELL}",
        rf"\b{_SMELL}{_gap(3)}(?:from|at|near|by|behind|around)\W+(?:the\W+|my\W+)?"
        rf"(?:\w+\W+)?{_ELEC_STRONG}\b",
        requires=r"\b(?:wires?|wiring|cables?|outlets?|plugs?|sockets?|panel|breakers?|switch\w*|"
        r"fuse\w*)\b",
        veto=r"\bpaint\w*|\bnew\b|cleaner|perfume|air\W+freshener|plug\W*in|wax|"
        r"\bcable\W+(?:tv|box|bill|company)|internet|\bfine\b|\bgood\b|\bnice\b",
        stems="wir cable live sme stink reek odo whiff fume stench stank",
        trigger=r"wir|cable|(?:re|s|are|is|still)\W+live\b|sme+l|stink|reek|odo|whiff|fume|stench|"
        r"stank",
    ),
    _rule(
        "flooding",
        "emergency",
        # water up to something, floating things, water that cannot be shut off
        rf"\bwater{_gap(2)}(?:is\W+|s\W+)?(?:up\W+to|over|above|past|reaching|at)\W+(?:the\W+|my\W+|"
        rf"our\W+)?(?:\w+\W+)?(?:outlets?|ankles?|knees?|shins?|waist|bottom\W+step|steps?|"
        rf"baseboards?|doorway|door|bed|couch|mattress)\b",
        # things afloat indoors, whatever they are (a floating shelf or floor is furniture)
        r"\b(?:is|are|s|re|were|started|all|just|now)\W+(?:floating|float\w*\W+(?:around|away))\b"
        r"(?!\W+(?:shel\w*|floors?|vanit\w*|desks?|islands?|docks?|ideas?))",
        rf"\b(?:can{_A}t|cant|cannot|couldn{_A}t|unable\W+to|won{_A}t|wont)\W+(?:get\W+)?"
        rf"(?:(?:it|the\W+water|the\W+valve)\W+)?(?:to\W+)?(?:shut|turn|stop)\W+(?:\w+\W+)?off\b",
        r"\b(?:keeps?|kept)\W+(?:coming|pouring|rushing|seeping|getting)\W+in\W+(?:under|through|"
        r"thru|from)\b",
        # still rising, spraying everywhere, blasting out, a shut-off valve that won't turn
        rf"\b(?:it{_A}s|its|it\W+is|it\W+keeps|still|keeps)\W+(?:still\W+)?(?:rising|getting\W+"
        rf"(?:deeper|higher))\b",
        r"\b(?:spray|gush|spew|pour|blast|shoot)\w*\W+(?:water\W+)?(?:out\W+)?(?:everywhere|"
        r"all\W+over)\b|\b(?:blasting|gushing|spewing)\W+(?:out\W+)?water\b",
        rf"\bvalve{_gap(2)}(?:won{_A}t|wont|doesn{_A}t|doesnt|isn{_A}t|isnt|can{_A}t|cant|will\W+not)"
        rf"\W+(?:turn|budge|move|close|work)\b",
        requires=r"\bwater\b|\bfloat\w*|\bleak\w*|\bpipes?\b|\bvalve\b|\bspray\w*|\bpour\w*|"
        r"\bgush\w*|\brain\w*|\bflood\w*|\bwet\b|\bsoak\w*|\bsquish\w*",
        veto=r"\bwater\W+(?:bill|bottles?|jug|cooler|filter)|\bpool\b|\bbeach\b|\blake\b|"
        r"\bboat\b|\bfaucet\b(?!\W+(?:broke|came|snapped|popped))|\balarm\b|\blights?\b|"
        r"\bslow\b|\bclog\w*",
        stems="water float off keep kept ris deeper higher spray gush spew pour blast shoot valve",
        trigger=r"water|float|(?:shut|turn|stop)\W+(?:\w+\W+)?off\b|(?:keeps?|kept)\W+(?:coming|"
        r"pouring|rushing|seeping|getting)\W+in\b|rising|deeper|higher|spray|gush|spew|pour|blast|"
        r"shoot|valve",
    ),
    _rule(
        "sewage",
        "urgent",
        # another unit's waste coming up in one's own fixtures; a clean-out or septic overflowing
        rf"\bflush\w*{_gap(3)}(?:comes?|coming|came|bubbles?|bubbling|backs?|backing|pours?)\W+"
        rf"(?:back\W+)?(?:up\W+)?(?:in|into|through|thru|out\W+of)\W+(?:my|the|our)\W+(?:\w+\W+)?"
        rf"(?:tub|bathtub|shower|sinks?|drains?|toilets?)\b",
        r"\b(?:clean\W?outs?|septic(?:\W+tank)?|manholes?|sewer\W+(?:caps?|lines?|drains?))\W+"
        r"(?:\w+\W+){0,4}?(?:overflow\w*|backing|backed|bubbl\w*|spill\w*|gushing|erupt\w*)\b",
        veto=r"\bbills?\b|\bcharges?\b|\bfees?\b|\bpump(?:ed|ing)\W+(?:next|this|last)|"
        r"inspection",
        stems="flush clean septic manhole sewer",
        trigger=r"flush|clean\W?out|septic|manhole|sewer",
    ),
    _rule(
        "no_heat_freezing",
        "urgent",
        # the cold felt inside: water freezing indoors, coats in bed, a low reading in here
        r"\b(?:water|bowl|toilet|glass|dishes)\W+(?:\w+\W+){0,4}?(?:froze|frozen|freezing\W+over"
        r"|(?:is|are|s)\W+ice)\b",
        r"\b(?:sleep\w*|wearing|in)\W+(?:our|my|their)\W+(?:winter\W+)?(?:coats|jackets|parkas|"
        r"hats\W+and\W+gloves)\W+(?:\w+\W+){0,2}?(?:inside|indoors|in\W+(?:here|bed|the))\b",
        r"\b(?:ice|frost)\W+on\W+the\W+inside\b",
        r"\b(?:toilet|bowl|tub|sink)\W+(?:(?:water|bowl)\W+)?(?:has|had|got)\W+(?:a\W+)?"
        r"(?:layer\W+of\W+|some\W+|thin\W+)*ice\b",
        rf"\bpipes?{_gap(2)}(?:might|could|will|may|gonna|gunna|going\W+to|about\W+to)\W+"
        rf"(?:\w+\W+)?freeze\b",
        requires=r"\b(?:cold|freez\w*|heat\w*|furnace|boiler|radiators?|heater|froze|frozen|"
        r"shiver\w*|breath|ice|frost)\b",
        veto=r"fridge|freezer|refrigerator|ice\W*(?:maker|box|cubes?|tray)|\bminutes?\b|"
        r"\bmins\b|\bpeople\b|\byears?\b|percent|%|dollars|\bpool\b|\bbill\b|\bac\b|\ba/c\b|"
        r"air\W+condition\w*|too\W+(?:hot|warm)",
        stems="froze freez ice coats jackets parkas hats frost",
        trigger=r"froze|frozen|freezing|\bice\b|coats|jackets|parkas|hats|freeze|frost",
    ),
    _rule(
        "no_heat_freezing",
        "urgent",
        # a reading of the cold indoors: "it's 45 in here", "48 degrees in my apartment"
        r"(?<![\d.])(?:[2-4]\d|5[0-2])\W*(?:°|degrees?|deg\b)?\W*(?:f\W+)?(?:in\W+here|inside|"
        r"indoors|in\W+(?:the|my|our)\W+(?:apartment|apt|unit|house|place|bedroom|room|nursery|"
        r"kitchen|living\W+room|kids\W+room|baby\W?s\W+room))\b",
        veto=r"fridge|freezer|refrigerator|\bminutes?\b|\bmins\b|\bpeople\b|\bguests?\b|"
        r"\bkids\b|\byears?\b|percent|%|dollars|\$|\bbucks\b|\bpool\b|\bbill\b|\bboxes\b|"
        r"\bitems\b|\bpackages?\b|\bcalls?\b|\bpounds?\b|\blbs\b|\bfeet\b|\bft\b|\binch\w*|"
        r"outside\W+(?:is|it)|\bsummer\b",
        stems="2 3 4 5",
        trigger=r"[2-5]\d",
    ),
    _rule(
        "structural",
        "emergency",
        # a crack that just opened; a step that gave out; a tree on the house
        rf"\bcracks?{_gap(3)}(?:opened|opening|appeared|showed\W+up|formed|split|spread\w*)\b",
        rf"\b(?:steps?|stairs?|treads?|boards?|floor|deck|porch|landing|railing|fire\W*escape)"
        rf"{_gap(3)}(?:gave|gives|giving)\W+(?:out|way)\b",
        r"\b(?:floors?|building|house|walls?)\W+(?:(?:is|are|s|now|started|starting)\W+)*"
        r"(?:slant\w*|slop(?:ing|es)|tilting|leaning|shifting|sinking)\b",
        rf"\btree{_gap(2)}(?:fell|came\W+down|crashed|landed|falling|coming\W+down)\W+(?:\w+\W+)?"
        rf"(?:on|onto|into|through|thru)\W+(?:the\W+|my\W+|our\W+)?(?:roof|house|building|"
        rf"apartment|bedroom|window|wall|porch|deck|balcony)\b",
        rf"\bfire\W*escape{_gap(3)}(?:and\W+(?:it{_A}s|its|it\W+is)\W+)?(?:coming\W+apart|falling\W+apart|pulling\W+away|loose|"
        rf"collaps\w*|rusted\W+through|broken)\b",
        veto=r"\bold\b|years?\W+ago|months?\W+ago|hairline|\bpaint\b|caulk|grout|\bscreen\b|"
        r"\bphone\b|windshield|\bmirror\b|\btile\b|sidewalk|driveway|\bmug\b|\bplate\b",
        stems="crack gave give slant slop tilt lean shift sink tree escape",
        trigger=r"crack|gave|gives|giving|slant|slop|tilting|leaning|shifting|sinking|tree|escape",
    ),
    _rule(
        "break_in",
        "emergency",
        # forced entry by its marks: a lock drilled or cut, a window smashed with things taken
        rf"\b(?:locks?|deadbolt|chain|latch|door\W*frame|frame|windows?|doors?|glass){_gap(3)}"
        rf"(?:(?:was|is|has|have|been|got|s)\W+)*(?:drilled|cut|pried|jimmied|smashed|shattered|"
        rf"busted|kicked\W+in|forced|splintered|snapped)\b",
        r"\b(?:trying|tried|tryna)\W+to\W+(?:force|pry|kick|bust|jimmy|pick)\W+(?:it|the|my|our)",
        rf"\b{_PERSON}{_gap(4)}(?:trying|tried|tryna)\W+to\W+(?:get|come|climb)\W+in\b{_NOT_IN_HALF}",
        r"\b(?:bang|pound|slam|kick|ramm)\w*\W+(?:(?:on|into|at|in)\W+)?(?:my|our|the)\W+(?:front\W+|"
        r"back\W+)?(?:door|window)\w*\b",
        requires=r"\b(?:stuff|things|belongings|missing|stolen|gone|taken|all\W+over|someone|"
        r"somebody|some1|scared|afraid|won['’]?t\W+leave|wont\W+leave|trying\W+to\W+get\W+in|"
        r"open|ransack\w*|mess|laptop|tv|jewelry|someones)\b|\bbeen\W+in\b",
        veto=r"\bball\b|baseball|soccer|\bhail\b|\bstorm\b|\bwind\b|\bbird\b|\bkids?\W+(?:were|was)"
        r"\W+playing|landlord|maintenance|locksmith|\bmusic\b|\bparty\b",
        stems=(
            "drilled cut pried jimmied smashed shattered busted kicked forced splintered snapped "
            "try tried tryna bang pound slam kick ramm"
        ),
        trigger=r"drilled|cut|pried|jimmied|smashed|shattered|busted|kicked|forced|splintered|"
        r"snapped|(?:trying|tried|tryna)\W+to\W+(?:force|pry|kick|bust|jimmy|pick|get\W+in|"
        r"come\W+in|climb\W+in)|bang|pound|slam|kick|ramm",
    ),
    # --- what a person sees, continued (fourth tuning set, #20) --------------------------------
    _rule(
        "other",
        "emergency",
        # a child (or anyone) who swallowed or drank something that poisons or burns inside
        r"\b(?:swallow(?:ed|ing)?|drank|drink(?:ing)?|ate|eaten|eating|chew(?:ed|ing)|got\W+into)"
        r"\W+(?:[\w'’]+\W+){0,8}?(?:(?:button\W+)?batter(?:y|ies)|magnets?|bleach|detergent|"
        r"(?:laundry|tide|dishwasher)\W+pods?|poison|antifreeze|drain\W+cleaner|drano|lye|ammonia|"
        r"pesticide|lighter\W+fluid|gasoline|windshield\W+fluid)\b",
        veto=r"\bbatter(?:y|ies)\W+(?:is\W+|are\W+)?(?:dead|died|low|dying)|\bpoison\W+ivy|"
        r"\b(?:smells?|tastes?|tasted|tasting)\W+(?:\w+\W+)?(?:like|of)\W+bleach|"
        r"\bate\W+(?:up|through)\W+(?:the\W+)?batter|\bcharg\w*|\bphone\b|\blol\b|"
        r"\bfood\W+poison",
        stems="swallow drank drink ate eaten eating chew got",
        trigger=r"swallow|drank|drink|\bate\b|eaten|eating|chew|got\W+into",
    ),
    _rule(
        "other",
        "emergency",
        # a small child where a fall or drowning is one step away
        r"\b(?:climb\w*|standing|sitting|hanging|leaning)\W+(?:on\W+|over\W+|up\W+|out\W+(?:of\W+)?)?"
        r"(?:the\W+|a\W+)?(?:balcony\W+)?(?:railing|ledge|window\W*sill|window)\b",
        r"\b(?:by|near|at|in)\W+(?:the\W+)?(?:deep\W+end|pool|pond|lake)\W+(?:\w+\W+)?"
        r"(?:alone|by\W+(?:him|her)self|unattended|with\W+no\s*(?:one|body))\b",
        r"\b(?:locked|left|stuck|trapped)\W+in\W+(?:the|a|my|our|his|her)\W+(?:hot\W+)?car\b",
        requires=r"\b(?:toddler|baby|infant|little\W+one|kid|child|son|daughter|[1-9]\W*(?:yo|year\W*old)|"
        r"boy|girl)\b",
        veto=r"\bkeys?\b(?!.*\b(?:baby|toddler|infant)\b)|\bcar\W+seat|\bwindow\W+(?:seat|unit|ac)|"
        r"\blol\b|(?:days?|weeks?|months?|years?)\W+ago|yesterday|\blast\W+(?:week|month|night)",
        stems=(
            "climb standing sitting hanging leaning deep pool pond lake locked left stuck trapped"
        ),
        trigger=r"climb|standing|sitting|hanging|leaning|deep|pool|pond|lake|locked|left|stuck|"
        r"trapped",
    ),
    _rule(
        "other",
        "emergency",
        # someone inside a place no one should be stuck in; an elevator door open on its shaft
        rf"\b{_SOMEONE}\W+(?:is\W+|s\W+|got\W+|was\W+|are\W+)?(?:stuck|trapped|wedged)\W+"
        rf"(?:inside\W+|in\W+)(?:the\W+|a\W+)?(?:\w+\W+)?(?:chute|shaft|pipe|vent|duct|well|pit|dryer|"
        rf"washer|fridge|freezer|cooler|crawl\W*space|trunk|dumpster|drain|manhole)\b",
        r"\bno\W+(?:floor|car|elevator)\W+(?:\w+\W+){0,3}?(?:just\W+)?(?:the\W+|an?\W+)?"
        r"(?:open\W+|empty\W+)?shaft\b|\b(?:open|empty)\W+(?:elevator\W+)?shaft\b|"
        r"\bfell\W+(?:down\W+|into\W+)?(?:the\W+|a\W+|an\W+)?(?:open\W+)?(?:elevator\W+)?"
        r"(?:shaft|manhole)\b",
        veto=r"\blol\b|yesterday|(?:days?|weeks?|months?|years?)\W+ago|\bphone\b|\bkeys?\b|"
        r"\bring\b|\bball\b|\btoy\W+(?:is|was)\W+stuck",
        stems="stuck trapped wedged shaft manhole",
        trigger=r"stuck|trapped|wedged|shaft|manhole",
    ),
    _rule(
        "break_in",
        "urgent",
        # someone else's footprints inside with things gone
        r"\b(?:foot\W?prints?|boot\W?prints?|shoe\W?prints?|muddy\W+(?:prints|tracks))\W+(?:\w+\W+)?"
        r"(?:in|inside|all\W+over|through|on)\W+(?:my|our|the)\W+(?:\w+\W+)?(?:apartment|apt|unit|"
        r"house|place|bedroom|room|kitchen|floor|carpet)\b",
        requires=r"\b(?:missing|stolen|gone|taken|empty|emptied|not\W+mine|nobody|no\W?one)\b",
        veto=r"\bmaintenance\b|\bplumber|\bcontractor|\bworkers?\b|\bmovers?\b|\bdog\b|\bpaw",
        stems="print track",
        trigger=r"print|track",
    ),
    _rule(
        "carbon_monoxide",
        "emergency",
        # a flue pulled off the appliance that burns fuel: its exhaust stays indoors
        r"\b(?:vent|flue|exhaust)\W+(?:pipe\W+)?(?:\w+\W+){0,2}?(?:came|fell|pulled|popped|blew)\W+"
        r"(?:off|apart|loose|out|down)\b|\b(?:vent|flue|exhaust)\W+(?:pipe\W+)?(?:is\W+|got\W+)?"
        r"(?:disconnected|detached|off\W+the\W+(?:pipe|heater|furnace|boiler))\b",
        requires=r"\bwater\W+heater|\bfurnace\b|\bboiler\b|\bgas\W+(?:heater|dryer)|\bheater\b",
        veto=r"\bdryer\W+vent|\bbathroom\W+(?:vent|fan)|\bhood\b|\bcover\b|\bgrill\w*|\blouver",
        stems="vent flue exhaust",
        trigger=r"vent|flue|exhaust",
    ),
)

# A negator governing the hit: "no smoke", "don't smell gas", "never any sign of smoke".
_NEG_BEFORE = (
    rf"\b(?:{_NEG}|no\W+longer|do\W+not|does\W+not|did\W+not|is\W+not|was\W+not|are\W+not)"
    r"(?:\W+(?:any|more|longer|sign|signs|of|smell|smells|smelling|smelled|see|seeing|saw|"
    r"detect|notice|noticed|really|even|a|the|real|actual|strong|hear|hearing|further|visible|"
    r"i|we|think|is|there|s|it))*\W*$"
)
# The end of the clause that holds the hit: only a negator in the same clause counts.
_CLAUSE_BREAK = r"[.!?;,\n]|\b(?:but|and|so|because|though)\b"
# A resolution right after the hit: "the gas smell is gone now", "smoke has cleared".
_RESOLVED_AFTER = (
    r"^\W*(?:(?:smell|odou?r|stench|stink|leak|backup|problem|issue)s?\W+)?"
    r"(?:(?:is|s|has|have|was|it|its|all|now|already|finally|totally|completely|went)\W+){0,3}"
    r"(?:gone|cleared|went\W+away|anymore|any\W+more|dissipated|resolved|fixed|aired\W+out|"
    r"under\W+control)\b"
)
_SEVERITY_RANK: dict[Severity, int] = {"emergency": 0, "urgent": 1}


def _negated(text: str, start: int, end: int) -> bool:
    """Whether the hit at ``text[start:end]`` is denied ("no smoke"), cleared right after it
    ("the smell is gone"), or framed as not happening now (``safety_framing``: past, fixed,
    hypothetical, a detector's upkeep, a figure of speech), unless the text says it is live."""
    before = text[max(0, start - 60) : start]
    breaks = list(_compiled(_CLAUSE_BREAK).finditer(before))
    if breaks:
        before = before[breaks[-1].end() :]
    if _compiled(_NEG_BEFORE).search(before):
        return True
    if _compiled(_RESOLVED_AFTER).match(text[end : end + 40]) is not None:
        return True
    return safety_framing.frame(text, start, end) is not None


# ---------------------------------------------------------------------------------------------
# Typo correction. Before the rules run, a token one typo away from a hazard keyword ("smkoe",
# "furnance", "watter") is replaced by the keyword, unless it is an English word ("waiter",
# "sparkling"); see safety_lexicon. The rules then read the corrected text, and each hit is mapped
# back so that its span still indexes the message exactly as the tenant sent it.
# ---------------------------------------------------------------------------------------------


def _typo_preference(token: str, keyword: str) -> tuple[int, str]:
    # A dropped letter is the commonest typo ("brokn" is "broken" before "broke"), then a wrong
    # or swapped one, then an extra one; ties go to the alphabetically first keyword.
    return ({1: 0, 0: 1}.get(len(keyword) - len(token), 2), keyword)


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


_KEYWORD_SET = frozenset(KEYWORDS)
# Every keyword under itself and under each of its one-letter deletions: two words one typo apart
# always share such a key, so a token needs only its own few deletions looked up.
_DELETION_INDEX: dict[str, tuple[str, ...]] = {}
for _keyword in KEYWORDS:
    for _key in {_keyword} | _deletions(_keyword):
        _DELETION_INDEX[_key] = (*_DELETION_INDEX.get(_key, ()), _keyword)


@cache
def _variants_of(keyword: str) -> frozenset[str]:
    return frozenset(typo_variants(keyword))


@lru_cache(maxsize=16384)
def _typo_fix(token: str) -> str | None:
    """The keyword that lower-case ``token`` is a typo of, or ``None``."""
    known = KNOWN_VARIANTS.get(token)
    if known is not None:
        return known
    if len(token) < 4 or token in _KEYWORD_SET or token in REAL_WORD_NEIGHBOURS:
        return None
    candidates = {
        keyword
        for key in {token} | _deletions(token)
        for keyword in _DELETION_INDEX.get(key, ())
        if token in _variants_of(keyword)
    }
    if not candidates:
        return None
    return min(candidates, key=lambda keyword: _typo_preference(token, keyword))


_TOKEN = re.compile(r"[^\W\d_]{3,}")


@dataclass(frozen=True, slots=True)
class _Corrected:
    """The corrected text, and for each of its characters the original span it came from."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]


def _correct_typos(text: str) -> _Corrected | None:
    """The text with its hazard-word typos corrected, or ``None`` when it has none."""
    fixes = [
        (match.start(), match.end(), fix)
        for match in _TOKEN.finditer(text)
        if (fix := _typo_fix(match.group().lower())) is not None
    ]
    if not fixes:
        return None
    pieces: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    position = 0
    for start, end, fix in fixes:
        pieces.append(text[position:start])
        starts.extend(range(position, start))
        ends.extend(range(position + 1, start + 1))
        pieces.append(fix)
        starts.extend([start] * len(fix))
        ends.extend([end] * len(fix))
        position = end
    pieces.append(text[position:])
    starts.extend(range(position, len(text)))
    ends.extend(range(position + 1, len(text) + 1))
    return _Corrected(text="".join(pieces), starts=tuple(starts), ends=tuple(ends))


# Kept per text: one message is read at the webhook, again by the package's pre-check (alone and
# joined), and by the escalation lane; 35 ms a 4,000-character text. Pure, so a kept hit is the
# hit; a frozen model, so no caller can change it.
@lru_cache(maxsize=128)
def safety_floor(text: str) -> SafetyHit | None:
    """Return the most severe, then earliest, emergency phrase in ``text``, or ``None``.

    The phrase rules first (:func:`rules_floor`); when none fires, the floor's learned half
    (``safety_model``): a linear model over n-grams, trained on the same development sets, that
    reads wordings no rule lists. Its hit names the category the model reads, spans the whole
    text, and says it is the model's (``source``, ``evidence``).

    Pure and deterministic: the same text always gives the same hit. ``None`` means only that
    neither found an emergency; the language model still judges the message.
    """
    hit = rules_floor(text)
    if hit is not None or not text or not text.strip():
        return hit
    # Imported here: a cold start pays for the model's module (and weights) on its first text.
    from maestro.domain import safety_model

    found = safety_model.model_hit(text)
    if found is None:
        return None
    return SafetyHit(
        category=found.category,
        severity="emergency",
        phrase=text[found.start : found.end],
        start=found.start,
        end=found.end,
        source="model",
        evidence=(
            f"safety model {found.score:.2f} ({found.category}): "
            + ", ".join(repr(word) for word in found.strongest)
        ),
    )


def rules_floor(text: str) -> SafetyHit | None:
    """The phrase rules alone: the most severe, then earliest, phrase they find, or ``None``.

    Hazard words with a typo are read as the word ("smkoe" as "smoke"); the hit's span still
    indexes ``text`` as sent.
    """
    if not text or not text.strip():
        return None
    corrected = _correct_typos(text)
    scanned = text if corrected is None else corrected.text
    best: SafetyHit | None = None
    for rule in _RULES:
        span = rule.first_span(scanned, _negated)
        if span is None:
            continue
        start, end = span
        if corrected is not None:
            start, end = corrected.starts[start], corrected.ends[end - 1]
        best = _better(_hit(rule, text, start, end, "en"), best)
    return _spanish(text, best)


def _spanish(text: str, best: SafetyHit | None) -> SafetyHit | None:
    """``best``, or a more severe or earlier hit of the Spanish rules (safety_spanish), which
    read the text's sound spelling and map each hit back to the text as sent."""
    spelled = safety_spanish.sound_spelling(text)
    for rule in safety_spanish.SPANISH_RULES:
        span = rule.first_span(spelled.text, safety_spanish.negated)
        if span is not None:
            start, end = spelled.span(*span)
            best = _better(_hit(rule, text, start, end, "es"), best)
    return best


def _hit(rule: Rule, text: str, start: int, end: int, language: Literal["en", "es"]) -> SafetyHit:
    return SafetyHit(
        category=rule.category,
        severity=rule.severity,
        phrase=text[start:end],
        start=start,
        end=end,
        language=language,
    )


def _better(hit: SafetyHit, best: SafetyHit | None) -> SafetyHit:
    """The more severe of two hits, then the earlier; ``best`` on a tie."""
    if best is None or (_SEVERITY_RANK[hit.severity], hit.start) < (
        _SEVERITY_RANK[best.severity],
        best.start,
    ):
        return hit
    return best


__all__ = ["CATEGORIES", "SafetyHit", "rules_floor", "safety_floor"]
