"""The check a composed reply passes before it is sent (docs/composed-replies.md).

A model may write the assistant's reply; this decides whether it may go. It refuses a reply that
promises what no action of the package backs (a visit, a time, a fix, a call, a relay, a new
request, money, or any commitment at all when nothing was done), that carries another party's
data (a phone number, an e-mail, another person's name or unit, a work order that is not the
sender's), a link, or more than two SMS segments. A refused reply is not sent: the lane sends
its fixed text and records why.

The cost is asymmetric, as everywhere in maestro: a refused good reply costs a plainer text, a
sent false one costs the person's trust. So the rules are wide (any future "will", "I'll", "on
it", a weekday, a time of day…) and the only leniency is a negation right before a word ("no
visit is booked yet" is true).

Pure: no I/O.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Final, Literal

from pydantic import Field

from maestro.domain.common import Frozen, truncate
from maestro.domain.dispatch_texts import MAX_TEXT_CHARS
from maestro.domain.wo_refs import wo_ref_spans

__all__ = [
    "MAX_REPLY_CHARS",
    "Did",
    "Done",
    "OtherParty",
    "Refusal",
    "ReplyFacts",
    "check_reply",
]

MAX_REPLY_CHARS: Final = MAX_TEXT_CHARS
"""Two SMS segments at most, as every text maestro composes."""


class Did(StrEnum):
    """What one action of the package did, as far as a reply may speak of it."""

    OPENED = "opened"
    """A work order was opened."""
    BOOKED = "booked"
    """A visit is booked: the work order is scheduled with a visit."""
    PROPOSED = "proposed"
    """Visit times were offered; nothing is booked."""
    RELAYED = "relayed"
    """The person's words were added to a work order and passed to its vendor."""
    PAGED = "paged"
    """A property manager was paged."""
    ASKED = "asked"
    """A question (or a confirmation) is out to the person."""
    RATED = "rated"
    """A rating was recorded."""


class Done(Frozen):
    """One action of the package that ran, as the reply's facts hold it."""

    did: Did
    wo_id: str | None = None
    what: str = Field(default="", max_length=80, description="The work order's summary")

    def line(self) -> str:
        """The action as one line for the composer's prompt ("opened WO-12 (sink leak)")."""
        about = f" {self.wo_id}" if self.wo_id else ""
        what = f" ({self.what})" if self.what else ""
        return {
            Did.OPENED: f"opened a request{about}{what}",
            Did.BOOKED: f"booked a visit for{about or ' the request'}{what}",
            Did.PROPOSED: f"offered visit times for{about or ' the request'}{what}; nothing booked",
            Did.RELAYED: f"added their message to{about or ' their request'}{what} for the vendor",
            Did.PAGED: "paged the property manager",
            Did.ASKED: "asked them a question",
            Did.RATED: f"recorded their rating{' of' + about if about else ''}",
        }[self.did]


class OtherParty(Frozen):
    """Someone other than the sender whose data a reply must not carry."""

    name: str = ""
    phone: str = ""
    unit: str | None = None


class ReplyFacts(Frozen):
    """What the check knows: what the package did, who the sender is, who else is around."""

    done: tuple[Done, ...] = ()
    sender_phone: str = ""
    sender_name: str = ""
    sender_unit: str | None = None
    own_wo_ids: tuple[str, ...] = Field(
        default=(), description="The sender's work orders (open, or touched by this package)"
    )
    others: tuple[OtherParty, ...] = ()

    @property
    def did(self) -> frozenset[Did]:
        return frozenset(d.did for d in self.done)


RefusalKind = Literal["empty", "too_long", "promise", "link", "contact", "other_party", "wo_id"]


class Refusal(Frozen):
    """Why a composed reply may not go. ``detail`` never quotes a number or an address."""

    kind: RefusalKind
    detail: str = Field(max_length=200)

    def reason(self) -> str:
        return f"{self.kind}: {self.detail}"


# --- promises --------------------------------------------------------------------------------

_F = re.IGNORECASE | re.UNICODE
_APOS = "['’]"
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_DIA = r"(?:lunes|martes|mi[ée]rcoles|jueves|viernes|s[áa]bado|domingo)"
_WHO = (
    r"(?:technician|tech|plumber|electrician|handyman|contractor|vendor|repair\s?(?:man|person)|"
    r"maintenance|someone|somebody|a person|crew|team|locksmith|exterminator|worker)"
)
# Who a relay reaches (the work order's side), and who a page reaches (the manager's side).
_VENDOR_SIDE = (
    r"(?:vendor|technician|tech|plumber|electrician|handyman|team|contractor|crew|maintenance)"
)
_MANAGER_SIDE = r"(?:(?:property\s+)?manager|landlord|office|owner|super|superintendent|on-call)"
_TOLD = (
    r"(?:told|tell|notif(?:y|ied)|inform(?:ed)?|alert(?:ed)?|contact(?:ed)?|messag(?:e|ed)|"
    r"text(?:ed)?|reach(?:ed)? out to|paged?)"
)


def _any(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), _F)


_PROMISES: Final[tuple[tuple[str, re.Pattern[str], frozenset[Did], bool], ...]] = (
    # (what it promises, its words, the actions that back it, whether a negation before clears it)
    (
        "a visit or a time",
        _any(
            r"\bschedul\w*",
            r"\bappointments?\b",
            r"\bbook(?:ed|ing)?\b",
            r"\bvisit\w*",
            rf"\b{_WHO}\b[^.!?]{{0,30}}\b(?:come|coming|comes|stop(?:s|ping)? by|"
            r"drop(?:s|ping)? by|be (?:there|over|by|out|round)|head(?:s|ing)? (?:over|out)|"
            r"arriv\w*|swing by|send(?:ing)? (?:someone|a))\b",
            r"\bcome (?:by|over|out|round|around|in|and)\b",
            r"\bon (?:the|their|his|her|my|our) way\b",
            r"\btomorrow\b",
            r"\btonight\b",
            r"\bthis (?:morning|afternoon|evening|week|weekend)\b",
            rf"\b{_WEEKDAY}s?\b",
            r"\b\d{1,2}(?::\d{2})?\s?(?:am|pm|a\.m\.|p\.m\.)",
            r"\b(?:within|in) (?:the next |an? |the |\d+ |one |two |a few |24 |48 )?"
            r"(?:hours?|minutes?|mins?|days?)\b",
            r"\bprogramad\w*",
            r"\bagendad\w*",
            r"\bcitas?\b",
            r"\bvisitas?\b",
            r"\bt[ée]cnic[oa]s?\b",
            r"\bplomer[oa]s?\b",
            r"\belectricistas?\b",
            r"\bma[ñn]ana\b",
            r"\besta (?:tarde|noche|semana)\b",
            rf"\b{_DIA}\b",
            r"\b(?:pasar|ir|vendr|llegar)(?:[áa]n?|emos)\b",
            r"\ben camino\b",
            r"\ben (?:una|unas|\d+|pocas) (?:hora|horas|minutos|d[íi]as)\b",
        ),
        frozenset({Did.BOOKED}),
        True,
    ),
    (
        "a fix",
        _any(
            rf"\b(?:will|{_APOS}ll|going to|gonna|to|can|should)\s+(?:\w+\s+){{0,2}}"
            r"(?:fix|repair|resolve|sort|patch|replace)\b",
            r"\b(?:fixed|repaired|resolved|sorted(?: out)?|patched|replaced|taken care of)\b",
            r"\b(?:arregl|repar|solucion)(?:ar[áa]?n?|aremos|ado|ada|ados|adas|é|o)\b",
            r"\bresuel(?:to|ta|tos|tas)\b",
            r"\bresolver(?:[áa]n?|emos)?\b",
        ),
        frozenset({Did.BOOKED}),
        True,
    ),
    (
        "a relay",
        _any(
            r"\b(?:pass(?:ed|ing)?|sen[td](?:ing)?|forward(?:ed|ing)?)\b[^.!?]{0,25}"
            r"\b(?:on|along|over|to (?:the|your|our))\b",
            rf"\blet(?:ting)? (?:the|your|our|them|him|her)\s+(?:{_VENDOR_SIDE}\s+)?know\b",
            rf"\b{_TOLD}\s+(?:the|your|our)\s+{_VENDOR_SIDE}",
            r"\b(?:avis|inform|comunic|notific|transmit|pas|envi)\w*\b[^.!?]{0,25}"
            r"\b(?:al|a la|a su|a los|a las)\s+(?:t[ée]cnic|plomer|electricista|equipo|"
            r"proveedor|contratista)",
        ),
        frozenset({Did.RELAYED}),
        True,
    ),
    (
        "a call or a person following up",
        _any(
            r"\bpaged\b",
            rf"\b{_TOLD}\s+(?:the|your|our)\s+{_MANAGER_SIDE}",
            rf"\blet(?:ting)? (?:the|your|our)\s+{_MANAGER_SIDE}\s+know\b",
            r"\bescalat\w*",
            r"\b(?:call|ring|phone|contact|reach)(?:ing)? you\b",
            # "feel free to reach out" invites; "someone will reach out to you" promises.
            r"\bbe in touch\b",
            r"\breach(?:ing)? out to you\b",
            r"\b(?:manager|landlord|office|on-call|staff|a (?:real )?person|a human|someone from)\b"
            rf"[^.!?]{{0,30}}\b(?:will|{_APOS}ll|is going to|has been|was|been|is)\b",
            r"\b(?:administrador\w*|encargad[oa]s?|gerente|una persona|alguien del equipo)\b",
            r"\ble (?:llamar|contactar|escribir)\w*",
            r"\bse pondr[áa]n? en contacto\b",
        ),
        frozenset({Did.PAGED}),
        True,
    ),
    (
        "a new request",
        _any(
            r"\b(?:open(?:ed|ing)?|creat(?:e|ed|ing)|log(?:ged|ging)?|fil(?:e|ed|ing)|"
            r"submit(?:ted|ting)?|rais(?:e|ed|ing)|put in|enter(?:ed)?|register(?:ed)?|made)\b"
            r"[^.!?]{0,20}\b(?:request|ticket|work order|job|case|order|report)\b",
            r"\b(?:abr[íi]|abiert[oa]|cre(?:é|e|ado|ada|amos)|registr\w*|levant\w*|gener\w*)\b"
            r"[^.!?]{0,25}\b(?:solicitud|orden|pedido|reporte|caso|ticket)\b",
        ),
        frozenset({Did.OPENED}),
        True,
    ),
    (
        "money",
        _any(
            r"\brefund\w*",
            r"\breimburs\w*",
            r"\bdiscount\w*",
            r"\bcredit\w*",
            r"\bcompensat\w*",
            r"\bwaiv\w*",
            r"\brent (?:reduction|off|back)\b",
            r"\bfree of charge\b",
            r"\bno charge\b",
            r"\breembols\w*",
            r"\bdescuento\w*",
            r"\bcompensaci\w*",
            r"\bcr[ée]dito\w*",
            r"\bsin costo\b",
            r"\bgratis\b",
        ),
        frozenset(),
        False,
    ),
    (
        "a cancellation",
        _any(r"\bcancel\w*", r"\banulad\w*"),
        frozenset(),
        True,
    ),
    (
        "a commitment",
        _any(
            rf"\b(?:will|won{_APOS}?t|shall|gonna|going to)\b",
            rf"\w{_APOS}ll\b",
            r"\bon it\b",
            r"\b(?:get|getting|come|coming) back to you\b",
            r"\b(?:shortly|soon|asap|right away|immediately|promptly|as soon as)\b",
            r"\bfollow(?:ing)?[- ]?up\b",
            r"\bkeep (?:you|u) (?:posted|updated|informed|in the loop)\b",
            r"\blook(?:ing)? into\b",
            r"\bworking on\b",
            r"\b(?:guarantee|promise)\w*",
            r"\b(?:me|nos) ocup(?:o|amos)\b",
            r"\ben breve\b",
            r"\bpronto\b",
            r"\ben ?seguida\b",
            r"\bcuanto antes\b",
            r"\blo antes posible\b",
            r"\ba la brevedad\b",
            r"\b(?:vamos|voy|van|va) a\b",
            r"\b\w+(?:ar|er|ir)(?:é|á|emos|án)\b",
            r"\b(?:tendr|vendr|pondr|podr|sabr|har|dir|saldr|habr|querr|valdr)(?:é|á|emos|án)\b",
        ),
        frozenset({Did.OPENED, Did.BOOKED, Did.RELAYED, Did.PAGED}),
        False,
    ),
)

# A negation just before a word ("no visit is booked yet", "aún no hay visita") makes the words
# a statement of what is not so, which a reply may say: only within its own clause, at most two
# words before.
_NEGATION = re.compile(
    rf"\b(?:no|not|never|nothing|nobody|no one|none|\w+n{_APOS}t|yet to|sin|nadie|ningun[oa]?|"
    r"nunca|todav[íi]a no|a[úu]n no)\b\W+(?:\w+\W+){0,2}$",
    _F,
)


def _negated(text: str, start: int) -> bool:
    clause = re.split(r"[.;:!?,]|\b(?:but|pero|and|y)\b", text[:start], flags=_F)[-1]
    return bool(_NEGATION.search(clause))


def _promise(text: str, did: frozenset[Did]) -> Refusal | None:
    for what, words, backed_by, negatable in _PROMISES:
        if did & backed_by:
            continue
        for match in words.finditer(text):
            if negatable and _negated(text, match.start()):
                continue
            quoted = truncate(match.group(0), 40)
            needs = (
                " or ".join(sorted(d.value for d in backed_by)) if backed_by else "nothing maestro"
            )
            return Refusal(
                kind="promise",
                detail=f"promises {what} ('{quoted}'); only an action that {needs} backs it",
            )
    return None


# --- data that is not the sender's --------------------------------------------------------------

_LINK = _any(
    r"\bhttps?://",
    r"\bwww\.",
    r"\b[\w-]+\.(?:com|net|org|io|co|us|ly|me|app|info|biz|link|gl|to|es|mx|gov|edu)\b",
)
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", _F)
# Seven digits or more, however written: a phone number (911 and a time of day are shorter).
_DIGITS = re.compile(r"(?<![\w])\+?\d(?:[\s().-]{0,2}\d){6,}(?![\w])")
_UNIT = re.compile(
    r"\b(?:unit|apt\.?|apartment|suite|flat|depto\.?|departamento|apto\.?)\s*#?\s*"
    r"([a-z0-9-]{0,5}\d[a-z0-9-]{0,5})\b",
    _F,
)


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _same_number(written: str, phone: str) -> bool:
    """A number written in a reply is ``phone`` when their last ten digits agree."""
    mine = _digits(phone)
    return bool(mine) and len(written) >= 7 and mine[-10:].endswith(written[-10:])


def _words_of(name: str) -> set[str]:
    return {w.lower() for w in re.findall(r"\w{3,}", name)}


def _names(text: str, facts: ReplyFacts) -> bool:
    """Whether the reply names someone else: their whole name (in any case), or a capitalised
    word of it of three letters or more, written as the directory writes it ("Vic", not the
    "fix" of "Fix-It Plumbing"), that is not a word of the sender's own name."""
    own = _words_of(facts.sender_name)
    for other in facts.others:
        name = other.name.strip()
        if not name or name.lower() == facts.sender_name.strip().lower():
            continue
        if re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, _F):
            return True
        for word in re.findall(r"\w{3,}", name):
            if (
                word[0].isupper()
                and word.lower() not in own
                and re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text)
            ):
                return True
    return False


def _units(text: str, facts: ReplyFacts) -> bool:
    mine = (facts.sender_unit or "").lower()
    for match in _UNIT.finditer(text):
        if match.group(1).lower() != mine:
            return True
    for other in facts.others:
        unit = (other.unit or "").strip()
        if (
            len(unit) >= 2
            and unit.lower() != mine
            and re.search(rf"(?<![\w-]){re.escape(unit)}(?![\w-])", text, _F)
        ):
            return True
    return False


def _data(text: str, facts: ReplyFacts) -> Refusal | None:
    if _LINK.search(text):
        return Refusal(kind="link", detail="carries a link")
    if _EMAIL.search(text):
        return Refusal(kind="contact", detail="carries an e-mail address")
    for match in _DIGITS.finditer(text):
        if not _same_number(_digits(match.group(0)), facts.sender_phone):
            return Refusal(kind="contact", detail="carries a phone number not the sender's")
    # The sender's own, and those this package's actions made or touched for them.
    own = {i.upper() for i in (*facts.own_wo_ids, *(d.wo_id for d in facts.done if d.wo_id))}
    for ref in wo_ref_spans(text):
        if not ref.bare and ref.wo_id.upper() not in own:
            return Refusal(kind="wo_id", detail="names a work order that is not the sender's")
    if _names(text, facts):
        return Refusal(kind="other_party", detail="names someone other than the sender")
    if _units(text, facts):
        return Refusal(kind="other_party", detail="names a unit that is not the sender's")
    return None


def check_reply(text: str, facts: ReplyFacts) -> Refusal | None:
    """Why ``text`` may not be sent to the sender, or None when it may."""
    if not text.strip():
        return Refusal(kind="empty", detail="says nothing")
    if len(text) > MAX_REPLY_CHARS:
        return Refusal(
            kind="too_long", detail=f"{len(text)} characters, more than {MAX_REPLY_CHARS}"
        )
    return _data(text, facts) or _promise(text, facts.did)
