"""Erasing a person: which stored values are theirs, and what each becomes.

See docs/erase-and-retention.md.

The rules, applied to every attribute of every item (values nested in maps, lists and JSON
strings included):

- an item whose *keys* hold one of the person's phone numbers is deleted (a party row, a
  throttle window, a digest entry for an unknown number): a key cannot be redacted in place;
- an item is **linked** to the person when one of its values names them: holds their phone
  number, their conversation id or one of their package ids, or equals their party id. In a
  linked item every free text (a string with whitespace: a body, a note, a summary, a why) and
  every value equal to one of their bodies becomes :data:`ERASED`; ids, lanes, enums, times
  and numbers stay, so a decision keeps its structure for audit;
- in any item, linked or not, their phone numbers and any quote of one of their bodies (24
  characters or more: a short body such as "yes" is only theirs where the item is) become
  :data:`ERASED`, so a PM's page or another party's relay that quoted them quotes no more.

Pure: no I/O. The adapter (``maestro.adapters.dynamodb_erase``) reads and writes the tables.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ERASED", "MIN_QUOTE", "ErasureScope", "Redacted", "phone_variants"]

ERASED = "[erased]"
"""What an erased text or number becomes."""

MIN_QUOTE = 24
"""A quote of a body this long or longer is theirs wherever it is (the privacy tests' rule)."""

_SPACE = re.compile(r"\s")


def phone_variants(phone: str) -> tuple[str, ...]:
    """A number as a stored text may hold it: E.164, and its digits without the plus."""
    return (phone, phone.lstrip("+"))


@dataclass(frozen=True)
class Redacted:
    value: Any
    changed: bool


@dataclass(frozen=True)
class ErasureScope:
    """Whom an erase is about: what names them (to link an item) and what they wrote."""

    phones: tuple[str, ...]
    party_ids: tuple[str, ...] = ()
    conversation_ids: tuple[str, ...] = ()
    package_ids: tuple[str, ...] = ()
    bodies: tuple[str, ...] = ()
    _needles: tuple[str, ...] = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "bodies", tuple({b.strip() for b in self.bodies if b.strip()}))
        needles = [v for p in self.phones for v in phone_variants(p)]
        needles += [*self.conversation_ids, *self.package_ids]
        object.__setattr__(self, "_needles", tuple(n for n in needles if n))

    # -- what names them ------------------------------------------------------------------------

    def key_names_them(self, key_values: Iterable[Any]) -> bool:
        """Whether an item's key values hold one of their numbers (the item must go)."""
        return any(
            isinstance(v, str) and any(p in v for ph in self.phones for p in phone_variants(ph))
            for v in key_values
        )

    def links(self, value: Any) -> bool:
        """Whether ``value`` (any attribute, nested) names the person."""
        if isinstance(value, str):
            if value in self.party_ids or any(n in value for n in self._needles):
                return True
            parsed = _json(value)
            return parsed is not None and self.links(parsed)
        if isinstance(value, dict):
            return any(self.links(v) for v in value.values())
        if isinstance(value, list | tuple | set | frozenset):
            return any(self.links(v) for v in value)
        return False

    # -- what becomes of a value ----------------------------------------------------------------

    def redact(self, value: Any, *, linked: bool) -> Redacted:
        """``value`` with the person's numbers and words replaced by :data:`ERASED`."""
        if isinstance(value, str):
            parsed = _json(value)
            if parsed is not None:
                inner = self.redact(parsed, linked=linked)
                if not inner.changed:
                    return Redacted(value, False)
                return Redacted(json.dumps(inner.value, ensure_ascii=False), True)
            text = self._redact_text(value, linked=linked)
            return Redacted(text, text != value)
        if isinstance(value, dict):
            parts = {k: self.redact(v, linked=linked) for k, v in value.items()}
            if not any(p.changed for p in parts.values()):
                return Redacted(value, False)
            return Redacted({k: p.value for k, p in parts.items()}, True)
        if isinstance(value, list | tuple):
            items = [self.redact(v, linked=linked) for v in value]
            if not any(p.changed for p in items):
                return Redacted(value, False)
            return Redacted([p.value for p in items], True)
        if isinstance(value, set | frozenset):
            members = [self.redact(v, linked=linked) for v in value]
            if not any(p.changed for p in members):
                return Redacted(value, False)
            return Redacted({p.value for p in members}, True)
        return Redacted(value, False)

    def _redact_text(self, text: str, *, linked: bool) -> str:
        if text == ERASED:
            return text
        if linked and (_SPACE.search(text) or text.strip() in self.bodies):
            return ERASED
        for phone in self.phones:
            for variant in phone_variants(phone):
                text = text.replace(variant, ERASED)
        for body in self.bodies:
            text = _without_quotes(text, body)
        return text


def _without_quotes(text: str, body: str) -> str:
    """``text`` with every quote of ``body`` (whole, or its first :data:`MIN_QUOTE` characters
    or more: a quote cut short) replaced, case-insensitively."""
    body = body.strip()
    if len(body) < MIN_QUOTE:
        return text
    lowered, wanted = text.lower(), body.lower()
    opening = wanted[:MIN_QUOTE]
    out: list[str] = []
    start = 0
    while (at := lowered.find(opening, start)) != -1:
        end = at + MIN_QUOTE
        while end < len(text) and end - at < len(wanted) and lowered[end] == wanted[end - at]:
            end += 1
        out += [text[start:at], ERASED]
        start = end
    return "".join(out) + text[start:] if out else text


def _json(text: str) -> Any:
    """The JSON document ``text`` holds (an object or array), else None."""
    stripped = text.lstrip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None
