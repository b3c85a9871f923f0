"""How a text frames the hazard a phrase rule found: happening now, or not.

A tenant names a hazard for many reasons besides reporting one: it happened last winter and was
fixed, *if* it ever happens what should they do, the detector needs a battery, the inbox is on
fire. The phrase rules find the hazard's words; this module reads the frame around them, by
kind, not by word list of any one hazard:

* **past**: the hit's sentence places it weeks or more ago ("last winter", "back in march",
  "years ago", "over the holidays");
* **resolved**: after the hit the text says it was dealt with ("fixed", "all clear", "aired
  out", "no damage"), or a recent hit ("this morning", "yesterday") with a resolution anywhere;
* **hypothetical**: the hit sits inside a conditional ("if we ever smell gas", "in case of a
  fire", "what should we do when …") with no clause break between;
* **upkeep**: a detector or alarm the text is maintaining, not hearing (a chirp, a battery, end
  of life, a test button, remounting, who provides one);
* **steady**: the writer says it is not spreading or getting worse;
* **elsewhere**: after the hit, the writer places it somewhere else ("it was for the school
  across the street");
* **figure of speech**: "on fire" said of an inbox, a schedule, a team.

The cost stays asymmetric: a frame never quiets a text that also says the hazard is live
(:func:`live`): "now", "right now", "still leaking", "getting worse", a body symptom, a cry for
help. "yesterday the smell was faint but now it's strong" still raises. Pure and cheap: it runs
only on the few texts where a rule's phrase matched.
"""

from __future__ import annotations

import re
from typing import Literal

from maestro.domain.safety_rules import compiled

Frame = Literal[
    "past", "resolved", "hypothetical", "upkeep", "steady", "elsewhere", "figure_of_speech"
]

_A = "['’`]?"
_NEGATOR = (
    rf"(?:no|not|never|without|isn{_A}t|isnt|wasn{_A}t|aren{_A}t|don{_A}t|doesn{_A}t|didn{_A}t|"
    rf"hasn{_A}t|haven{_A}t|nothing|nobody|none)"
)


def _re(source: str) -> re.Pattern[str]:
    return compiled(source, re.IGNORECASE)


# --- live: the hazard is said to be happening now ---------------------------------------------

# "now" that is no all-clear: "fine now", "dry now", "now it's fine", "for now" are excluded.
_NOW = (
    r"(?<!for )(?<!by )(?<!until )(?<!till )(?<!up to )\bnow\b"
    r"(?!\W+(?:and\W+then|(?:it{_A}s\W+|its\W+|it\W+is\W+|all\W+|everything\W+(?:is\W+)?|is\W+)?"
    r"(?:fine|ok|okay|good|dry|gone|working|works|back\W+to\W+normal|clear|fixed|normal|safe|"
    r"over|done|quiet)\b))"
).replace("{_A}", _A)
_RESOLVED_NOW = (
    r"\b(?:fine|ok|okay|good|dry|gone|over|done|working|works|clear|fixed|safe|normal|quiet|"
    r"out|off|stopped|back|aired\W+out)\W+(?:\w+\W+)?now\b"
)
_LIVE = (
    r"\bright\W+now\b|\bjust\W+now\b|\bas\W+we\W+speak\b|\bat\W+the\W+moment\b|\bcurrently\b|"
    r"\btonight\b|\bthis\W+(?:minute|second)\b|\bin\W+progress\b|"
    # getting worse
    r"\b(?:getting|gets|got|growing|grows|even|keeps?\W+getting)\W+(?:\w+\W+)?(?:worse|"
    r"stronger|bigger|louder|deeper|higher|hotter|thicker|heavier)\b|\bworse\b|\bspreading\b|"
    r"\b(?:stronger|thicker|hotter|heavier|deeper)\b|"
    r"\brising\b|\bwon{_A}t\W+stop\b|\bwont\W+stop\b|\bcan{_A}t\W+(?:stop|turn\W+(?:it\W+)?off|"
    r"shut\W+(?:it\W+)?off|get\W+out)\b|"
    # still going
    r"\bstill\W+(?:\w+\W+)?(?:smell\w*|stink\w*|leak\w*|drip\w*|pour\w*|gush\w*|coming|going|"
    r"smok\w*|burn\w*|spark\w*|beep\w*|scream\w*|sound\w*|hiss\w*|flow\w*|running\W+(?:out|"
    r"over|down)|strong|bad|cold|freezing|stuck|trapped|inside|in\W+there|on\W+fire|hot|"
    r"warm|wet|no\W+heat|no\W+power|rising|spread\w*)\b|"
    # going on: a hazard's verb in -ing ("chunks are falling", "water pouring into the panel")
    r"\b(?:pouring|gushing|spraying|streaming|leaking|dripping|flooding|seeping|overflowing|"
    r"bubbling|falling|collapsing|crumbling|sagging|caving|burning|smoking|smouldering|"
    r"smoldering|sparking|arcing|hissing|filling\W+(?:up|with)|spreading)\b|"
    r"\b(?:wider|larger)\b|"
    # it happened again: "burst again", "flooded again"
    r"\b(?:burst|broke|blew|fell|caught|happened|flooded|sparked|leaked|overflowed|collapsed|"
    r"exploded|popped|cracked)\W+(?:\w+\W+)?again\b|"
    # back again: "it's back", "it's sparking again" (not "working again")
    r"\b(?:it{_A}s|its|it\W+is|smell\W+is|came|come|coming|has\W+come)\W+back\b|"
    r"\b(?!(?:work|runn|mov|function|start)ing\b)\w+ing\W+(?:\w+\W+)?again\b|"
    # just happened: "someone just kicked in my door" (not "just wanted to say")
    r"\bjust\W+(?!(?:wanted|wondered|checked|asked|needed|noticed|realized|remembered|moved|"
    r"finished|signed|paid|closing|letting)\b)(?:\w+ed|came|fell|broke|blew|went|caught|burst|"
    r"started|began|popped|hit)\b|"
    # the body
    r"\b(?:dizz\w*|light\W?headed|head\W?aches?|nause\w*|vomit\w*|throw(?:ing)?\W+up|"
    r"can{_A}t\W+breathe|cant\W+breathe|not\W+breathing|unconscious|bleeding|burned\W+(?:my|his|"
    r"her)|sleepy|drowsy|passed\W+out|fainted|pounding)\b|"
    # a cry for help
    r"\b(?:please\W+help|help\W*!|need\W+help|hurry|scared|terrified|panick\w*|asap|911)\b|"
    r"\bthis\W+is\W+(?:not|no)\W+(?:a\W+)?(?:drill|test|joke)\b|\bnot\W+a\W+drill\b"
).replace("{_A}", _A)


def _negated_before(text: str, start: int) -> bool:
    """Whether a negator governs the words at ``start`` ("isn't spreading", "nobody hurt")."""
    before = text[max(0, start - 24) : start]
    return _re(rf"\b{_NEGATOR}\W+(?:\w+\W+)?$").search(before) is not None


def live(text: str, hit: tuple[int, int] = (0, 0)) -> bool:
    """Whether ``text`` says the hazard is happening now (the frames then quiet nothing). The
    words of ``hit`` itself do not count: "last month's flooding" tells no flood now."""
    for match in _re(_LIVE).finditer(text):
        if match.start() < hit[1] and hit[0] < match.end():
            continue
        if not _negated_before(text, match.start()):
            return True
    for match in _re(_NOW).finditer(text):
        # "fine now", "dry now": an all-clear, not a report
        window = text[max(0, match.start() - 24) : match.end()]
        if not _re(_RESOLVED_NOW + r"$").search(window):
            return True
    return False


# --- the frames ------------------------------------------------------------------------------

_MONTH = (
    r"(?:january|february|march|april|may|june|july|august|september|october|november|"
    r"december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)"
)
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
# Weeks or more ago: the hit's sentence is a story.
_PAST_DISTANT = (
    r"\b(?:\d+|a|an|one|two|three|four|five|six|few|couple(?:\W+of)?|several|some|many)\W+"
    r"(?:\w+\W+)?(?:weeks?|months?|years?|winters?|summers?)\W+(?:ago|back)\b|"
    r"\byears?\W+ago\b|\b(?:weeks|months|years)\W+back\b|"
    r"\blast\W+(?:week|month|year|winter|summer|spring|fall|autumn|season|time|weekend|"
    rf"{_WEEKDAY}){_A}s?\b|"
    rf"\b(?:back\W+)?in\W+(?:the\W+)?(?:early\W+|late\W+)?(?:{_MONTH}|spring|summer|fall|autumn|"
    r"winter|(?:19|20)\d\d)\b|"
    r"\bover\W+the\W+(?:holidays|summer|winter|break)\b|"
    r"\bbefore\W+(?:we|i)\W+moved\b|\bin\W+(?:our|my)\W+(?:old|last|previous)\W+(?:place|"
    r"apartment|apt|unit|house|building)\b"
).replace("{_A}", _A)
# Hours or days ago: a story only when the text also says it was dealt with.
_PAST_RECENT = (
    rf"\byesterday\b|\blast\W+night\b|\bthis\W+(?:morning|afternoon)\b|\bearlier\b|"
    rf"\b(?:on\W+)?{_WEEKDAY}\b|\bthe\W+other\W+day\b|\bfor\W+(?:a|one|two|like|about|a\W+few)"
    rf"\W+(?:\w+\W+)?(?:minutes?|mins?|seconds?|hours?)\b"
)
_RESOLUTION = (
    r"\b(?:fixed|repaired|replaced|patched|sealed|resolved|taken\W+care\W+of|sorted(?:\W+out)?|"
    r"cleaned\W+up|aired\W+out|drained|dried\W+out|dry\W+now|relit|re-?lit|"
    r"all\W+(?:clear|good|fine|set|done)|no\W+damage|no\W+harm|"
    r"(?:nobody|no\W?one)\W+(?:got\W+|was\W+|is\W+)?(?:hurt|injured)|"
    r"(?:works|working|running|fine|ok|okay)\W+(?:fine|ok|okay|normally|since|again)|"
    r"(?:started|moving|running|working)\W+again|"
    r"(?:we{_A}re|we\W+are|everyone{_A}s|everyone\W+is)\W+(?:all\W+)?(?:fine|ok|okay|safe)|"
    r"stopped\W+on\W+its\W+own|opened\W+on\W+its\W+own|went\W+away|"
    r"threw\W+it\W+(?:out|away)|back\W+to\W+normal|false\W+alarm|"
    r"(?:it{_A}s|its|it\W+is|smell\W+is|smell{_A}s)\W+(?:all\W+|now\W+)?gone|"
    r"nothing{_A}s\W+wrong|nothing\W+(?:is\W+|was\W+)?wrong|"
    r"(?:said|says)\W+(?:it\W+was\W+|it{_A}s\W+|its\W+|everything\W+(?:was\W+|is\W+)?)?"
    r"(?:fine|safe|ok|okay|normal|all\W+clear)|"
    r"but\W+(?:it{_A}s\W+|its\W+|it\W+is\W+)?(?:ok|okay|fine)\b|"
    r"(?:it{_A}s|its|it\W+is|all\W+is|is)\W+(?:all\W+)?(?:fine|ok|okay)\W+now)\b"
).replace("{_A}", _A)
# A conditional or a question about the future, governing the words after it.
_HYPOTHETICAL = (
    r"\bif\b|\bin\W+case\b|\bin\W+the\W+event\b|\bwhat\W+happens\W+(?:if|when)\b|"
    r"\bwhenever\b|\bwhat\W+(?:do|should|would|can)\W+(?:i|we|you|people)\W+do\W+(?:if|when|in)\b|"
    r"\bhow\W+(?:do|would|should|can)\W+(?:i|we|you)\W+(?:know|tell)\b|"
    r"\bprevent\w*\b|\bavoid\w*\b|\bin\W+the\W+future\b"
)
# Between the marker and the hit: a break ends its reach.
_CLAUSE_BREAK = r"[,.!?;:\n]|\b(?:but|and\W+now|so\W+now|though|although|however)\b"
# A detector looked after, not heard: the hit names a device or the gas it watches for.
_DEVICE = (
    r"\b(?:alarms?|detectors?|detecter|monitors?|sensors?|carb[oa]n\W*m\w+|m[oa]n[oi]x\w*|"
    r"c\W?o)\b"
)
_UPKEEP = (
    r"\bchirp\w*|\bbatter(?:y|ies)\b|\bend\W+of\W+(?:its\W+)?life\b|\bexpir\w*|"
    r"\btest\W+button\b|\btest(?:ed|ing)\b|\binstall\w*|\bfitted\b|\bfitting\b|\bprovide\w*|"
    r"\bre-?mount\w*|\bfell\W+off\W+(?:the\W+)?(?:wall|ceiling)|\bladder\b|\bdo\W+we\W+have\b|"
    r"\bwhere\W+(?:is|are|do)\b|\bsupposed\W+to\b|\blease\b|\binsurance\b|\binspect\w*|"
    r"\b(?:reads|says|shows|showing|reading)\W+(?:0|zero|normal|nothing)\b"
)
# The writer says it is not getting worse ("isn't spreading", "the same for two days").
_STEADY = (
    rf"\b{_NEGATOR}\W+(?:\w+\W+)?(?:spreading|getting\W+worse|growing|getting\W+bigger)\b|"
    r"\bthe\W+same\W+for\b"
)
# The responders or the hazard belong to another place: "it was for the school across the
# street", "they're for the building next door".
_ELSEWHERE = (
    r"\b(?:it\W+was|it{_A}s|its|it\W+is|they\W+(?:were|are)|they{_A}re)\W+(?:just\W+|only\W+)?"
    r"(?:for|at|going\W+to)\W+(?:the\W+|a\W+)?(?:\w+\W+){0,2}?(?:across|next\W+door|down\W+the|"
    r"school|another|other|opposite)\b"
).replace("{_A}", _A)
# "on fire" said of something that cannot burn in that sense.
_FIGURE = (
    r"\b(?:inbox|e-?mails?|phone|schedule|calendar|team|sales|stocks?|market|chat|twitter|"
    r"timeline|feed|work|job|desk|brain|mouth|tongue|legs|muscles)\W+(?:\w+\W+)?(?:is|was|are|"
    r"were|s|been|has\W+been|have\W+been)\W+(?:\w+\W+)?on\W+fi+re\b"
)


def _sentence(text: str, start: int, end: int) -> str:
    """The sentence holding ``text[start:end]``."""
    left = max((m.end() for m in _re(r"[.!?;\n]+").finditer(text, 0, start)), default=0)
    right_match = _re(r"[.!?;\n]").search(text, end)
    right = right_match.start() if right_match else len(text)
    return text[left:right]


# Within a sentence, what the writer sets against what came before ("it was fixed last month,
# but now …"): a time said before it does not reach the hit after it.
_CONTRAST = r"\b(?:but|though|although|however|yet|whereas|except)\b|,\W*(?:and|then)\b|\bthen\b"


def _clause(text: str, start: int, end: int) -> str:
    """The part of the hit's sentence between the contrasts around it."""
    sentence_start = max((m.end() for m in _re(r"[.!?;\n]+").finditer(text, 0, start)), default=0)
    sentence = _sentence(text, start, end)
    hit_at = start - sentence_start
    left = max((m.end() for m in _re(_CONTRAST).finditer(sentence, 0, hit_at)), default=0)
    right_match = _re(_CONTRAST).search(sentence, hit_at + (end - start))
    right = right_match.start() if right_match else len(sentence)
    return sentence[left:right]


# A verb in -ing inside the condition tells what is going on ("what do i do if the alarm is
# going off"), not what might: no hypothetical then. Nouns that end so are not verbs.
_ONGOING = (
    r"\b(?!(?:during|morning|evening|ceiling|building|nothing|something|anything|everything|"
    r"heating|plumbing|parking|wiring|thing|things|spring|string|bring|ring|king|sibling|"
    r"railing|landing|siding|flooring|awning|lightning|ceilings|buildings|nursing|housing|"
    r"being|having)\b)[a-z]{2,}ing\b"
)


def _governed_by_condition(text: str, start: int, end: int) -> bool:
    """Whether a conditional marker precedes the hit in its clause, with no break between,
    and the condition does not tell something going on."""
    before = text[max(0, start - 80) : start]
    markers = list(_re(_HYPOTHETICAL).finditer(before))
    if not markers:
        return False
    governed = before[markers[-1].end() :]
    if _re(_CLAUSE_BREAK).search(governed) is not None:
        return False
    after = _re(_CLAUSE_BREAK).search(text, end)
    condition = governed + text[start : after.start() if after else len(text)]
    return _re(_ONGOING).search(condition) is None


def frame(text: str, start: int, end: int) -> Frame | None:
    """The frame that says the hazard found at ``text[start:end]`` is not happening now, or
    ``None`` (it may be). Never a frame when the text also says the hazard is live."""
    if live(text, (start, end)):
        return None
    clause = _clause(text, start, end)
    if _re(_PAST_DISTANT).search(clause):
        return "past"
    if _re(_RESOLUTION).search(text, end) or (
        _re(_PAST_RECENT).search(clause) and _re(_RESOLUTION).search(text)
    ):
        return "resolved"
    if _governed_by_condition(text, start, end):
        return "hypothetical"
    if _re(_DEVICE).search(_sentence(text, start, end)) and _re(_UPKEEP).search(text):
        return "upkeep"
    if _re(_STEADY).search(text):
        return "steady"
    if _re(_ELSEWHERE).search(text, end):
        return "elsewhere"
    if _re(_FIGURE).search(text, max(0, start - 40), end):
        return "figure_of_speech"
    return None


def text_frames(text: str) -> tuple[str, ...]:
    """The kinds of frame the text holds anywhere, and whether it says a hazard is live: the
    learned half's whole-text features (``safety_model``), which weigh them as it learns."""
    kinds = [
        ("live", live(text)),
        ("past", _re(_PAST_DISTANT).search(text) is not None),
        ("recent", _re(_PAST_RECENT).search(text) is not None),
        ("resolved", _re(_RESOLUTION).search(text) is not None),
        ("hypothetical", _re(_HYPOTHETICAL).search(text) is not None),
        ("upkeep", _re(_UPKEEP).search(text) is not None),
        ("steady", _re(_STEADY).search(text) is not None),
    ]
    return tuple(kind for kind, present in kinds if present)


__all__ = ["Frame", "frame", "live", "text_frames"]
