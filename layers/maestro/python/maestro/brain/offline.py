"""The offline brain: deterministic rules standing in for the model when there is no API key.

It is named as such in every output (``model="offline-brain"``, every ``why`` starts with
"offline brain"), so nobody mistakes its answers for a model's. The rules are simple and honest,
first match wins, in this order: 1, 7, 2, 3, 5, 6; for a vendor, 9 after 1; for a tenant, 9
after 7; for a PM, 1 then 8. (Rule 4, answers to an
open question, is not the brain's: the pipeline's resolve step matches them against the stored
candidates first.)

1. a safety-floor hit in the package → escalate;
7. a command: "cancel the kitchen one" / "cancel WO-204" / "cancel both" → manage_existing
   cancel with the matched open work orders (all of them for "all", "both", "everything");
   "reschedule … to friday" → reschedule with the sender's words; "what do I have open" →
   list. Several named at once ("the fridge and the fan ones") or "all but the lock" → those.
   A cancel that fits several equally ("two of them", "both" of three) → clarify naming them,
   carrying the command so the answer runs it on what it picks. It runs before 2 and 3:
   "… to friday" is no availability;
2. an answer to an open availability question ("2 onward", "tomorrow morning") → schedule_visit
   on that context; a digit inside such an answer is never a rating (I7);
3. a rating ("5 stars", "4/5", a bare "5") while a rating request is open → record_rating; a
   bare digit with both questions open is ambiguous → clarify naming both. Only a tenant or a
   PM rates, in every rule: a vendor's "4/5 tomorrow" is availability, never a rating;
5. words that clearly name exactly one open work order (its id, its thing, or naming no thing
   a plain word of its line, "the plumber"; see "which work order the words name" below) →
   relay_to_open_wo on it (a mere question about it: the assistant, targeted at it); several
   named, or a problem that only hints at some (a shared room, a shared kind of symptom) →
   clarify naming them (I3, I4: never the most recent, never a guess); a problem naming a thing
   of its own and hinting at none → create_wo;
6. nothing matched → continue_with_assistant.
8. a PM's command, about the open work orders of the properties they manage (their contexts):
   a note ("note WO-204: vendor has the key", "add a note to 204 - key under mat") →
   relay_to_open_wo, which keeps a PM's note on the record only; a cancel or reschedule →
   manage_existing, held until YES; where a named one stands ("whats up with wo 204", "WO-204?")
   → continue_with_assistant targeted at it (the lane answers from the store); what is open
   ("any open jobs?", "open") → manage_existing list. An id a PM names that is not one of their
   open work orders (the lease step gives them every one they name that they manage) is
   refused in words, naming it; an answer to a visit question or a rating is read as rules 2
   and 3; words about exactly one of their open work orders are a note on it; anything else
   gets what a PM can text. A PM opens no work order: a tenant does.

9. completion from the field (docs/completion.md): a vendor's "it's done" in the words vendors
   use (``maestro.domain.completion``; "done for today" is none) → manage_existing complete on
   their one job in hand, or the ones named (by id or their words), else with none named, so
   the lane asks which and keeps the report for the answer; the tenant's answer about a job
   reported finished: a plain yes → complete, something still wrong → relay_to_open_wo (the
   lane reopens it to the vendor). A PM's "close WO-204" / "mark 204 done" is rule 8's, held
   until YES like a cancel.

Several intents in one package: the text is cut into clauses (new messages, sentence stops,
commas, "and", "also"), and a clause that describes a problem on its own, naming a thing or a
room the one before did not, is a problem of its own, whatever the thing: one the lexicon does
not know ("the porch railing is loose") is a ``general`` problem, never words on its neighbour's;
a part of the thing before ("… and its stopper is stuck", ``maestro.domain.parts``) is more of
it. Rule 5 gives each problem its own action
(a relay to its work order or a create, refs new:1, new:2…); a time offered unasked ("I'm home
tomorrow after 3") proposes a visit for each new work order. Rules 2, 3 and 7 relay or create
the problems said alongside their answer or command (a tie or a room-only match is left to the
assistant rather than blocking the answer). Time words inside a problem ("stopped this
morning") are not availability, and a bare digit in one ("2 lights are out") is not a rating.

Same input, same output, whatever the order of the contexts. The k samples agree except when a
rule is unsure (a negated availability): then a minority
of samples proposes the alternative reading, so consensus shows the doubt and dispose asks
instead of guessing (I3).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from maestro.domain.actions import (
    NEW_WO_PREFIX,
    Action,
    Category,
    Clarify,
    ClarifyParams,
    ContinueWithAssistant,
    ContinueWithAssistantParams,
    CreateWo,
    CreateWoParams,
    DeferredCall,
    Escalate,
    EscalateParams,
    ManageExisting,
    ManageExistingParams,
    RecordRating,
    RecordRatingParams,
    RelayToOpenWo,
    RelayToOpenWoParams,
    ScheduleVisit,
    ScheduleVisitParams,
)
from maestro.domain.answers import read_answer
from maestro.domain.commands import CANCEL as _CANCEL
from maestro.domain.commands import NEGATED_COMMAND as _NEGATED_COMMAND
from maestro.domain.commands import RESCHEDULE as _RESCHEDULE
from maestro.domain.completion import confirms_done, disputes_done, reports_done
from maestro.domain.dispose import refusal_for_pm
from maestro.domain.fixed_texts import NOTHING_OPEN_TO, PM_HELP_TEXT, say
from maestro.domain.language import language_for
from maestro.domain.memory import SenderRole, mask_phone_numbers, truncate
from maestro.domain.models import (
    REPORTABLE,
    TERMINAL_STATUSES,
    ContextKind,
    OpenContext,
    Package,
    PartyRole,
    WorkOrderStatus,
)
from maestro.domain.parts import PARTS_OF, all_parts
from maestro.domain.records import BrainSample
from maestro.domain.spanish_gloss import english_gloss
from maestro.domain.wo_refs import WoRef, wo_ref_spans

if TYPE_CHECKING:
    from maestro.domain.memory import BrainRequest

from .precheck import package_safety_hit

__all__ = ["MODEL_ID", "OfflineBrain"]

MODEL_ID = "offline-brain"
_NAME = "offline brain"

_SURE = 0.9
_FAIRLY_SURE = 0.8
_UNSURE = 0.6
_MAX_TARGET_LEN = 64  # ActionBase.target_wo_id's limit: a longer id cannot be targeted
_RATERS = frozenset({"tenant", "pm"})


# --- text helpers ------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _clean(text: str) -> str:
    """The tenant's words as a model would see them: one line, phone numbers masked."""
    return mask_phone_numbers(_one_line(text))


_WORD = re.compile(r"[a-z]+")
_STOPWORDS = frozenset(
    {
        "the", "a", "an", "and", "or", "but", "is", "are", "was", "were", "be", "been", "being",
        "it", "its", "this", "that", "these", "those", "my", "our", "your", "their", "his", "her",
        "i", "im", "we", "you", "they", "he", "she", "me", "us", "them", "of", "in", "on", "at",
        "to", "from", "for", "with", "by", "under", "over", "again", "still", "back", "now",
        "just", "also", "too", "one", "ones", "some", "any", "all", "very", "so", "not", "no",
        "yes", "ok", "okay", "thanks", "thank", "please", "hi", "hello", "hey", "there", "here",
        "what", "which", "when", "where", "who", "how", "why", "can", "could", "would", "should",
        "will", "do", "does", "did", "done", "have", "has", "had", "get", "got", "up", "down",
        "out", "off", "about", "like", "really", "fine", "come", "coming", "came", "go", "going",
        "unit", "apt", "apartment", "open", "scheduled", "progress", "completed", "cancelled",
        "fixed", "new", "same", "other", "another", "more", "less", "way", "thing", "things",
        # what is left of a contraction ("won't" → "won", "t"): a negation, not a word of a WO
        "won", "don", "doesn", "isn", "aren", "wasn", "weren", "didn", "hasn", "haven", "cant",
        "couldn", "wouldn", "shouldn",
    }
)  # fmt: skip
# Rooms say where, not what: sharing only a room with a work order is weak evidence.
_LOCATIONS = frozenset(
    {
        "kitchen", "bathroom", "bath", "bedroom", "living", "room", "basement", "garage",
        "hallway", "hall", "laundry", "closet", "attic", "balcony", "patio", "yard", "upstairs",
        "downstairs", "front", "rear", "master", "guest", "entry",
    }
)  # fmt: skip


def _stem(word: str) -> str:
    # Crude on purpose; both sides of a comparison go through it, so "leaking" meets "leak".
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiou":
        word = word[:-1]  # "dripp" → "drip"
    return word


def _content_stems(text: str) -> frozenset[str]:
    words = (w for w in _WORD.findall(text.lower()) if len(w) >= 3 and w not in _STOPWORDS)
    return frozenset(_stem(w) for w in words)


_LOCATION_STEMS = frozenset(_stem(w) for w in _LOCATIONS)


# --- availability (rule 2) ---------------------------------------------------------------------

_HOUR = r"(?:[01]?\d|2[0-3])(?::[0-5]\d)?"
_AMPM = r"\s*(?:am|pm|a\.m\.|p\.m\.)"
_TIME = re.compile(
    r"\b(?:"
    rf"{_HOUR}{_AMPM}"
    rf"|(?:after|before|from|at|by|around|until|till|til|between|past)\s+{_HOUR}(?:{_AMPM})?"
    rf"(?:\s*(?:-|to|and)\s*{_HOUR}(?:{_AMPM})?)?"
    rf"|{_HOUR}(?:{_AMPM})?\s*(?:onwards?|on\b|or\s+later|and\s+after|o'?clock|ish)"
    rf"|{_HOUR}(?:{_AMPM})?\s*-\s*{_HOUR}(?:{_AMPM})?"
    r"|(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)day|tues|thurs"
    r"|today|tonight|tomorrow|tmrw|tmr|weekend|weekdays?|this\s+week|next\s+week"
    r"|(?:this\s+|tomorrow\s+)?(?:morning|afternoon|evening)s?|noon|midday|lunch\s*time"
    r"|any\s*time|whenever|all\s+day"
    r")\b",
    re.IGNORECASE,
)
# Words that may sit between two time matches of one expression ("tomorrow, after 2").
_TIME_GLUE = re.compile(r"^[\s,]*(?:and|or|from|to|-)?[\s,]*$", re.IGNORECASE)
_NEGATED_AVAILABILITY = re.compile(
    r"\b(?:not|can'?t|cannot|won'?t|busy|unavailable|except|no\s+good|doesn'?t\s+work)\b",
    re.IGNORECASE,
)


# "since monday" says when something began, not when to come.
_SINCE = re.compile(r"\bsince\s+(?:last\s+)?$", re.IGNORECASE)


def _availability(text: str) -> str | None:
    """The time expressions in ``text``, in the sender's words, or None."""
    groups: list[tuple[int, int]] = []
    for match in _TIME.finditer(text):
        start, end = match.span()
        if _SINCE.search(text, 0, start):
            continue
        if groups and _TIME_GLUE.fullmatch(text[groups[-1][1] : start]):
            groups[-1] = (groups[-1][0], end)
        else:
            groups.append((start, end))
    if not groups:
        return None
    said = dict.fromkeys(_one_line(text[s:e]) for s, e in groups)  # "2 onward … 2 onward": once
    return truncate(", ".join(said), 300)


# --- ratings (rule 3) --------------------------------------------------------------------------

_SPELLED = {
    **{"one": 1, "two": 2, "three": 3, "four": 4, "five": 5},
    **{"una": 1, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5},
}
_STRONG_RATING = re.compile(
    r"(?<![\w/.:#-])([1-5])\s*(?:stars?\b|estrellas?\b|⭐|/\s*5\b|out\s+of\s+(?:5|five)\b|"
    r"de\s+(?:5|cinco)\b)"
    r"|\b(one|two|three|four|five|una|uno|dos|tres|cuatro|cinco)\s+(?:stars?|estrellas?)\b",
    re.IGNORECASE,
)
_LONE_DIGIT = re.compile(r"(?<![\w/.:#$-])([1-5])(?![\w/.:%$-])")
# A digit followed by a noun counts things ("2 buckets", "the 3 burners"): not a rating. Only
# these words may follow a lone digit that may be one ("5 thanks", "4 from me", "5 works").
_AFTER_A_RATING = frozenset(
    {"thanks", "thank", "thx", "ty", "cheers", "from", "for", "great", "good", "excellent",
     "awesome", "amazing", "perfect", "nice", "well", "job", "stars", "star", "is", "was",
     "works", "work", "sounds", "ok", "okay", "fine", "it", "please", "then", "and"}
)  # fmt: skip
_WORD_AFTER = re.compile(r"\s*([a-z]+)", re.IGNORECASE)
_STAR_EMOJI = re.compile(r"^[\s⭐🌟]+$")


@dataclass(frozen=True, slots=True)
class _Rating:
    stars: int
    strong: bool  # said as a rating ("5 stars", "4/5"), not just a digit


def _rating(text: str) -> _Rating | None:
    """A rating in ``text``: explicit ("5 stars", "4/5", "⭐⭐⭐⭐") or a lone digit in a short
    message with no time words and no other number (a bare "5", "great job 5")."""
    if match := _STRONG_RATING.search(text):
        digit, word = match.groups()
        return _Rating(int(digit) if digit else _SPELLED[word.lower()], strong=True)
    if _STAR_EMOJI.fullmatch(text) and 1 <= (n := sum(ch in "⭐🌟" for ch in text)) <= 5:
        return _Rating(n, strong=True)
    lone = list(_LONE_DIGIT.finditer(text))
    if (
        len(lone) == 1
        and sum(ch.isdigit() for ch in text) == 1
        and "?" not in text
        and _TIME.search(text) is None
        and len(text.split()) <= 8
        and not _counts_something(text, lone[0].end())
        and _problem(text) is None  # "the 3 burners won't light" reports, it does not rate
    ):
        return _Rating(int(lone[0].group(1)), strong=False)
    return None


def _counts_something(text: str, end: int) -> bool:
    """Whether the digit ending at ``end`` is followed by what it counts ("2 buckets")."""
    after = _WORD_AFTER.match(text, end)
    return after is not None and after.group(1).lower() not in _AFTER_A_RATING


# --- ids named in the text --------------------------------------------------------------------


def _id_pattern(context_id: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w-]){re.escape(context_id)}(?![\w-])", re.IGNORECASE)


def _ids_named(text: str, contexts: Sequence[OpenContext]) -> list[str]:
    """The ids of ``contexts`` that ``text`` names, in order of first appearance."""
    found = [
        (m.start(), c.context_id) for c in contexts if (m := _id_pattern(c.context_id).search(text))
    ]
    return [cid for _, cid in sorted(found)]


_DIGIT_WORDS = {
    "zero": "0", "oh": "0", "o": "0", "one": "1", "two": "2", "three": "3", "four": "4",
    "five": "5", "six": "6", "seven": "7", "eight": "8", "nine": "9",
}  # fmt: skip
_SPOKEN_DIGITS = re.compile(
    r"\b(?:" + "|".join(_DIGIT_WORDS) + r")(?:[\s-]+(?:" + "|".join(_DIGIT_WORDS) + r"))+\b",
    re.IGNORECASE,
)


def _digits_spoken(text: str) -> str:
    """Digits said one by one, as a call's transcript writes them ("two-oh-four", "two zero
    four"), as the number ("204"); two or more in a row, so "oh" or "one" alone stays a word."""
    return _SPOKEN_DIGITS.sub(
        lambda m: "".join(_DIGIT_WORDS[w.lower()] for w in re.split(r"[\s-]+", m.group(0))),
        text,
    )


# --- commands (rule 7) ------------------------------------------------------------------------

_LIST = re.compile(
    r"\b(?:list|show|see|check)\b(?:\s+(?:me|all|of))*\s+(?:my|our)\s+"
    r"(?:open\s+|pending\s+|current\s+)?(?:requests?|work\s*orders?|tickets?|jobs?)\b"
    r"|\bwhat\s+(?:do|have)\s+(?:i|we)\s+(?:got\s+|have\s+)?(?:open|pending|going\s+on)\b"
    r"|\bwhat(?:'s|\s+is|\s+are)\s+(?:my|our)\s+(?:open\s+|pending\s+|current\s+)?"
    r"(?:requests?|work\s*orders?|tickets?)\b",
    re.IGNORECASE,
)
_EVERY = re.compile(r"\b(?:all|both|every(?:thing|one)?|each)\b", re.IGNORECASE)
_ALL_BUT = re.compile(
    r"\b(?:all|every(?:thing|one)?)\b(?:\s+of\s+them)?\s+(?:but|except|apart\s+from|other\s+than)\b",
    re.IGNORECASE,
)
_COUNTING = re.compile(
    r"\d|\b(?:first|second|third|fourth|fifth|last|two|three|four|five|couple|few)\b",
    re.IGNORECASE,
)
# The polite lead of a command ("could you please cancel"): no choice in it.
_COMMAND_LEAD = re.compile(
    r"^.*?\b(?:cancel(?:l?ing)?|re-?schedul(?:e|ing)|postpone|call\s+off|move|push)\b\s*",
    re.IGNORECASE,
)
_BOTH = re.compile(r"\bboth\b", re.IGNORECASE)
_COMMANDS = (_CANCEL, _RESCHEDULE, _LIST)
_ID_LIKE = re.compile(r"(?<![\w-])[a-z]{1,6}-\d{1,8}(?![\w-])", re.IGNORECASE)
# Words of the command itself: they say what to do, not which work order.
_COMMAND_STEMS = frozenset(
    _stem(w)
    for w in (
        "cancel", "cancelling", "canceling", "reschedule", "rescheduling", "postpone", "both",
        "every", "everything", "everyone", "each", "request", "order", "work", "ticket", "job",
        "visit", "appointment", "list", "show",
    )
)  # fmt: skip


# --- the maintenance lexicon (rule 5) ----------------------------------------------------------


def _lexicon(*entries: tuple[Category, str]) -> tuple[tuple[Category, re.Pattern[str]], ...]:
    return tuple((c, re.compile(rf"\b(?:{p})\b", re.IGNORECASE)) for c, p in entries)


_LEXICON = _lexicon(
    (
        "plumbing",
        r"no\s+hot\s+water|hot\s+water|water\s+heater|leak\w*|drip\w*|clog\w*|toilets?|"
        r"sinks?|faucets?|taps?|pipes?|drains?|showers?|(?:bath)?tubs?|plumbing|disposal",
    ),
    (
        "hvac",
        r"a/c|ac|air\s*con\w*|heat|heating|heater|furnace|thermostat|hvac|radiators?|boiler|"
        r"vents?",
    ),
    (
        "electrical",
        r"outlets?|switch(?:es)?|breakers?|fuses?|power|lights?|bulbs?|wiring|electric\w*",
    ),
    (
        "appliance",
        r"fridge|refrigerator|freezer|oven|stove|dishwasher|washer|washing\s+machine|dryer|"
        r"microwave|range\s+hood",
    ),
    (
        "pest",
        r"mice|mouse|rats?|roach\w*|cockroach\w*|ants|bed\s*bugs?|bugs|termites?|pests?|"
        r"wasps?|hornets?|fleas|rodents?",
    ),
    ("locks", r"locks?|locked\s+out|keys?|deadbolt|latch|doors?|windows?"),
    ("structural", r"ceilings?|walls?|floors?|roof|stairs|cracks?|cracked|holes?"),
    ("general", r"mou?ld|mildew"),
)
# Plain symptoms of a thing coming apart or acting up, whatever the thing (review of #20: "the
# towel bar fell off", "the railing is wobbly", "the detector keeps chirping" were read as no
# problem, so a text of two problems opened one or none).
_COMING_APART = (
    # A thing falls off or down; a person falls down the stairs or off a ladder.
    r"fell\s+(?:apart|out)|(?:fell|falls?)\s+(?:off|down)(?!\s+(?:the|a|my|his|her|some)\s+"
    r"(?:stairs|steps|ladder|bed|bike|chair|stool|couch))|falls?\s+apart|came\s+(?:off|loose|apart|down|"
    r"unglued)|off\s+(?:its|the)\s+tracks?|snapped|shattered|chipped|bent|torn|ripped|"
    r"wobbl\w*|shaky|chirp\w*|(?:is|went|has\s+gone)\s+dead|died|"
    # What a machine keeps doing, not a person ("my son keeps asking" is no problem).
    r"keeps?\s+(?:chirp|click|blink|flash|reset|cycl|turn|shut|switch|cutt|stall|squeal|"
    r"whistl|bang|knock|freez|fogg|hiss|whin|grind|hum|buzz|spark)\w*"
)
# A noun alone ("the fridge") is not a problem; a symptom, a pest or mould is.
_SYMPTOM = re.compile(
    r"\b(?:broken|broke|busted|damaged|not\s+working|(?:does|do|is|are)?n'?t\s+work\w*|"
    r"(?:does|do|is|are)\s+not\s+work\w*|won'?t\s+(?:turn|open|close|shut|lock|unlock|start|"
    r"work|flush|drain|stop|light|ignite|heat|cool|latch|spin|stay)\w*|stopped(?:\s+working)?|"
    r"leak\w*|drip\w*|clog\w*|block(?:ed|age)|backed\s+up|overflow\w*|cracked|stuck|"
    r"stick(?:ing|s)|jammed|flicker\w*|no\s+hot\s+water|no\s+power|"
    r"(?:not|(?:is|are|does|do|was|were)n'?t)\s+(?:cooling|heating|draining|flushing|closing|locking|latching|lighting|"
    r"igniting|spinning|turning\s+on)|"
    r"drain\w*\s+(?:\w+\s+)?slow(?:ly)?|slow(?:ly)?\s+drain\w*|"
    r"keeps?\s+(?:running|tripping|beeping|leaking|dripping|going\s+off|shutting\s+off)|"
    r"tripp(?:ed|ing)|beep\w*|squeak\w*|rattl\w*|buzz\w*|peeling|sagging|rust(?:y|ed)|"
    r"standing\s+water|puddles?|flood\w*|"
    r"(?:loud\s+)?nois\w*|loose|falling\s+off|(?:is|are|went|gone)\s+out|smell\w*|"
    r"infest\w*|mou?ld\w*|mildew|missing|dead|died|(?<!no\s)(?:issue|problem)s?|"
    r"needs?\s+(?:fixing|repair\w*|to\s+be\s+(?:fixed|repaired))|repair\w*|"
    # News that a problem persists: "the fridge is still warm", "the drain's still slow".
    r"still\s+(?:(?:too|so|very|really|pretty|kind\s+of)\s+)?(?:warm|hot|cold|slow|loud|noisy|"
    r"dark|wet|damp|broken|off|out|bad|the\s+same)|"
    rf"{_COMING_APART})\b",
    re.IGNORECASE,
)
_ROOM = re.compile(
    r"\b(?:kitchen|bathroom|bedroom|living\s+room|basement|garage|hallway|laundry(?:\s+room)?|"
    r"closet|attic|balcony|patio)\b",
    re.IGNORECASE,
)
# What is wrong with a thing the lexicon does not know ("the intercom handset stopped working",
# "the blinds are broken"): plain symptoms only, none that also names a topic ("issue",
# "missing", "smell"), so "my lease issue" or "the missing parcel" is no problem with a thing.
_OBJECT_SYMPTOM = re.compile(
    r"\b(?:broken|broke|busted|damaged|not\s+working|(?:does|do|is|are)n'?t\s+work\w*|"
    r"(?:does|do|is|are)\s+not\s+work\w*|won'?t\s+[a-z]+|stopped\s+working|quit\s+working|"
    r"leak\w*|drip\w*|clogged|cracked|stuck|jammed|loose|falling\s+off|came\s+off|"
    r"(?:making|makes?)\s+(?:an?\s+)?(?:[a-z]+\s+)?nois\w*|rattl\w*|squeak\w*|grind\w*|"
    r"flicker\w*|(?:is|are|was|were)(?:n'?t|\s+not)\s+[a-z]+ing|"
    rf"{_COMING_APART})\b",
    re.IGNORECASE,
)
# The parts of things (maestro.domain.parts): "the trap", "a hinge", "the flapper".
_PART = re.compile(
    rf"\b({'|'.join(sorted(all_parts(), key=len, reverse=True))})(?:e?s)?\b", re.IGNORECASE
)
# The things (a part or a whole) each part belongs to.
_ALL_PARTS = all_parts()
_WHOLES = {part: frozenset(w for w, ps in PARTS_OF.items() if part in ps) for part in all_parts()}
# Parts that are things of their own too: a door is a fridge's, and a room's.
_PARTS_ALSO_THINGS = frozenset(
    part for part in all_parts() if any(p.fullmatch(part) for _, p in _LEXICON)
)
# A thing the lexicon does not know is named after a determiner: "the blinds", "my intercom".
_OBJECT_LEAD = re.compile(
    r"\b(?:the|my|our|a|an|this|that|these|those|their|his|her|its)\s+", re.IGNORECASE
)
_NEXT_WORD = re.compile(r"([a-z][a-z'’-]*)\s*", re.IGNORECASE)
# Where trouble goes, not what has it: "drips down the counter", "spills onto the rug".
_TOWARD = re.compile(
    r"\b(?:down|onto|into|across|over|along|toward|towards|through|up|to|off)\s+$", re.IGNORECASE
)
# A clause whose subject is a pronoun is about the thing before it: "…, it came off the rail".
_PRONOUN_SUBJECT = re.compile(
    r"^\W*(?:(?:and|but|so|now|plus)\s+)?(?:it|it's|it’s|its|they|they're|they’re|this|that)\b",
    re.IGNORECASE,
)
# Words after a determiner that name no thing to repair: people, times, water itself, sizes.
_NOT_OBJECTS = frozenset(
    _stem(w)
    for w in (
        "water", "landlord", "manager", "neighbor", "neighbour", "neighbors", "neighbours",
        "plumber", "electrician", "guy", "man", "woman", "lady", "tech", "technician", "vendor",
        "super", "superintendent", "someone", "somebody", "person", "people", "kid", "kids",
        "son", "daughter", "husband", "wife", "roommate", "dog", "cat", "baby", "day", "night",
        "week", "weekend", "month", "year", "time", "moment", "minute", "hour", "lot", "bit",
        "side", "top", "bottom", "middle", "end", "left", "right", "place", "old", "weird",
        "strange", "little", "big", "small", "whole", "entire", "first", "last", "second",
        "tiny", "huge", "loud", "bad", "whatever", "something", "thing", "stuff",
        # the tenant's own things and dealings, no part of the home: "my phone isn't charging"
        "phone", "cell", "laptop", "computer", "car", "package", "parcel", "mail", "app",
        "account", "payment", "card", "rent", "lease", "bill", "check", "cheque", "website",
        "portal", "email", "text", "message", "link", "code", "password",
    )
)  # fmt: skip
# Where, not what: a determiner's phrase ends at them ("a little underneath", "the one behind").
_OBJECT_PHRASE_END = frozenset(
    {
        "underneath", "below", "above", "behind", "beneath", "inside", "outside", "around",
        "near", "next", "into", "onto", "through", "across", "between", "everywhere",
        "somewhere", "anywhere", "today", "yesterday", "again", "since", "because", "when",
    }
)  # fmt: skip
# A part said as the open thing's ("the pipe under it", "the door on it", "the cabinet below").
_OF_IT = re.compile(
    r"\b(?:under|below|beneath|behind|underneath|on|of|in|inside|off)\s+it\b"
    r"|\b(?:under|down|in|back|behind)\s+there\b|\b(?:below|beneath|underneath)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class _Problem:
    category: Category
    nouns: frozenset[str]  # stems of the lexicon words found
    things: frozenset[str]  # the nouns that name a thing, not a symptom ("sink", not "leak")


def _problem(text: str) -> _Problem | None:
    """The maintenance problem ``text`` describes, if it describes one."""
    hits = sorted(
        (m.start(), category, m.group(0))
        for category, pattern in _LEXICON
        for m in pattern.finditer(text)
    )
    symptoms = [m.span() for m in _SYMPTOM.finditer(text)]
    named = _named_things(text, symptoms)
    if not hits:
        if named and symptoms:
            # Only parts are named ("the flapper keeps running"): their thing's category.
            return _Problem(_category_of_parts(named), named, named)
        return _unknown_problem(text)
    categories = {category for _, category, _ in hits}
    if not (symptoms or categories & {"pest", "general"}):
        return None
    if not named and (unknown := _unknown_problem(text)) is not None:
        return unknown  # "the skylight is leaking": the skylight's, not the leak's category

    def stems(phrases: list[str]) -> frozenset[str]:
        return frozenset(_stem(w) for phrase in phrases for w in _WORD.findall(phrase.lower()))

    return _Problem(
        category=hits[0][1], nouns=stems([phrase for _, _, phrase in hits]), things=named
    )


def _unknown_problem(text: str) -> _Problem | None:
    """A problem with a thing the lexicon does not know ("the intercom handset stopped
    working"): the category of an unknown thing is ``general``, never a neighbour's."""
    if _OBJECT_SYMPTOM.search(text) is None:
        return None
    symptoms = [*_symptom_spans(text), *(m.span() for m in _OBJECT_SYMPTOM.finditer(text))]
    objects = _unknown_objects(text, symptoms)
    return _Problem("general", objects, objects) if objects else None


def _inside(spans: Sequence[tuple[int, int]]) -> Callable[[int], bool]:
    """Whether a position falls in one of ``spans``: the spans merged once and bisected, so a
    long package's many words are not each checked against its many symptoms."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    starts = [start for start, _ in merged]

    def inside(at: int) -> bool:
        i = bisect_right(starts, at) - 1
        return i >= 0 and at < merged[i][1]

    return inside


def _unknown_objects(text: str, symptoms: Sequence[tuple[int, int]]) -> frozenset[str]:
    """The words naming a thing after a determiner ("the garbage chute", "my blinds"), up to
    the first word of a symptom or a stopword; rooms, people and times are no things."""
    found: set[str] = set()
    in_symptom = _inside(symptoms)
    for lead in _OBJECT_LEAD.finditer(text):
        if _TOWARD.search(text, 0, lead.start()):
            continue
        at = lead.end()
        for _ in range(3):
            word = _NEXT_WORD.match(text, at)
            if word is None or in_symptom(word.start()):
                break
            said = word.group(1).lower()
            if said in _STOPWORDS or said in _OBJECT_PHRASE_END or _TIME.fullmatch(said):
                break
            if len(said) >= 3 and said not in _LOCATIONS and _stem(said) not in _NOT_OBJECTS:
                found.add(_stem(said))
            at = word.end()
    return frozenset(found)


def _thing_name(phrase: str) -> str:
    """One name per thing: "fridge" and "refrigerator" are one, "sinks" is "sink"."""
    phrase = " ".join(phrase.lower().split())
    same = next((name for p, name in _SAME_THING if p.fullmatch(phrase)), None)
    return same or " ".join(_stem(w) for w in _WORD.findall(phrase))


def _named_things(text: str, symptoms: Sequence[tuple[int, int]]) -> frozenset[str]:
    """The things and parts the lexicon and the part-of table know in ``text``, outside its
    symptoms ("leaking", "won't drain": what is wrong, not what)."""
    found: set[str] = set()
    in_symptom = _inside(symptoms)
    for pattern in (*(p for _, p in _LEXICON), _PART):
        for match in pattern.finditer(text):
            if not in_symptom(match.start()):
                found.add(_thing_name(match.group(1) if pattern is _PART else match.group(0)))
    return frozenset(found)


def _is_surface(thing: str) -> bool:
    """A floor, a wall, a ceiling: where things are, not a fixture with parts of its own."""
    return any(c == "structural" and p.fullmatch(thing) for c, p in _LEXICON)


def _parts_of(things: frozenset[str]) -> frozenset[str]:
    return frozenset().union(*(PARTS_OF.get(thing, frozenset()) for thing in things))


def _parts_named(things: frozenset[str], wholes: frozenset[str], text: str) -> frozenset[str]:
    """The ``things`` of ``text`` that are parts of ``wholes``: a part that is no thing of its
    own ("the trap", "a hinge") always; one that is (a door, a drain, a light: a fridge has
    them, so does every room) only when said as theirs ("the door on it", "the pipe below")."""
    parts = things & _parts_of(wholes)
    return parts if _OF_IT.search(text) else parts - _PARTS_ALSO_THINGS


def _category_of_parts(parts: frozenset[str]) -> Category:
    """The category of the things ``parts`` belong to, when they agree; else ``general``."""
    categories = {
        category
        for part in parts
        for whole in _WHOLES.get(part, frozenset({part}))
        for category, pattern in _LEXICON
        if pattern.fullmatch(whole)
    }
    return categories.pop() if len(categories) == 1 else "general"


# --- clauses: several intents in one package (rules 2, 3, 5, 7) ---------------------------------

# Where a clause ends: a new message, a sentence stop, a comma or semicolon, "and", "also", "plus".
_CLAUSE_BREAK = re.compile(r"\n|[.!?]+(?=\s|$)|[,;]|\b(?:and|also|plus)\b", re.IGNORECASE)
_LEADING_GLUE = re.compile(r"^(?:(?:and|also|plus|but|now|then|oh|so)\b[\s,]*)+", re.IGNORECASE)
_MAX_PLAN = 8  # the most actions a model's plan may hold (ActionPlan)
_MAX_PROBLEMS = _MAX_PLAN // 2  # a create and a visit each
# Said when offering a time ("I'm home after 3"), not when telling a story ("since monday").
_OFFERED_TIME = re.compile(
    r"\b(?:home|available|free|around|here|there|in|come|stop\s+by|drop\s+by|swing\s+by|works?|"
    r"good|fine|ok(?:ay)?|can\s+do|best|any\s*time|whenever|after|from|between|onwards?|until|"
    r"till)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class _Clause:
    start: int
    end: int
    problem: _Problem | None
    offers_time: bool  # no problem; a time with an offer in the same clause ("I'm home at 3")
    aside: bool  # no problem; a time offered, a rating or a command: when, how well, what to do
    wordy: bool  # has content words (not just "thanks", "ok", "4")


@dataclass(frozen=True, slots=True)
class _Part:
    """One problem in the sender's words: its clause and the clauses that lean on it."""

    text: str
    problem: _Problem


@dataclass(frozen=True, slots=True)
class _Parts:
    """What a package says, clause by clause: the problems, and the words outside them."""

    problems: tuple[_Part, ...]
    rest: str  # the text with the problem clauses blanked out: where an answer's time is read
    offered: str  # the clauses that offer a time unasked ("I'm free between 2 | and 4")


def _clauses(lines: str) -> list[_Clause]:
    """The clauses of ``lines`` (one line per message), each read on its own."""
    clauses: list[_Clause] = []
    start = 0
    for cut in [*_CLAUSE_BREAK.finditer(lines), None]:
        end = cut.start() if cut else len(lines)
        chunk = lines[start:end]
        if any(ch.isalnum() for ch in chunk):
            first = start + len(chunk) - len(chunk.lstrip())
            last = start + len(chunk.rstrip())
            words = lines[first:last]
            problem = _problem(words)
            # "by tonight" in "I worry it spreads by tonight" is part of the story, not an offer.
            offers_time = (
                problem is None
                and _TIME.search(words) is not None
                and _OFFERED_TIME.search(words) is not None
            )
            aside = offers_time or (
                problem is None and any(p.search(words) for p in (_STRONG_RATING, *_COMMANDS))
            )
            wordy = bool(_content_stems(words))
            clauses.append(_Clause(first, last, problem, offers_time, aside, wordy))
        if cut:
            start = cut.end()
    return clauses


def _room(text: str) -> str | None:
    match = _ROOM.search(text)
    return " ".join(match.group(0).lower().split()) if match else None


def _stands_alone(clause: _Clause, group: Sequence[_Clause], lines: str) -> bool:
    """Whether a problem clause is a problem of its own, not more about the group's problem:
    it names a thing the group does not ("it is leaking" names none), or another room."""
    assert clause.problem is not None
    here = _room(lines[clause.start : clause.end])
    there = next((r for c in group if (r := _room(lines[c.start : c.end]))), None)
    if here and there and here != there:
        return True  # "the bathroom sink is clogged and the hallway leak is back"
    if _PRONOUN_SUBJECT.match(lines[clause.start : clause.end]):
        return False  # "the closet door is busted, it slid off the rail"
    things = clause.problem.things
    known = frozenset().union(*(c.problem.things for c in group if c.problem))
    # "the sink leaks, the trap under it is loose": a part of the group's thing is more of it.
    parts = _parts_named(things, known, lines[clause.start : clause.end])
    return bool(things) and not things <= known | parts


def _parts(lines: str, text: str) -> _Parts:
    """Split the package into its problems (at most _MAX_PROBLEMS; more ride on the last)."""
    clauses = _clauses(lines)
    offered = _offered_text(clauses, lines)
    groups: list[list[_Clause]] = []
    lead: list[_Clause] = []  # words before the first problem belong to it ("the sink and…")
    aside = False  # what follows a time, a rating or a command ("between 2 | and 4") is theirs
    for clause in clauses:
        if clause.problem is not None:
            aside = False
            if not groups or (
                len(groups) < _MAX_PROBLEMS and _stands_alone(clause, groups[-1], lines)
            ):
                groups.append([*lead, clause])
                lead = []
            else:
                groups[-1].append(clause)
        elif clause.aside or aside or not clause.wordy:
            aside = aside or clause.aside
            continue  # not part of a problem's summary
        elif groups:
            groups[-1].append(clause)
        else:
            lead.append(clause)
    if not groups:
        # No clause is a problem on its own, but together they may be ("the fridge, broken").
        whole = _problem(text)
        return _Parts((_Part(text, whole),) if whole else (), text, offered)
    parts: list[_Part] = []
    for group in groups:
        words = _LEADING_GLUE.sub("", _one_line(lines[group[0].start : group[-1].end]))
        problem = _problem(words) or next(c.problem for c in group if c.problem)
        parts.append(_Part(words, problem))
    rest, at = [], 0
    for clause in clauses:
        if clause.problem is not None:
            rest.append(lines[at : clause.start] + " . ")  # a stop: no time spans a problem
            at = clause.end
    rest.append(lines[at:])
    return _Parts(tuple(parts), "".join(rest), offered)


def _offered_text(clauses: Sequence[_Clause], lines: str) -> str:
    """The clauses that offer a time, with the bare ones that finish them ("… between 2 | and
    4"), each run ended by a stop so no time spans two of them."""
    runs: list[str] = []
    start: _Clause | None = None
    end: _Clause | None = None
    for clause in [*clauses, None]:
        if clause is not None and (
            clause.offers_time or (start is not None and not clause.wordy and not clause.problem)
        ):
            start, end = start or clause, clause
            continue
        if start is not None and end is not None:
            runs.append(lines[start.start : end.end])
        start = end = None
    return " . ".join(runs)


def _offered_availability(parts: _Parts) -> str | None:
    """A time the sender offers unasked ("I'm home tomorrow after 3"), in their words. Not one
    inside a problem ("stopped working this morning") or told as part of it ("it may spread by
    tonight"), nor a negated one ("not home tomorrow"): the assistant asks for those."""
    if not parts.offered or _NEGATED_AVAILABILITY.search(parts.offered):
        return None
    return _availability(parts.offered)


# --- readings ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Reading:
    """What the offline brain reads in a package: a plan, and when unsure, the alternative a
    minority of the samples proposes instead."""

    rule: str
    plan: tuple[Action, ...]
    doubt: tuple[Action, ...] | None = None


def _why(text: str) -> str:
    return truncate(f"{_NAME}: {text}", 400)


def _clarify(
    candidates: Sequence[OpenContext], why: str, evidence: str, call: DeferredCall | None = None
) -> Clarify:
    ids = tuple(c.context_id for c in candidates)[:10]
    options = "; ".join(
        f"{n}) {c.context_id}: {c.description}" for n, c in enumerate(candidates, 1)
    )
    return Clarify(
        confidence=_SURE,
        why=_why(why),
        evidence=truncate(evidence, 400),
        params=ClarifyParams(
            question=truncate(f"Just to be sure, which one do you mean? {options}", 400),
            candidate_ids=ids,
            reason="multi_context" if len(ids) > 1 else "ambiguous_relation",
            call=call,
        ),
    )


def _best_by_words(text: str, contexts: Sequence[OpenContext]) -> list[OpenContext]:
    """The contexts sharing the most content words with ``text`` (empty when none shares any)."""
    return _best_by_stems(_content_stems(text), contexts)


def _best_by_stems(words: frozenset[str], contexts: Sequence[OpenContext]) -> list[OpenContext]:
    scores = [(len(words & _content_stems(c.description)), c) for c in contexts]
    top = max((s for s, _ in scores), default=0)
    return [c for s, c in scores if s == top] if top > 0 else []


# --- which work order the words name (I3, I4: bind only when one is clearly named) ----------------
#
# A reference is clear when it names the candidate's *thing* (the sink, the radiator, the fridge)
# or a part of it ("the flapper" of a toilet; a part that is a thing of its own too, a door or a
# drain, only said as its: "the door on it"), or, naming no thing,
# shares a word with its description that is neither a room nor a symptom
# ("the plumber", "the part"). A shared room or a shared symptom ("leaking", "not cooling") is a
# hint, never a name: many things leak. A name is void when the words contradict the candidate
# (another room or side, "the back door" for "the front door lock"; a symptom of another kind,
# "cracked" for "runs constantly") or say it is another one ("… too", "another …", "either").
# One named → bind; several → ask; none → ask among those hinted at, or open a new work order
# when the words name a thing of their own and hint at none of them.

# The same thing under two names, so "the fridge" names "refrigerator not keeping cold".
_SAME_THING = (
    (re.compile(r"fridge|refrigerator", re.IGNORECASE), "refrigerator"),
    (re.compile(r"a/c|ac|air\s*con\w*", re.IGNORECASE), "air conditioner"),
    (re.compile(r"taps?|faucets?", re.IGNORECASE), "faucet"),
    (re.compile(r"washer|washing\s+machine", re.IGNORECASE), "washing machine"),
    (re.compile(r"(?:bath)?tubs?", re.IGNORECASE), "tub"),
)
# Kinds of symptom: two descriptions with symptoms of disjoint kinds are two problems.
_SYMPTOM_KINDS = tuple(
    (kind, re.compile(rf"\b(?:{pattern})\b", re.IGNORECASE))
    for kind, pattern in (
        ("water", r"leak\w*|drip\w*|wet|soak\w*|damp\w*|puddles?|seep\w*"),
        ("drainage", r"clog\w*|block(?:ed|age)|backed\s+up|drain\w*|standing\s+water|gurgl\w*"),
        ("running", r"runs|running|refill\w*|won'?t\s+stop"),
        ("temperature", r"cool\w*|cold|warm\w*|hot|heat(?:ing)?|freez\w*|chilly"),
        ("noise", r"nois\w*|buzz\w*|hums?|humming|rattl\w*|squeak\w*|bang\w*|beep\w*|loud"),
        ("smell", r"smell\w*|odou?rs?|stinks?|stinky|musty"),
        ("power", r"dead|no\s+power|(?:is|are|went|gone)\s+out|flicker\w*|trip\w*|spark\w*"),
        ("sticking", r"stick\w*|stuck|jam\w*|won'?t\s+turn"),
        (
            "closing",
            r"(?:won'?t|(?:does|do|is|are)n'?t|(?:does|do)\s+not)\s+"
            r"(?:close|shut|latch|lock|open)\w*|draft\w*|drafty",
        ),
        ("cracked", r"crack\w*|chipp\w*|shatter\w*"),
        ("mould", r"mou?ld\w*|mildew"),
    )
)
# Kinds that may be one problem seen twice: water makes drains back up, ceilings crack, mould.
_RELATED_KINDS = frozenset(
    frozenset(pair) for pair in (("water", "drainage"), ("water", "cracked"), ("water", "mould"))
)
# "the kitchen one", "the bedroom one": a selection by place among the open ones.
_BY_PLACE = re.compile(r"\b(?:the|my|that)\s+(?:\w+\s+){1,2}?one\b", re.IGNORECASE)
# "… too", "another …", "either", "a new …": one more of its kind, not the one already open.
_ADDITIVE = re.compile(
    r"\b(?:too|either|also|another|as\s+well|(?:a|one\s+more)\s+new|second|2nd)\b", re.IGNORECASE
)
# A side or a floor that tells two of a kind apart ("the back door", "the upstairs toilet").
_SIDE = re.compile(
    r"\b(front|back|rear|side|upstairs|downstairs|master|guest|main)\s+(?=[a-z])", re.IGNORECASE
)
# A clause saying something is fixed ("the sink is fine now", "the leak got fixed") is not a
# problem with it: its words must not point at the work order.
_RESOLVED = re.compile(
    r"\b(?:fine|fixed|sorted|resolved|gone|repaired)\b|\bworks?\s+(?:now|fine|again|great)\b"
    r"|\bworking\s+(?:now|fine|again)\b|\banymore\b|\bno\s+longer\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"n[’']t\b|\b(?:not|never|no|cannot|cant|dont|doesnt|didnt|isnt|arent|wasnt|wont)\b",
    re.IGNORECASE,
)
_RESOLVED_BREAK = re.compile(r"\n|[.!?]+(?=\s|$)|[,;]|\b(?:but|though|however)\b", re.IGNORECASE)


def _unresolved(text: str) -> str:
    """``text`` without its clauses that say something is fine now (the other clauses are what
    is wrong). "it's not the sink anymore" is such a clause too."""
    kept: list[str] = []
    start = 0
    for cut in [*_RESOLVED_BREAK.finditer(text), None]:
        end = cut.start() if cut else len(text)
        clause = text[start:end]
        resolved = _RESOLVED.search(clause)
        if resolved is None or (
            _NEGATION.search(clause) and not re.search(r"anymore|no\s+longer", clause, re.I)
        ):
            kept.append(clause)
        if cut:
            start = cut.end()
    return " . ".join(c.strip() for c in kept if c.strip())


def _kinds_agree(said: frozenset[str], described: frozenset[str]) -> bool:
    """Whether two sets of symptom kinds may be one problem (either empty: nothing disagrees)."""
    return (
        not said
        or not described
        or any(a == b or frozenset({a, b}) in _RELATED_KINDS for a in said for b in described)
    )


def _symptom_spans(text: str) -> list[tuple[int, int]]:
    spans = [m.span() for m in _SYMPTOM.finditer(text)]
    return spans + [m.span() for _, p in _SYMPTOM_KINDS for m in p.finditer(text)]


def _things(text: str) -> frozenset[str]:
    """The things ``text`` names (lexicon nouns and parts outside its symptoms, else a thing
    the lexicon does not know that something is wrong with), one name per thing."""
    symptoms = _symptom_spans(text)
    named = _named_things(text, symptoms)
    if named:
        return named
    unknown = _unknown_problem(text)
    return unknown.things if unknown else frozenset()


def _kinds(text: str) -> frozenset[str]:
    return frozenset(kind for kind, pattern in _SYMPTOM_KINDS if pattern.search(text))


def _places(text: str) -> frozenset[str]:
    rooms = {" ".join(m.group(0).lower().split()) for m in _ROOM.finditer(text)}
    sides = {
        m.group(1).lower()
        for m in _SIDE.finditer(text)
        if any(p.match(text, m.end()) for _, p in _LEXICON)  # "back door", not "back on"
    }
    return frozenset(rooms | sides)


def _plain_words(text: str) -> frozenset[str]:
    """The content words of ``text`` that are neither a symptom nor a room."""
    kept = list(text)
    for start, end in _symptom_spans(text):
        kept[start:end] = " " * (end - start)
    return _content_stems("".join(kept)) - _LOCATION_STEMS - _COMMAND_STEMS


@dataclass(frozen=True, slots=True)
class _Reference:
    """Which of the candidates ``text`` names, which it only hints at, and whether it names a
    thing none of them is about (then it may be a new problem)."""

    named: tuple[OpenContext, ...]
    hinted: tuple[OpenContext, ...]
    own_thing: bool
    additive: bool


def _refer(text: str, candidates: Sequence[OpenContext]) -> _Reference:
    said = _unresolved(text)
    things, kinds, places = _things(said), _kinds(said), _places(said)
    words = _plain_words(said)
    additive = _ADDITIVE.search(said) is not None
    selects = _BY_PLACE.search(said) is not None
    named: list[OpenContext] = []
    hinted: list[OpenContext] = []
    known_things: set[str] = set()
    for candidate in candidates:
        described = candidate.description
        its_things = _things(described)
        its_parts = _parts_named(things, its_things, said)  # "the trap under it": the sink's
        known_things |= its_things | its_parts
        its_kinds, its_places = _kinds(described), _places(described)
        shared_words = words & _plain_words(described)
        same_place = bool(places & its_places)
        # Naming a thing, the thing decides. Naming none: a plain shared word ("the plumber"),
        # or its place with its kind of symptom ("the kitchen leak"), or its place in a
        # selection ("the kitchen one").
        # "the oven door" is the oven's door, not the fridge's: naming a fixture of their own,
        # the words name the candidate by no part they share with it (a floor or a wall is
        # no fixture: "the cabinet floor" is still the sink's cabinet).
        shared_things = things & (its_things | its_parts)
        if any(not _is_surface(t) for t in things - its_things - _ALL_PARTS):
            shared_things -= _ALL_PARTS
        names = (
            bool(shared_things)
            if things
            else bool(shared_words)
            or (same_place and bool(kinds & its_kinds))
            or (same_place and selects)
        )
        contradicted = bool(places and its_places and not same_place) or not _kinds_agree(
            kinds, its_kinds
        )
        if names and not contradicted and not additive:
            named.append(candidate)
        # A kind of symptom hints only when both say one ("dripping" and "leaks"): a thing of
        # its own with a symptom the candidate's words have no kind for ("the latch won't lock"
        # with "the fridge stopped working") shares nothing but that something is wrong.
        shares_kind = (
            bool(kinds) and (bool(its_kinds) or not things) and _kinds_agree(kinds, its_kinds)
        )
        if names or shared_words or same_place or shares_kind:
            hinted.append(candidate)
    return _Reference(
        named=tuple(named),
        hinted=tuple(hinted),
        own_thing=bool(things - known_things),
        additive=additive,
    )


def _placed(text: str, work_orders: Sequence[OpenContext]) -> tuple[OpenContext, ...] | None:
    """Where one problem of several goes: (the work order) when it is named by id or clearly by
    its words, () when it is new (it names no open one and hints at none, or names a thing of
    its own as one more), None when it must be asked (a tie, or only hints)."""
    ids = _ids_named(text, work_orders)
    if ids:
        chosen = tuple(c for c in work_orders if c.context_id in ids)
        return chosen if len(chosen) == 1 else None
    ref = _refer(text, work_orders)
    if len(ref.named) == 1:
        return ref.named
    if ref.named or (ref.hinted and not (ref.additive and ref.own_thing)):
        return None
    return ()


def _pick(text: str, contexts: Sequence[OpenContext]) -> list[OpenContext]:
    """One context when ``text`` picks it (the only one, named by id, or by its words); else the
    tied candidates, for a clarify."""
    if len(contexts) <= 1:
        return list(contexts)
    named = _ids_named(text, contexts)
    if named:
        return [c for c in contexts if c.context_id in named]
    best = _best_by_words(text, contexts)
    return best if len(best) == 1 else list(contexts)


class OfflineBrain:
    """Deterministic samples from simple rules: the brain when there is no ANTHROPIC_API_KEY."""

    model_id = MODEL_ID

    @staticmethod
    def describe() -> str:
        return f"{_NAME} (deterministic rules, no model)"

    def __init__(self) -> None:
        self._last: tuple[tuple[object, ...], _Reading] | None = None

    def samples(
        self,
        package: Package,
        sender_role: SenderRole | PartyRole,
        open_contexts: Sequence[OpenContext],
        k: int = 5,
    ) -> list[BrainSample]:
        """``k`` deterministic samples for ``package``; targets only from ``open_contexts``."""
        if k < 1:
            raise ValueError("k must be at least 1")
        return [self._sample(package, sender_role, open_contexts, i, k) for i in range(k)]

    def sample(self, request: BrainRequest, index: int, k: int = 5) -> BrainSample:
        """Sample ``index`` of an adaptive draw (``maestro.brain.sample_drawing``)."""
        return self._sample(request.package, request.sender_role, request.contexts, index, k)

    def _sample(
        self,
        package: Package,
        sender_role: SenderRole | PartyRole,
        open_contexts: Sequence[OpenContext],
        index: int,
        k: int,
    ) -> BrainSample:
        reading = self._reading(package, sender_role, open_contexts)
        # A minority (2 of 5) doubts: short of the 0.8 a mutation needs, so consensus abstains.
        # The doubters are the odd samples, so an adaptive draw sees the doubt in its first two
        # samples and goes on drawing instead of stopping on a false agreement.
        doubters = min(k - 1, math.ceil(k * 0.4)) if reading.doubt is not None else 0
        doubts = reading.doubt is not None and index % 2 == 1 and index // 2 < doubters
        return BrainSample(
            index=index,
            actions=reading.doubt if doubts and reading.doubt else reading.plan,
            model=MODEL_ID,
            detail=f"{_NAME}: rule {reading.rule}",
        )

    def _reading(
        self,
        package: Package,
        sender_role: SenderRole | PartyRole,
        open_contexts: Sequence[OpenContext],
    ) -> _Reading:
        """The rules' reading, cached for the last package read (k samples read it once)."""
        key = (package, str(sender_role), tuple(open_contexts))
        last = self._last  # one read: another thread may replace it whole meanwhile
        if last is None or last[0] != key:
            last = (key, self._read(package, sender_role, open_contexts))
            self._last = last
        return last[1]

    def bound(self, request: BrainRequest) -> frozenset[str]:
        """The work orders the sender's words alone bind: what the rules' plan touches when they
        are sure of it (no doubt, no question), an existing one by id, a new one as ``"new"``.
        The second signal a mutation among several candidates needs beside the model's samples
        (``consensus.aggregate``'s ``corroborated``); it reads only the package and the
        contexts, never the samples. One work order named by its id ("work order 204", "#211",
        a call's "two-oh-four") is bound whatever the rules make of the rest."""
        ids = {c.wo_id for c in request.contexts if c.wo_id}
        # Here a bare number counts when it is one of the sender's own work orders' ids: the
        # samples must have named that work order too.
        said = _digits_spoken(request.package.text)
        named = {r.wo_id for r in wo_ref_spans(said)} & ids
        bound: set[str] = named if len(named) == 1 else set()
        reading = self._reading(request.package, request.sender_role, request.contexts)
        if reading.doubt is not None or any(isinstance(a, Clarify) for a in reading.plan):
            return frozenset(bound)
        for action in reading.plan:
            if isinstance(action, ManageExisting):
                bound.update(action.params.wo_ids)
            elif isinstance(action, CreateWo):
                bound.add("new")
            elif action.target_wo_id is not None:
                bound.add(action.target_wo_id)
        return frozenset(bound)

    def _read(
        self,
        package: Package,
        sender_role: SenderRole | PartyRole,
        open_contexts: Sequence[OpenContext],
    ) -> _Reading:
        """The rules, first match wins (see the module docstring)."""
        text = _clean(package.text)
        contexts = _targetable(open_contexts)

        hit = package_safety_hit(package)
        if hit is not None:
            return _Reading(
                "1-safety",
                (
                    Escalate(
                        confidence=_SURE,
                        why=_why(f"safety phrase ({hit.category})"),
                        evidence=truncate(hit.explained, 400),
                        params=EscalateParams(
                            reason="emergency", severity=hit.severity, hazard=hit.phrase[:200]
                        ),
                    ),
                ),
            )
        # The vendor did the work: a rating is the tenant's (or the PM's), never the vendor's.
        can_rate = str(sender_role) in _RATERS
        # The same words, one line per message: a new message starts a new clause.
        parts = _parts("\n".join(_clean(line) for line in package.text.split("\n")), text)
        if str(sender_role) == "vendor" and (
            done := _completion_report(text, contexts) or _vendor_news(text, contexts)
        ):
            return done
        if str(sender_role) == "pm":
            return (
                _pm_command(text, contexts)
                or _availability_answer(text, parts, contexts, True)
                or _rating_answer(text, parts, contexts, True)
                or _pm_reply("no PM command matched", PM_HELP, text)
            )
        found = (
            _command(text, parts, contexts)
            or (_completion_answer(text, parts, contexts) if str(sender_role) == "tenant" else None)
            or _availability_answer(text, parts, contexts, can_rate)
            or _rating_answer(text, parts, contexts, can_rate)
            or _by_words(text, parts, contexts)
        )
        if found is None and (gloss := english_gloss(package.text)) is not None:
            # A Spanish text the rules read nothing in: read again in its English gloss
            # ("la secadora no funciona" → "the dryer is not working"), problems and their
            # work orders only; a command or a rating was read in its own words above.
            glossed = _parts("\n".join(_clean(line) for line in gloss.split("\n")), gloss)
            found = _by_words(_clean(gloss), glossed, contexts)
            if found is not None:
                # A note goes on in the tenant's own words, never in the gloss.
                found = replace(found, plan=tuple(_own_words(a, text) for a in found.plan))
        return found or _Reading(
            "6-assistant",
            (ContinueWithAssistant(confidence=_FAIRLY_SURE, why=_why("no rule matched")),),
        )


def _own_words(action: Action, text: str) -> Action:
    """A relay read in a gloss, carrying the sender's own words instead."""
    if isinstance(action, RelayToOpenWo):
        return action.model_copy(
            update={
                "evidence": truncate(text, 400),
                "params": RelayToOpenWoParams(note=truncate(text, 1000)),
            }
        )
    return action


def _targetable(open_contexts: Sequence[OpenContext]) -> list[OpenContext]:
    """One per id, sorted by id (input order must not matter), only ids an action can carry."""
    by_id: dict[str, OpenContext] = {}
    for context in open_contexts:
        cid = context.context_id
        if len(cid) <= _MAX_TARGET_LEN and not cid.startswith(NEW_WO_PREFIX) and cid.strip():
            by_id.setdefault(cid, context)
    return [by_id[cid] for cid in sorted(by_id)]


def _work_orders(contexts: Sequence[OpenContext]) -> list[OpenContext]:
    """The work orders words can relay to, cancel or reschedule: open ones. A completed one is
    a context only while its rating request is out (rule 3), never a place for a new note."""
    return [
        c
        for c in contexts
        if c.kind is ContextKind.WORK_ORDER
        and c.wo_status not in TERMINAL_STATUSES
        and not c.rating_requested  # a rating request is out on a finished one only
    ]


def _relay(target: OpenContext, note: str, why: str, confidence: float = _FAIRLY_SURE) -> Action:
    return RelayToOpenWo(
        target_wo_id=target.context_id,
        confidence=confidence,
        why=_why(why),
        evidence=truncate(note, 400),
        params=RelayToOpenWoParams(note=truncate(note, 1000)),
    )


def _command(text: str, parts: _Parts, contexts: Sequence[OpenContext]) -> _Reading | None:
    """Rule 7: "cancel the kitchen one", "reschedule WO-204 to friday", "what do I have open":
    the manage lane's work (a cancel or a reschedule is held until the sender says YES). Only
    the sender's open work orders are named; a cancel that fits several equally asks. Problems
    said alongside are relayed or created, and their words do not steer the command."""
    cancel = _CANCEL.search(text) is not None
    reschedule = _RESCHEDULE.search(text) is not None
    listing = not (cancel or reschedule) and _LIST.search(text) is not None
    if not (cancel or reschedule or listing):
        return None
    if _NEGATED_COMMAND.search(text):
        return None  # "don't cancel it": more about it, for the other rules
    side = _Parts(
        tuple(p for p in parts.problems if not any(r.search(p.text) for r in _COMMANDS)),
        parts.rest,
        offered="",  # the time words are the reschedule's, not a visit for a new one
    )
    said = text
    for part in side.problems:
        said = said.replace(part.text, " ")  # the command's own words, without the problems
    if listing:
        relays, creates = _side_problems(side, contexts)
        command: Action = ManageExisting(
            confidence=_SURE,
            why=_why("asked what is open"),
            evidence=truncate(text, 400),
            params=ManageExistingParams(operation="list", request=truncate(text, 300)),
        )
        return _Reading("7-manage", (*relays, *creates, command))
    # "cancel friday, reschedule to monday" keeps the work order: a reschedule.
    operation: Literal["cancel", "reschedule"] = "reschedule" if reschedule else "cancel"
    # A finished work order waiting for its rating can be neither cancelled nor moved.
    open_wos = [c for c in _work_orders(contexts) if not c.rating_requested]
    call = DeferredCall(operation=operation, request=truncate(text, 300))
    chosen = _commanded(said, open_wos, call) if open_wos else []
    if isinstance(chosen, Clarify) and (gloss := english_gloss(said)) is not None:
        # "ya no necesito lo de la ventana, cancélelo": the job named in Spanish (held for a
        # YES that names it, like any command).
        in_gloss = _commanded(gloss, open_wos, call)
        chosen = in_gloss if in_gloss and not isinstance(in_gloss, Clarify) else chosen
    if isinstance(chosen, Clarify):
        return _Reading("7-manage", (chosen,))
    ids = tuple(c.context_id for c in chosen)
    relays, creates = _side_problems(side, contexts, answered=frozenset(ids))
    if not ids:
        command = ContinueWithAssistant(
            confidence=_FAIRLY_SURE,
            why=_why(f"asked to {operation}; nothing open"),
            evidence=truncate(text, 400),
            params=ContinueWithAssistantParams(
                reply_hint=say(NOTHING_OPEN_TO[operation], language_for(None, text))
            ),
        )
    else:
        command = ManageExisting(
            confidence=_SURE if _ids_named(said, open_wos) else _FAIRLY_SURE,
            why=_why(f"asked to {operation} {', '.join(ids)}"),
            evidence=truncate(text, 400),
            params=ManageExistingParams(
                operation=operation, wo_ids=ids[:20], request=truncate(text, 300)
            ),
        )
    return _Reading("7-manage", (*relays, *creates, command))


def _commanded(
    text: str, open_wos: Sequence[OpenContext], call: DeferredCall | None
) -> list[OpenContext] | Clarify:
    """The open work orders a command names (by id, "all"/"both", "all but the fan one", the
    words of each), or the question to ask when that is not one clear set: it carries the
    command, so the answer runs it on what it picks."""
    named = _ids_named(text, open_wos)
    if named and not _ALL_BUT.search(text):
        return [c for c in open_wos if c.context_id in named]
    if _ID_LIKE.search(text) and not named:
        return _clarify(open_wos, "the id named is not one of the sender's open ones", text, call)
    # Several named at once, or all but some: read as an answer to "which ones?" would be, but
    # never by number: the sender saw no numbered list ("cancel 2 of them" counts).
    rest = _COMMAND_LEAD.sub("", text)
    several = (
        read_answer(
            rest,
            [c.context_id for c in open_wos],
            [f"{c.context_id}: {c.description}" for c in open_wos],
        )
        if not _COUNTING.search(_ID_LIKE.sub(" ", rest))
        else None
    )
    if several and several.kind == "pick" and (len(several.ids) > 1 or _ALL_BUT.search(text)):
        return [c for c in open_wos if c.context_id in several.ids]
    best = _best_by_stems(_content_stems(text) - _COMMAND_STEMS, open_wos)
    if _EVERY.search(text):
        chosen = best or list(open_wos)
        if _BOTH.search(text) and len(chosen) != 2:
            return _clarify(chosen, '"both" of how many?', text, call)
        return chosen
    if len(best) == 1:
        return best
    if not best and len(open_wos) == 1:
        return list(open_wos)  # "please cancel it" with one open: that one
    return _clarify(best or open_wos, "which one to change?", text, call)


def _availability_answer(
    text: str, parts: _Parts, contexts: Sequence[OpenContext], can_rate: bool
) -> _Reading | None:
    """Rule 2: a time expression while an availability question is open (I7: not a rating).
    Problems said with it are relayed or created too."""
    asking = [c for c in contexts if c.awaiting == "availability"]
    # Time words inside a problem ("leaking since monday") say when it began, not when to come.
    availability = _availability(parts.rest) if asking else None
    if not asking and can_rate and not parts.problems:
        # Unasked, a time the tenant offers ("I'm home tomorrow after 2") with one work order
        # open is their availability for it: proposed to the vendor, never a booked visit.
        open_wos = [c for c in _work_orders(contexts) if not c.rating_requested]
        offered = _offered_availability(parts) if len(open_wos) == 1 else None
        if offered is not None:
            asking, availability = open_wos, offered
    if availability is None:
        return None
    targets = _pick(text, asking)
    if len(targets) > 1:
        return _Reading(
            "2-availability", (_clarify(targets, "availability for which visit?", text),)
        )
    (target,) = targets
    # "the fridge doesn't work" is no "monday doesn't work": read the negation outside problems.
    negated = _NEGATED_AVAILABILITY.search(parts.rest) is not None
    visit = ScheduleVisit(
        target_wo_id=target.context_id,
        confidence=_UNSURE if negated else _SURE,
        why=_why(f"answer to the availability question of {target.context_id}"),
        evidence=truncate(availability, 400),
        params=ScheduleVisitParams(mode="propose", availability=availability),
    )
    answers: list[Action] = [visit]
    rating = _rating(text)
    rated = [c for c in contexts if c.rating_requested and c.context_id != target.context_id]
    if can_rate and rating is not None and rating.strong and len(rated) == 1:
        answers.append(_record(rated[0], rating, text))  # "5 stars! tuesday works": both
    relays, creates = _side_problems(
        parts, contexts, answered=frozenset(a.target_wo_id for a in answers if a.target_wo_id)
    )
    unsure = ContinueWithAssistant(confidence=_UNSURE, why=_why("availability unclear"))
    # "not monday": the time words may be when they are *not* free; some samples doubt it.
    return _Reading(
        "2-availability",
        (*relays, *creates, *answers),
        (*relays, *creates, unsure) if negated else None,
    )


def _record(target: OpenContext, rating: _Rating, text: str) -> Action:
    return RecordRating(
        target_wo_id=target.context_id,
        confidence=_SURE if rating.strong else _FAIRLY_SURE,
        why=_why(f"answer to the rating request of {target.context_id}"),
        evidence=truncate(text, 400),
        params=RecordRatingParams(
            stars=rating.stars, comment=truncate(text, 500) if len(text.split()) > 2 else None
        ),
    )


def _rating_answer(
    text: str, parts: _Parts, contexts: Sequence[OpenContext], can_rate: bool
) -> _Reading | None:
    """Rule 3: a rating while a rating request is open; a bare digit competing with an
    availability question is ambiguous (I7). Problems said with it are relayed or created too."""
    rated = [c for c in contexts if c.rating_requested]
    rating = _rating(text) if rated and can_rate else None
    if rating is None or (not rating.strong and parts.problems):
        return None  # "2 lights are out" counts lights: a bare digit in a problem is no rating
    asking = [c for c in contexts if c.awaiting == "availability" and c not in rated]
    if asking and not rating.strong:
        both = sorted([*rated, *asking], key=lambda c: c.context_id)
        return _Reading("3-rating", (_clarify(both, "a bare number: a rating or a time?", text),))
    targets = _pick(text, rated)
    if len(targets) > 1:
        rate = DeferredCall(operation="rate", stars=rating.stars, request=truncate(text, 300))
        return _Reading(
            "3-rating", (_clarify(targets, "a rating for which work order?", text, rate),)
        )
    (target,) = targets
    relays, creates = _side_problems(parts, contexts, answered=frozenset({target.context_id}))
    visits = _offered_visits(creates, parts, room=_MAX_PLAN - len(relays) - len(creates) - 1)
    return _Reading("3-rating", (*relays, *creates, *visits, _record(target, rating, text)))


def _by_words(text: str, parts: _Parts, contexts: Sequence[OpenContext]) -> _Reading | None:
    """Rule 5: relay to the one work order the words clearly name, ask on a tie or when they
    only hint at some (I3, I4), create when they name a thing of their own; several problems in
    the package, each on its own."""
    if len(parts.problems) > 1:
        return _several_problems(parts, contexts)
    work_orders = _work_orders(contexts)
    part = parts.problems[0] if parts.problems else None
    named = _ids_named(text, work_orders)
    ref = _refer(text, work_orders)
    best = [c for c in work_orders if c.context_id in named] if named else list(ref.named)
    if len(best) > 1:
        return _Reading("5-match", (_clarify(best, "the words name several work orders", text),))
    if not best and len(work_orders) == 1 and _more_of_the_same(text, work_orders[0]):
        # "it's leaking again", "there's standing water in it": something is wrong, no thing
        # is named, and the sender has one open work order: the words are about that one.
        return _Reading("5-detail", (_relay(work_orders[0], text, "a detail, no new thing"),))
    if not best and part is None and len(work_orders) == 1 and _ASKS_HOW_IT_GOES.search(text):
        # "when is the plumber coming?" with one work order open: a question about that one.
        best = work_orders
    if len(best) == 1:
        (target,) = best
        if part is None and "?" in text:
            # A question about it is for the assistant to answer, not a note for the vendor.
            return _Reading(
                "5-question",
                (
                    ContinueWithAssistant(
                        target_wo_id=target.context_id,
                        confidence=_FAIRLY_SURE,
                        why=_why(f"a question about {target.context_id}"),
                        evidence=truncate(text, 400),
                        # No reply written: the lane answers from the stored WO (its status).
                        params=ContinueWithAssistantParams(),
                    ),
                ),
            )
        return _Reading("5-match", (_relay(target, text, f"about {target.context_id}"),))
    if part is None:
        # No problem stated: ask only when the words hint at several; else the assistant.
        if len(ref.hinted) > 1:
            why = "the words hint at several work orders, name none"
            return _Reading("5-match", (_clarify(ref.hinted, why, text),))
        return None
    if ref.hinted and not (ref.additive and ref.own_thing):
        # A problem that hints at an open work order (its room, its kind of symptom, "again")
        # without naming it: maybe more of it, maybe new. Ask; a wrong relay mutates a WO (I3).
        why = "a problem that hints at open work orders but names none"
        return _Reading("5-match", (_clarify(ref.hinted, why, text),))
    if work_orders and not ref.own_thing:
        # Something is wrong, no thing is named, and several are open: which one?
        why = "a problem naming no thing, several open"
        return _Reading("5-match", (_clarify(work_orders, why, text),))
    create = _create(part.text, part.problem)
    if create is None:
        return None
    return _Reading("5-create", (create, *_offered_visits([create], parts)))


# A question about how a request is going: only these, so "what's your name?" stays general.
_ASKS_HOW_IT_GOES = re.compile(
    r"\b(?:when|update|news|status|coming|eta|progress|scheduled|appointment|visit|"
    r"anyone|someone|heard?)\b.*\?",
    re.IGNORECASE,
)


def _more_of_the_same(text: str, work_order: OpenContext) -> bool:
    """``text`` says something is wrong without naming a thing or another room, asks
    nothing, says it is not one more ("too"), and its symptom is not of another kind than the
    one open work order's: a detail for that work order, not a new problem. What it says is
    fine now ("the bedroom one is fine, …") is not part of what is wrong."""
    if "?" in text or _ADDITIVE.search(text):
        return False
    said = _unresolved(text)
    places, its_places = _places(said), _places(work_order.description)
    if places and its_places and not places <= its_places:
        return False  # a room the work order does not say: maybe a problem of its own
    if not _kinds_agree(_kinds(said), _kinds(work_order.description)):
        return False  # "now it's making a loud noise" is no detail of a leak
    problem = _problem(said)
    if problem is not None:
        return not problem.things
    return _SYMPTOM.search(said) is not None


def _several_problems(parts: _Parts, contexts: Sequence[OpenContext]) -> _Reading:
    """Rule 5, several problems: each relays to the open work order its words clearly name or
    becomes a new one; a tie or a mere hint on any of them asks (I3, I4)."""
    work_orders = _work_orders(contexts)
    targets: list[OpenContext | None] = []
    for part in parts.problems:
        placed = _placed(part.text, work_orders)
        if placed is None:
            candidates = _refer(part.text, work_orders).hinted or tuple(work_orders)
            why = "the words of one problem fit several work orders or name none"
            return _Reading("5-several", (_clarify(candidates, why, part.text),))
        targets.append(placed[0] if placed else None)
    return _Reading("5-several", _several_plan(parts, targets))


def _several_plan(parts: _Parts, targets: Sequence[OpenContext | None]) -> tuple[Action, ...]:
    """The relays and creates of the problems, and a visit for each new one when the sender
    offered a time."""
    relays, creates = _relays_and_creates(parts.problems, targets)
    visits = _offered_visits(creates, parts, room=_MAX_PLAN - len(relays) - len(creates))
    return (*relays, *creates, *visits)


def _relays_and_creates(
    parts: Sequence[_Part], targets: Sequence[OpenContext | None]
) -> tuple[list[Action], list[CreateWo]]:
    """One relay per matched work order (its parts joined, in the order said), one create per
    new problem (new:1, new:2…)."""
    notes: dict[str, list[str]] = {}
    by_id: dict[str, OpenContext] = {}
    creates: list[CreateWo] = []
    for part, target in zip(parts, targets, strict=True):
        if target is None:
            if (create := _create(part.text, part.problem, len(creates) + 1)) is not None:
                creates.append(create)
        else:
            notes.setdefault(target.context_id, []).append(part.text)
            by_id[target.context_id] = target
    relays = [
        _relay(by_id[wo_id], "; ".join(said), f"about {wo_id}") for wo_id, said in notes.items()
    ]
    return relays, creates


def _side_problems(
    parts: _Parts, contexts: Sequence[OpenContext], answered: frozenset[str] = frozenset()
) -> tuple[list[Action], list[CreateWo]]:
    """The problems said alongside an answer or a command: a relay to the one open work order
    a problem clearly names (not one the answer is about already), a create when it is new. A
    tie or a mere hint is left out: the answer still goes through, the assistant can ask later."""
    # The context answered is a candidate too: more about it stays in the answer.
    work_orders = [
        *_work_orders(contexts),
        *(c for c in contexts if c.context_id in answered and c not in _work_orders(contexts)),
    ]
    targets: list[OpenContext | None] = []
    kept: list[_Part] = []
    for part in parts.problems:
        placed = _placed(part.text, work_orders)
        if placed == ():
            kept.append(part)
            targets.append(None)
        elif placed is not None and placed[0].context_id not in answered:
            kept.append(part)
            targets.append(placed[0])
    return _relays_and_creates(kept, targets)


def _offered_visits(
    creates: Sequence[CreateWo], parts: _Parts, room: int = _MAX_PLAN
) -> list[ScheduleVisit]:
    """A visit proposed for each new work order, when the sender offered a time unasked; none
    when they would not all fit in ``room`` actions (the assistant asks for the time later)."""
    availability = _offered_availability(parts) if creates else None
    if availability is None or len(creates) > room:
        return []
    return [
        ScheduleVisit(
            target_wo_id=create.params.ref,
            confidence=_FAIRLY_SURE,
            why=_why(f"a time offered for the new work order {create.params.ref}"),
            evidence=truncate(availability, 400),
            params=ScheduleVisitParams(mode="propose", availability=availability),
        )
        for create in creates
    ]


_GREETING = re.compile(
    r"^\s*(?:(?:hi|hello|hey|good\s+(?:morning|afternoon|evening))(?:\s+there)?[\s,.!:-]+)+",
    re.IGNORECASE,
)
# "it's Maria in 3B, …" / "this is Maria from 3B: …": who is calling, not the problem (a call
# transcript often starts so). Only a short introduction followed by more words is dropped.
_INTRODUCTION = re.compile(
    r"^\s*(?:"
    r"(?:it'?s|it\s+is|this\s+is)\s+[a-z'’-]+(?:\s+[a-z'’-]+)?\s+(?:in|from|at)\s+"
    r"(?:unit\s+|apt\.?\s+|apartment\s+)?#?\w*\d\w*"
    r"|my\s+name\s+is\s+[a-z'’-]+(?:\s+[a-z'’-]+)?"
    r"(?:\s+(?:in|from|at)\s+(?:unit\s+|apt\.?\s+|apartment\s+)?#?\w*\d\w*)?"
    r")\s*[,.:;!-]+\s*(?=\S)",
    re.IGNORECASE,
)


def _create(text: str, problem: _Problem, number: int = 1) -> CreateWo | None:
    # A WO's summary is the problem, not the greeting that came with it.
    summary = truncate(_INTRODUCTION.sub("", _GREETING.sub("", text)).strip(), 200)
    if len(summary) < 3:
        return None
    room = _ROOM.search(text)
    return CreateWo(
        confidence=_FAIRLY_SURE,
        why=_why(f"a new {problem.category} problem; no open work order matches"),
        evidence=truncate(text, 400),
        params=CreateWoParams(
            ref=f"{NEW_WO_PREFIX}{number}",
            summary=summary,
            category=problem.category,
            location=room.group(0).lower() if room else None,
        ),
    )


# --- a PM's commands (rule 8) ------------------------------------------------------------------

_PM_NOTE = re.compile(
    r"^\W*(?:(?:pls|please|can\s+you|could\s+you)\s+)?"
    r"(?:add\s+(?:a\s+|this\s+)?note|make\s+a\s+note|note(?:\s+down)?|jot(?:\s+down)?|log|fyi)"
    r"(?:\s+(?:to|on|for|in))?\b|\bnote\s*:|\b(?:add\s+(?:a\s+)?)?note\s+(?:on|to|for|in)\b",
    re.IGNORECASE,
)
_PM_STATUS = re.compile(
    r"\b(?:status|update|updates|news|progress|eta|any\s+word|check\s+on|how'?s|how\s+is"
    r"|where\s+(?:are\s+we|is|do\s+we\s+stand)|what'?s\s+(?:up|happening|going\s+on)"
    r"|whats\s+(?:up|happening|going\s+on))\b",
    re.IGNORECASE,
)
_PM_LIST = re.compile(
    r"\b(?:open|outstanding|pending|list|jobs?|work\s*orders?|wos|tickets?|requests?)\b",
    re.IGNORECASE,
)
_NOTE_LEAD = re.compile(r"^[\s:;,.\-–—]+|^(?:note|fyi)\s*[:\-–—]?\s*", re.IGNORECASE)
PM_HELP = say(PM_HELP_TEXT, "en")


def _pm_command(text: str, contexts: Sequence[OpenContext]) -> _Reading | None:
    """Rule 8: a PM's note, cancel or reschedule, status or listing (module docstring); None
    when it is none of them (a rating is read next, as for a tenant)."""
    wos = [c for c in contexts if c.kind is ContextKind.WORK_ORDER]
    ids = {c.context_id.upper(): c.context_id for c in wos}
    refs = wo_ref_spans(text)
    commanding = any(
        r.search(text) for r in (_CANCEL, _RESCHEDULE, _PM_NOTE, _PM_STATUS, _PM_CLOSE)
    )
    # A bare number is an id when it is one of theirs or a command names it ("pls cancel 204");
    # else it may be a unit or a count ("the tenant in 305"). "WO-9" and "#9" always are.
    named = [r for r in refs if r.wo_id in ids or not r.bare or commanding]
    # A note is on the first work order named; any number after it is the note's own words.
    note = _note_body(text, named) if named and _PM_NOTE.search(text) else ""
    if note:
        named = named[:1]
    # Only an open one is acted on; one they don't manage, or a closed one, is refused in words
    # (never proposed as a target: a brain names only the ids it was given).
    open_ids = {c.context_id.upper() for c in _work_orders(wos) if not c.rating_requested}
    foreign = tuple(dict.fromkeys(r.wo_id for r in named if r.wo_id not in ids))
    evidence = truncate(text, 400)
    if foreign or (
        named
        and any(r.search(text) for r in (_CANCEL, _RESCHEDULE, _PM_NOTE, _PM_CLOSE))
        and any(r.wo_id not in open_ids for r in named)
    ):
        refused = foreign or tuple(r.wo_id for r in named if r.wo_id not in open_ids)
        return _pm_reply(
            f"a PM named {', '.join(refused)}: not an open work order of theirs",
            refusal_for_pm(refused),
            text,
        )
    targets = tuple(dict.fromkeys(ids[r.wo_id] for r in named))[:20]
    if note:
        return _Reading(
            "8-pm-note",
            (
                RelayToOpenWo(
                    target_wo_id=targets[0],
                    confidence=_SURE,
                    why=_why(f"a PM's note on {targets[0]}"),
                    evidence=evidence,
                    params=RelayToOpenWoParams(note=truncate(note, 1000)),
                ),
            ),
        )
    cancel = _CANCEL.search(text) is not None and not _NEGATED_COMMAND.search(text)
    reschedule = _RESCHEDULE.search(text) is not None and not _NEGATED_COMMAND.search(text)
    # "close WO-12", "mark 12 complete": held until the PM's YES like a cancel (not a question
    # "is WO-12 done?", not "don't close it").
    close = _pm_closes(text)
    if cancel or reschedule or close:
        operation: Literal["cancel", "reschedule", "complete"] = (
            "reschedule" if reschedule else "cancel" if cancel else "complete"
        )
        open_wos = [c for c in _work_orders(wos) if not c.rating_requested]
        wo_ids = targets
        if not targets:
            # Asked about, the command is kept with the question: the answer's picks are held
            # for the PM's YES, a close as a cancel.
            call = DeferredCall(operation=operation, request=truncate(text, 300))
            chosen = _commanded(text, open_wos, call) if open_wos else []
            if isinstance(chosen, Clarify):
                return _Reading("8-pm-manage", (chosen,))
            wo_ids = tuple(c.context_id for c in chosen)
        if not wo_ids:
            return _pm_reply(f"asked to {operation}; no work order named", PM_HELP, text)
        return _Reading(
            "8-pm-manage",
            (
                ManageExisting(
                    confidence=_SURE,
                    why=_why(f"a PM asked to {operation} {', '.join(wo_ids)}"),
                    evidence=evidence,
                    params=ManageExistingParams(
                        operation=operation, wo_ids=wo_ids, request=truncate(text, 300)
                    ),
                ),
            ),
        )
    if targets:
        # "status of WO-204", "whats up with wo 204", a bare "WO-204?": where it stands, from
        # the store (the lane writes it), one reply for the first named.
        return _Reading(
            "8-pm-status",
            (
                ContinueWithAssistant(
                    target_wo_id=targets[0],
                    confidence=_SURE,
                    why=_why(f"a PM asked where {targets[0]} stands"),
                    evidence=evidence,
                ),
            ),
        )
    status = _PM_STATUS.search(text) is not None
    best = _best_by_stems(_content_stems(text) - _COMMAND_STEMS, wos) if status else []
    if len(best) == 1:
        # "how's the heater going?": the one of their work orders its words name.
        return _Reading(
            "8-pm-status",
            (
                ContinueWithAssistant(
                    target_wo_id=best[0].context_id,
                    confidence=_FAIRLY_SURE,
                    why=_why(f"a PM asked where {best[0].context_id} stands, by its words"),
                    evidence=evidence,
                ),
            ),
        )
    if _PM_LIST.search(text) or status:
        return _Reading(
            "8-pm-list",
            (
                ManageExisting(
                    confidence=_SURE,
                    why=_why("a PM asked what is open"),
                    evidence=evidence,
                    params=ManageExistingParams(operation="list", request=truncate(text, 300)),
                ),
            ),
        )
    about = _best_by_stems(_content_stems(text) - _COMMAND_STEMS, _work_orders(wos))
    if len(about) == 1 and _availability(text) is None and _rating(text) is None:
        # "please prioritise the ceiling one": words about exactly one of their open work orders
        # go on its record as the PM's note (never relayed); several or none → not a note.
        return _Reading(
            "8-pm-note",
            (_relay(about[0], text, f"a PM's words about {about[0].context_id}"),),
        )
    return None


_PM_CLOSE = re.compile(
    r"\b(?:close(?:\s+out)?|mark(?:\s+\S+){0,3}?\s+(?:as\s+)?(?:complete|completed|done|"
    r"finished|closed|resolved)|complete)\b",
    re.IGNORECASE,
)
_NEGATED_CLOSE = re.compile(
    r"\b(?:don'?t|do\s+not|not|never|isn'?t|aren'?t|no\s+need\s+to)\s+(?:\w+\s+)?"
    r"(?:close|mark|complete|done|finished|resolved)",
    re.IGNORECASE,
)


def _pm_closes(text: str) -> bool:
    """A PM's close: "close WO-12", "mark 12 complete", or a job reported done in the words
    vendors use ("WO-12 is all wrapped up"); not a question, not "don't close it"."""
    if "?" in text or _NEGATED_CLOSE.search(text):
        return False
    return _PM_CLOSE.search(text) is not None or reports_done(text)


def _pm_reply(why: str, reply: str, text: str) -> _Reading:
    return _Reading(
        "8-pm-help",
        (
            ContinueWithAssistant(
                confidence=_FAIRLY_SURE,
                why=_why(why),
                evidence=truncate(text, 400),
                params=ContinueWithAssistantParams(reply_hint=reply),
            ),
        ),
    )


def _note_body(text: str, named: Sequence[WoRef]) -> str:
    """The note's words: what follows the id ("note WO-204: vendor has the key"), else what
    precedes it without the command ("vendor has the key, note on 204")."""
    after = text[named[0].end :]
    while True:
        stripped = _NOTE_LEAD.sub("", after, count=1)
        if stripped == after:
            break
        after = stripped
    if after.strip():
        return after.strip()
    before = _PM_NOTE.sub("", text[: named[0].start], count=1)
    return re.sub(r"\s*\b(?:on|to|for|in)\s*$", "", before, flags=re.IGNORECASE).strip(" :,-–—")


# --- completion from the field (docs/completion.md) ---------------------------------------------


# A vendor's news about a job in hand: a part, another trip, a delay, no way in (review of #20:
# "gonna need another trip, part on order" was saved and acted on by nothing; the tenant and
# the job's record never heard of it).
_VENDOR_NEWS = re.compile(
    r"\b(?:parts?|ordered|ordering|on\s+order|back\s*order\w*|another\s+(?:trip|visit)|"
    r"come\s+back|be\s+back|coming\s+back|running\s+late|delayed|stuck\s+in\s+traffic|"
    r"on\s+my\s+way|omw|(?:wasn'?t|not|nobody|no\s+one)\s+(?:\w+\s+)?home|left\s+a\s+(?:card|note)|"
    r"couldn'?t\s+get\s+in|no\s+access|locked\s+out|waiting\s+(?:on|for)|needs?\s+(?:a\s+)?new|"
    r"replace(?:ment)?)\b",
    re.IGNORECASE,
)


def _jobs_meant(
    text: str, jobs: Sequence[OpenContext], ignored: frozenset[str]
) -> list[OpenContext]:
    """The jobs a vendor's text is about: those it names by id, else their only one, else the
    best match of its words (``ignored`` left out: the words of the report itself)."""
    named = _ids_named(text, jobs)
    if named:
        return [c for c in jobs if c.context_id in named]
    if len(jobs) == 1:
        return list(jobs)
    return _best_by_stems(_content_stems(text) - ignored, jobs)


def _vendor_news(text: str, contexts: Sequence[OpenContext]) -> _Reading | None:
    """A vendor's progress news on the one job of theirs it is about (their only job in hand,
    or the one its words name): relayed to that job, so its record and its tenant have it. A
    question is not news: it is left for the assistant."""
    if "?" in text or _VENDOR_NEWS.search(text) is None:
        return None
    jobs = [
        c for c in _work_orders(contexts) if c.relation == "vendor" and c.wo_status in REPORTABLE
    ]
    chosen = _jobs_meant(text, jobs, _COMMAND_STEMS)
    if len(chosen) != 1:
        return None
    (job,) = chosen
    return _Reading("9-vendor-news", (_relay(job, text, f"the vendor's news on {job.context_id}"),))


def _completion_report(text: str, contexts: Sequence[OpenContext]) -> _Reading | None:
    """A vendor's "it's done" on the one job of theirs it is about: their only job in hand,
    the one named (by id or by its words), else a question naming their jobs. None when it is
    no completion report, or they hold no job."""
    if not reports_done(text):
        return None
    theirs = [c for c in _work_orders(contexts) if c.relation != "tenant"]
    working = [c for c in theirs if c.wo_status in REPORTABLE]
    # A job reported already is asked about again only when no other is in hand.
    jobs = working or [c for c in theirs if c.wo_status is WorkOrderStatus.COMPLETION_REPORTED]
    if not jobs:
        return None
    named = _ids_named(text, jobs)
    chosen = _jobs_meant(text, jobs, _COMMAND_STEMS | _DONE_STEMS)
    # Several named ("WO-12 and WO-14 are done"): each is reported. None: the lane asks which,
    # listing their jobs, with the report kept for the answer (I4).
    ids = tuple(c.context_id for c in chosen) if named or len(chosen) == 1 else ()
    return _Reading(
        "9-done" if ids else "9-which-done",
        (
            ManageExisting(
                confidence=_SURE,
                why=_why(
                    f"the vendor reports {', '.join(ids)} finished"
                    if ids
                    else "a vendor's completion report names none of their jobs"
                ),
                evidence=truncate(text, 400),
                params=ManageExistingParams(
                    operation="complete", wo_ids=ids, request=truncate(text, 300)
                ),
            ),
        ),
    )


# Words of being done: they say nothing about which job.
_DONE_STEMS = frozenset(
    _stem(w)
    for w in (
        "done", "finished", "fixed", "complete", "completed", "replaced", "repaired", "wrapped",
        "set", "good", "installed", "job", "work", "listo", "terminado", "quedo",
    )
)  # fmt: skip


_REPLY_LEAD = re.compile(r"^\W*(?:no|nope|nah|not|nop|todavia|todavía|sigue)\b", re.IGNORECASE)


def _disputes_beside(rest: str, described: frozenset[str]) -> bool:
    """Whether what is left beside a new problem disputes the reported job: it says something
    is wrong and either opens as an answer ("no, still drips") or names the job's thing ("the
    faucet still sprays"). A bare "won't start" left over from "the dryer is broken and won't
    start" goes on the dryer's clause; it says nothing of the reported job."""
    if not disputes_done(rest):
        return False
    return bool(_REPLY_LEAD.match(rest) or _content_stems(rest) & described)


def _completion_answer(
    text: str, parts: _Parts, contexts: Sequence[OpenContext]
) -> _Reading | None:
    """The tenant's answer about a job its vendor reported finished: a plain yes completes it
    (manage_existing ``complete``); something still wrong goes back to the vendor as a note
    on it (relay_to_open_wo reopens it). A new problem with a thing of its own is not an
    answer: the other rules read it."""
    reported = [
        c
        for c in _work_orders(contexts)
        if c.wo_status is WorkOrderStatus.COMPLETION_REPORTED and c.relation != "vendor"
    ]
    if not reported:
        return None
    side: tuple[Action, ...] = ()
    whole = text  # what a complaint passes on: the tenant's whole message
    described_any = frozenset().union(*(_content_stems(c.description) for c in reported))
    if any(p.problem.things and not p.problem.things & described_any for p in parts.problems):
        # "yes thanks! btw the bedroom blinds are broken": the yes is said beside a new
        # problem. What is left once the problems are out answers the question; the problems
        # go their own ways (review of #20: the yes was lost, the job stayed reported).
        rest = " ".join(parts.rest.replace(" . ", " ").split())
        if not rest or not (confirms_done(rest) or _disputes_beside(rest, described_any)):
            return None  # "my fridge is broken": a new problem, not this job's answer
        relays, creates = _side_problems(parts, contexts)
        side, whole, text = (*relays, *creates), text, rest
    confirms = confirms_done(text)
    if not confirms and not disputes_done(text):
        return None
    targets = _pick(text, reported)
    if len(targets) > 1:
        return _Reading("9-which", (_clarify(targets, "which finished job?", text),))
    (target,) = targets
    described = _content_stems(target.description)
    if not side and any(
        p.problem.things and not p.problem.things & described for p in parts.problems
    ):
        return None  # "my fridge is broken": a new problem, not this job's
    if confirms:
        return _Reading(
            "9-confirmed",
            (
                *side,
                ManageExisting(
                    confidence=_SURE,
                    why=_why(f"the tenant confirms {target.context_id} is finished"),
                    evidence=truncate(text, 400),
                    params=ManageExistingParams(
                        operation="complete",
                        wo_ids=(target.context_id,),
                        request=truncate(text, 300),
                    ),
                ),
            ),
        )
    return _Reading(
        "9-not-finished",
        (
            *side,
            _relay(target, whole, f"the tenant says {target.context_id} is not finished", _SURE),
        ),
    )
