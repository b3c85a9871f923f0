"""The ideas a tenant's words stand for, for the safety floor's learned half.

The model (``safety_model``) reads n-grams: it knows "dizzy" from its training texts, but not
"woozy" unless some text used it, and it cannot tell that "the baby is sleepy" and "the heater
ran all night" make one emergency together when neither does alone. So each word also stands for
the ideas listed here ("woozy", "lightheaded", "queasy": *unwell*; "furnace", "generator",
"boiler": *combustion*), and the model gets one feature per idea present and one per pair of
ideas present anywhere in the text (*unwell* with *combustion*; *stranger* with *indoors*;
*cold* with *vulnerable*). The weights of those features are learned like any other: the lists
say what is alike, never what is an emergency.

A word matches an idea when it is listed (``EXACT``), or when it begins with a listed stem of
four letters or more (``STEMS``: "shiver" covers "shivering", "shivers"); a listed pair of
words matches two neighbouring words. Words are the model's tokens (lower case, apostrophes
dropped, digits as ``0``), with letters repeated three times or more read once ("gasss").
"""

from __future__ import annotations

import re
import zlib
from functools import lru_cache
from itertools import combinations

# Each idea: its words. A word ending in "*" is a stem (four letters or more before the "*");
# two words are a pair that must be neighbours.
_IDEAS: dict[str, str] = {
    "unwell": """passing-out blacked-out vomited puked throw-up delirious dizz* woozy
        lightheaded light-headed faint* passed-out pass-out sleepy drowsy groggy lethargic
        confused confusion nause* queasy vomit* throwing-up threw-up puking puke headache* sick
        drunk slurr* disoriented weak foggy cant-wake wont-wake not-waking""",
    "combustion": """bbq barbecue propane heater* furnace* furnance boiler* generator* stove*
        oven* fireplace flue chimney grill* engine exhaust dryer range burner* pilot car-running
        space-heater water-heater wall-heater kerosene charcoal""",
    "vulnerable": """senior* elder* year-old month-old asthma* bedridden baby babies infant*
        newborn* toddler* kid kids child* son daughter grandma* grandmother* grandpa*
        grandfather* elderly old-man old-lady old-woman mom dad mother father oxygen dialysis
        pregnant disabled wheelchair sick-kid twins""",
    "cold": """cold* freez* freezer fridge ice icy frost* snow* shiver* numb blanket* breath
        below minus windchill wind-chill chill* igloo frigid""",
    "heating": """heat heating heater* furnace* furnance boiler* radiator* thermostat baseboard
        warm warmth""",
    "water": """sopping submerged underwater water* wet puddle* leak* drip* pour* flood* soak*
        rain* gush* spray* overflow* lake river pool* inches ankle* knee* rising""",
    "electric": """extension power-strip outlet* socket* plug plugs wire wires wired wiring
        cable cables cord cords panel* breaker* switch* fixture* light* lamp* power-line
        transformer* electric* box fuse* meter""",
    "shock": """electrocut* shock* jolt* zap zapped zapping tingl* bites buzz buzzing buzzed
        buzzes humm* crackl* popp* pops spark sparks sparked sparking sparky arcing arc flash*
        static""",
    "hot": """hot melt* smok* scorch* burn* glow* black-marks too-hot sizzl* warm-to
        charred singe* soot* blacken* smoulder* smolder*""",
    "stranger": """burglar* thief thieves robber* someone somebody stranger* man guy dude person
        people intruder* unknown hoodie masked""",
    "indoors": """inside kitchen bedroom living-room downstairs upstairs attic basement closet
        bathroom hallway home house apartment apt unit my-place in-here""",
    "hiding": """alone hiding hide locked-myself lock-myself scared terrified quiet whisper* 0am""",
    "entry": """pane latch* deadbolt hinge* broken-into door* window* lock locks locked lockout
        handle* knob* kicked pried pry prying broke smash* shatter* forced jiggl* glass slider
        sliding fire-escape""",
    "smell": """smell* smel stink* stank reek* odor* odour* whiff fumes eggs egg sulfur*
        sulphur* skunk* cabbage rotten""",
    "hiss": """hiss* psss* whistl* blowing roaring""",
    "structure": """banister* ledge awning overhang facade ceiling* cieling wall walls floor*
        beam* joist* stair* steps balcon* railing* deck* porch* roof* foundation* chimney
        plaster drywall brick* concrete column* post posts support* landing""",
    "failure": """buckl* sinking gave-out detach* rotted crack* crak* split* gap sag sags sagged
        sagging bowing bowed bulg* collaps* cave* caving gave-way moved shifting shifted wobbl*
        loose soft went-through fell fall* pulled-away pulling-away tilt* lean* groan* creak*
        chunk* hole*""",
    "urgent": """now right-now still worse spreading rising fast faster hurry help pls plz asap
        emergency immediately quick*
        keeps wont-stop cant-stop by-the""",
    "evacuated": """outside sidewalk street went-out got-out left took-the walked-out opened-the
        windows-open evacuat* parking-lot
        leave leaving get-out go-out go-outside go-back come-back stay-out told-us made-us
        walked-us pajamas lawn""",
    "fire": """candle* ignit* on-fire caught-fire went-up flame* blaze* blazing orange going-up
        caught catching ablaze fire* burning inferno""",
    "smoke": """smoke* smok* cloud* haze* hazy black-stuff cant-see grey gray soot""",
    "harm": """gash* concussion limp* turning-blue bleed* blood* hurt injur* unconscious
        not-moving not-breathing blue unresponsive choking chok* seizure* collaps* fell overdos*
        stroke drooping cant-breathe cant-breath""",
    "weapon": """gun guns gunshot* gunman knife knives nife bat shot* shoot* crowbar weapon*
        pistol rifle machete""",
    "threat": """kill* threat* attack* beat* screaming scream* fight* punch* hitting hurt
        yelling assault* stabb* stabbed""",
    "trapped": """stuck trapped pinned jammed locked-in shut-in cant-get cant-open wont-open
        cant-escape
        blocking blocked chained master-key gate-code cant-reach""",
    "height": """roof* ledge edge railing* fire-escape top-floor rooftop high window* balcon*""",
    # Someone else's action on the scene: a responder, a utility's worker, a crew (the words of
    # the third holdout's misses, the seventh round: "red-tagged the furnace", "the trucks with
    # the ladders").
    "responder": """firefighter* firemen fireman fire-dept fire-department fire-truck fire-trucks
        engines ladder paramedic* ambulance ems 911 police cops officer* utility gas-company
        red-tag red-tagged tagged technician tech crew repairman repair-man inspector*
        dispatcher""",
    # A sound told as what it is like: a rush, a roar, a pop, a frying sizzle.
    "noise": """noise* sound* loud roar* rush* whoosh* hum hums humming pop pops popping snapp*
        bang* boom grind* crunch* sizzl* crackl* frying rumbl* rattl*""",
    # Something that measures or warns went off.
    "alarm": """alarm* detector* beep* meter reading* gadget""",
    # What a look-alike says and an emergency rarely does: it is over, it was handled, it
    # can wait.
    "resolved": """fixed resolved fine ok okay all-good its-fine gone dry-now relit reset
        no-smell stopped already last-week last-month last-year yesterday ago before months""",
    "routine": """can-you could-you could-someone can-someone whenever sometime next-week
        schedule* replace* paint* quote fyi not-urgent no-rush when-you battery chirp* reminder
        allowed thanks""",
}

_REPEATS = re.compile(r"(.)\1\1+")


_Table = dict[str, frozenset[str]]


def _frozen(table: dict[str, set[str]]) -> _Table:
    return {key: frozenset(value) for key, value in table.items()}


def _parse() -> tuple[_Table, _Table, _Table]:
    exact: dict[str, set[str]] = {}
    stems: dict[str, set[str]] = {}
    pairs: dict[str, set[str]] = {}
    for idea, words in _IDEAS.items():
        for item in words.split():
            if item.endswith("*"):
                stem = item[:-1]
                assert len(stem) >= 4, item  # a shorter stem begins too many words
                stems.setdefault(stem, set()).add(idea)
            elif "-" in item:
                pairs.setdefault(item.replace("-", " "), set()).add(idea)
            else:
                exact.setdefault(item, set()).add(idea)
    return _frozen(exact), _frozen(stems), _frozen(pairs)


EXACT, STEMS, PAIRS = _parse()
FINGERPRINT = format(
    zlib.crc32(
        repr(sorted((idea, sorted(words.split())) for idea, words in _IDEAS.items())).encode()
    ),
    "08x",
)
"""Changes with any word of any idea: weights trained on other lists are refused."""
_STEM_SIZES = tuple(sorted({len(stem) for stem in STEMS}))


@lru_cache(maxsize=8192)
def ideas_of_word(word: str) -> frozenset[str]:
    """The ideas one token stands for (empty when none). Cached: a pure function of one word,
    and most texts reuse the same few hundred words."""
    word = _REPEATS.sub(r"\1", word)
    found = set(EXACT.get(word, ()))
    for size in _STEM_SIZES:
        if size > len(word):
            break
        found.update(STEMS.get(word[:size], ()))
    return frozenset(found)


def ideas(words: list[str]) -> set[str]:
    """Every idea the text's tokens stand for, alone or as neighbouring pairs."""
    found: set[str] = set()
    for index, word in enumerate(words):
        found |= ideas_of_word(word)
        if index + 1 < len(words):
            found |= PAIRS.get(f"{word} {words[index + 1]}", frozenset())
    return found


def idea_grams(words: list[str]) -> list[str]:
    """The model's features for the ideas: ``i:`` one idea, ``ii:`` two ideas in one text."""
    present = sorted(ideas(words))
    return [f"i:{idea}" for idea in present] + [
        f"ii:{first}+{second}" for first, second in combinations(present, 2)
    ]


__all__ = ["EXACT", "FINGERPRINT", "PAIRS", "STEMS", "idea_grams", "ideas", "ideas_of_word"]
