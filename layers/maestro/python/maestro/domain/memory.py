"""The memory window: full history + decisions + open contexts → the bounded brain input.

The brain's prompt must not grow with the conversation ("The brain's contract"), so every part
of it is capped twice: a number of lines per section and a number of characters per line
(counted as the line is encoded in the prompt, escapes included: see
``maestro.domain.prompt_data``, whose one ``<data>`` block the window renders as).
``BrainInput.max_rendered_chars`` turns those caps into a bound on the whole prompt, and the
``BrainInput`` validator refuses any value that would break it, so the bound holds for every
``BrainInput``, not only those ``build_window`` makes.

Pure: no I/O, no clock. The same inputs, in any order, give the same window.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Hashable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar, get_args

from pydantic import Field, model_validator

from maestro.domain.common import ELLIPSIS, Frozen, truncate
from maestro.domain.models import Channel, Message, OpenContext, Package, PartyRole
from maestro.domain.privacy import mask_phone_numbers
from maestro.domain.prompt_data import data_block, encoded_length, truncate_encoded
from maestro.domain.records import MaestroDecision

__all__ = [
    "DEFAULT_LIMITS",
    "ELLIPSIS",
    "BrainInput",
    "BrainRequest",
    "SenderRole",
    "WindowLimits",
    "build_window",
    "mask_phone_numbers",
    "truncate",
]

SenderRole = Literal["tenant", "vendor", "pm", "unknown"]


class WindowLimits(Frozen):
    """How much of the past the brain sees. Every field bounds the rendered prompt (a line's
    characters are counted encoded, as the prompt carries them)."""

    max_messages: int = Field(default=20, ge=1, description="Earlier messages shown")
    max_decisions: int = Field(default=15, ge=1, description="Recent decisions shown")
    max_contexts: int = Field(default=12, ge=1, description="Open contexts shown")
    max_chars_per_message: int = Field(default=480, ge=1)
    max_chars_per_line: int = Field(default=200, ge=1, description="Decision and context lines")
    max_package_messages: int = Field(
        default=50, ge=1, description="Package messages shown; the rest become one '(+N more)'"
    )
    max_chars_per_package_message: int = Field(
        default=4000,
        ge=1,
        description="Larger than max_chars_per_message: a call transcript is one long message",
    )


DEFAULT_LIMITS = WindowLimits()


# --- text helpers -------------------------------------------------------------------------


def _one_line(text: str) -> str:
    """Collapse text to one line so a message cannot forge a section header of the prompt."""
    kept = "".join(ch for ch in text if ch.isspace() or unicodedata.category(ch) != "Cc")
    lines = (" ".join(line.split()) for line in kept.splitlines())
    return " / ".join(line for line in lines if line)


def _stamp(at: datetime) -> str:
    # Fixed width (not strftime, which does not pad years < 1000), so line sizes are stable.
    return f"[{at.year:04d}-{at.month:02d}-{at.day:02d} {at.hour:02d}:{at.minute:02d}]"


_CHANNEL_TAG = {Channel.SMS: "", Channel.VOICE: "(call) ", Channel.IN_APP: "(app) "}


def _message_text(message: Message) -> str:
    text = mask_phone_numbers(_one_line(message.body))
    if message.media_urls:
        n = len(message.media_urls)
        # The URLs are unbounded and useless to the brain; their number is enough.
        note = f"[{n} attachment{'s' if n != 1 else ''}]"
        text = f"{text} {note}" if text else note
    return f"{_CHANNEL_TAG[message.channel]}{text or '(empty message)'}"


def _package_line(message: Message, limit: int) -> str:
    return truncate_encoded(f"{_stamp(message.received_at)} {_message_text(message)}", limit)


def _history_line(message: Message, limit: int) -> str:
    sender = mask_phone_numbers(message.from_phone)
    return truncate_encoded(
        f"{_stamp(message.received_at)} {sender}: {_message_text(message)}", limit
    )


def _decision_line(decision: MaestroDecision, limit: int) -> str:
    target = decision.target_wo_id or "no target"
    flags = "".join(
        f", {name}"
        for name, on in (("abstained", decision.abstained), ("fallback", decision.fallback))
        if on
    )
    reason = mask_phone_numbers(_one_line(decision.reason))
    line = (
        f"{_stamp(decision.recorded_at)} {decision.lane.value} → {_one_line(target)}: "
        f"{decision.disposition.value}{flags}"
    )
    return truncate_encoded(f"{line} — {reason}" if reason else line, limit)


def _context_line(context: OpenContext, limit: int) -> str:
    # Mask only after the id: the id is what an action targets and must appear as given.
    line, shown_id = _one_line(context.line()), _one_line(context.context_id)
    if line.startswith(shown_id):
        line = shown_id + mask_phone_numbers(line[len(shown_id) :])
    return truncate_encoded(line, limit)


# --- the brain input ----------------------------------------------------------------------

# The window is one JSON document in one data block (``maestro.domain.prompt_data``): its keys
# and notes are maestro's words, every line a string, so no text can forge a section or a line.
_NEW_KEY = "new_messages"
_HISTORY_KEY = "earlier_messages"
_DECISIONS_KEY = "recent_decisions"
_CONTEXTS_KEY = "open_contexts"
_HISTORY_NOTE = "oldest first"
_DECISIONS_NOTE = "oldest first"
_CONTEXTS_NOTE = "one per line, id first"
# A note, not a number: a count would make the prompt's size depend on the history's length.
_HISTORY_OMITTED = "; older messages not shown"
_DECISIONS_OMITTED = "; older decisions not shown"
_CONTEXTS_OMITTED = "; less recently active contexts not shown"


def _render(
    package_id: str,
    sender_role: str,
    sections: Sequence[tuple[Sequence[str], bool]],
) -> str:
    """The window's data block; ``sections`` are the package, history, decision and context
    lines, each with whether something was left out."""
    (package, _), (history, h_omitted), (decisions, d_omitted), (contexts, c_omitted) = sections
    return data_block(
        {
            _NEW_KEY: {"package": package_id, "sender": sender_role, "lines": list(package)},
            _HISTORY_KEY: {
                "note": _HISTORY_NOTE + (_HISTORY_OMITTED if h_omitted else ""),
                "lines": list(history),
            },
            _DECISIONS_KEY: {
                "note": _DECISIONS_NOTE + (_DECISIONS_OMITTED if d_omitted else ""),
                "lines": list(decisions),
            },
            _CONTEXTS_KEY: {
                "note": _CONTEXTS_NOTE + (_CONTEXTS_OMITTED if c_omitted else ""),
                "lines": list(contexts),
            },
        }
    )


class BrainInput(Frozen):
    """What the reasoning brain sees for one package: bounded whatever the history's length."""

    package_id: str = Field(min_length=1)
    sender_role: SenderRole
    package_lines: tuple[str, ...] = Field(
        description="The package's own messages, in order, each truncated"
    )
    history_lines: tuple[str, ...] = Field(
        default=(), description="The last N earlier messages, oldest first"
    )
    decision_lines: tuple[str, ...] = Field(
        default=(), description="The last M decisions, oldest first"
    )
    context_lines: tuple[str, ...] = Field(default=(), description="Open contexts, by id")
    context_ids: tuple[str, ...] = Field(
        default=(), description="The ids of context_lines, same order"
    )
    omitted_package_messages: int = Field(default=0, ge=0)
    omitted_messages: int = Field(default=0, ge=0)
    omitted_decisions: int = Field(default=0, ge=0)
    omitted_contexts: int = Field(default=0, ge=0)
    limits: WindowLimits = DEFAULT_LIMITS

    @model_validator(mode="after")
    def _within_limits(self) -> BrainInput:
        lim = self.limits
        sections = (
            ("package_lines", self.package_lines, lim.max_package_messages + 1,
             lim.max_chars_per_package_message),
            ("history_lines", self.history_lines, lim.max_messages, lim.max_chars_per_message),
            ("decision_lines", self.decision_lines, lim.max_decisions, lim.max_chars_per_line),
            ("context_lines", self.context_lines, lim.max_contexts, lim.max_chars_per_line),
        )  # fmt: skip
        for name, lines, max_lines, max_chars in sections:
            if len(lines) > max_lines:
                raise ValueError(f"{name}: {len(lines)} lines, at most {max_lines} allowed")
            for line in lines:
                if encoded_length(line) > max_chars:
                    raise ValueError(
                        f"{name}: a line of {encoded_length(line)} encoded chars, max {max_chars}"
                    )
                if _one_line(line) != line:
                    raise ValueError(f"{name}: every line must be one normalised line")
        if len(self.context_ids) != len(self.context_lines):
            raise ValueError("one context id per context line")
        return self

    def render(self) -> str:
        """The prompt text: one data block, a note wherever something was left out."""
        shown_id = truncate_encoded(
            _one_line(self.package_id) or "?", self.limits.max_chars_per_line
        )
        return _render(
            shown_id,
            self.sender_role,
            (
                (self.package_lines, self.omitted_package_messages > 0),
                (self.history_lines, self.omitted_messages > 0),
                (self.decision_lines, self.omitted_decisions > 0),
                (self.context_lines, self.omitted_contexts > 0),
            ),
        )

    @staticmethod
    def max_rendered_chars(limits: WindowLimits) -> int:
        """An upper bound on ``len(render())`` for any BrainInput with these limits.

        Computed from the limits alone: the window at its largest, every section full, every
        line (and the package id) at its cap of encoded characters, every note at its longest,
        the longest role. A line's encoded length is what its cap bounds, so no content can
        make a render longer than this one.
        """
        role = max(get_args(SenderRole), key=len)
        full = (
            ["x" * limits.max_chars_per_package_message] * (limits.max_package_messages + 1),
            ["x" * limits.max_chars_per_message] * limits.max_messages,
            ["x" * limits.max_chars_per_line] * limits.max_decisions,
            ["x" * limits.max_chars_per_line] * limits.max_contexts,
        )
        sections = [(lines, True) for lines in full]
        return len(_render("x" * limits.max_chars_per_line, role, sections))


# --- building the window ------------------------------------------------------------------

_T = TypeVar("_T")
# Sorting on (_LATEST - anchor) puts the freshest first, exactly (a float timestamp would not).
_LATEST = datetime.max.replace(tzinfo=UTC)
_ROLES: dict[str, SenderRole] = {role: role for role in get_args(SenderRole)}


def _unique_sorted(
    items: Iterable[_T], key: Callable[[_T], Hashable], order: Callable[[_T], tuple[Any, ...]]
) -> list[_T]:
    """Sorted by ``order``, one per ``key`` (the first in that order): a redelivery or a
    re-executed decision is the same item, and the input order must not matter."""
    seen: set[Hashable] = set()
    out: list[_T] = []
    for item in sorted(items, key=order):
        k = key(item)
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out


def _package_lines(package: Package, limits: WindowLimits) -> tuple[tuple[str, ...], int]:
    messages = package.messages
    cap, chars = limits.max_package_messages, limits.max_chars_per_package_message
    if len(messages) <= cap:
        return tuple(_package_line(m, chars) for m in messages), 0
    # Keep the opening (what it is about) and the end (the latest word), mark the gap.
    head = cap // 2
    tail = cap - head
    omitted = len(messages) - cap
    lines = (
        [_package_line(m, chars) for m in messages[:head]]
        + [truncate_encoded(f"(+{omitted} more)", chars)]
        + [_package_line(m, chars) for m in messages[len(messages) - tail :]]
    )
    return tuple(lines), omitted


def build_window(
    package: Package,
    history: Sequence[Message],
    decisions: Sequence[MaestroDecision],
    open_contexts: Sequence[OpenContext],
    sender_role: SenderRole | PartyRole,
    limits: WindowLimits = DEFAULT_LIMITS,
) -> BrainInput:
    """The bounded brain input for ``package``, from everything known about its conversation.

    ``history`` may hold the package's own messages and arrive in any order; the result depends
    only on the contents of the inputs, never on their order.
    """
    role = _ROLES.get(str(sender_role))
    if role is None:
        raise ValueError(f"unknown sender role {sender_role!r}")

    package_lines, omitted_package = _package_lines(package, limits)

    own = {m.message_id for m in package.messages}
    earlier = _unique_sorted(
        (m for m in history if m.message_id not in own),
        key=lambda m: m.message_id,
        order=lambda m: (m.received_at, m.seq, m.message_id, m.model_dump_json()),
    )
    shown_messages = earlier[-limits.max_messages :]

    ordered_decisions = _unique_sorted(
        decisions,
        key=lambda d: d.decision_id,
        order=lambda d: (d.recorded_at, d.decision_id, d.model_dump_json()),
    )
    shown_decisions = ordered_decisions[-limits.max_decisions :]

    # One per id, the freshest; then the most recently active survive, shown by id.
    contexts = _unique_sorted(
        open_contexts,
        key=lambda c: c.context_id,
        order=lambda c: (_LATEST - c.freshness_anchor, c.context_id, c.model_dump_json()),
    )
    shown_contexts = sorted(contexts[: limits.max_contexts], key=lambda c: c.context_id)

    return BrainInput(
        package_id=package.package_id,
        sender_role=role,
        package_lines=package_lines,
        history_lines=tuple(_history_line(m, limits.max_chars_per_message) for m in shown_messages),
        decision_lines=tuple(_decision_line(d, limits.max_chars_per_line) for d in shown_decisions),
        context_lines=tuple(_context_line(c, limits.max_chars_per_line) for c in shown_contexts),
        context_ids=tuple(c.context_id for c in shown_contexts),
        omitted_package_messages=omitted_package,
        omitted_messages=len(earlier) - len(shown_messages),
        omitted_decisions=len(ordered_decisions) - len(shown_decisions),
        omitted_contexts=len(contexts) - len(shown_contexts),
        limits=limits,
    )


class BrainRequest(Frozen):
    """What the reasoning brain reads for one package: the bounded window (what a model sees)
    and the typed contexts behind it (what the offline rules read)."""

    package: Package
    sender_role: SenderRole
    contexts: tuple[OpenContext, ...]
    window: BrainInput
