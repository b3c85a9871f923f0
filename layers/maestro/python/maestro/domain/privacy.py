"""Masking what people wrote and the numbers they wrote from: for logs and for error text.

Logs and error messages are read by operators and kept for months; a tenant's phone number and
words belong in the stores that need them (the conversation buffer, the PM's page), not there.
Every log line maestro writes passes :func:`mask_log` (``maestro.observability``'s formatter),
and every error text that reaches a page or a decision record passes :func:`mask_text`.

Pure and light (``re`` only): the logger imports it in every handler.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["BODY_KEYS", "MASK", "mask_log", "mask_phone_numbers", "mask_text"]

MASK = "*****"
"""What a masked body becomes (Powertools data masking's erase marker)."""

BODY_KEYS = frozenset(
    {"body", "text", "words", "transcript", "transcriptiontext", "message_body", "said", "quote"}
)
"""Log keys (compared in lower case) whose string value is what someone wrote: masked whole."""

_ELLIPSIS = "…"

# "+" then 7-15 digits (E.164), or a North-American number written the usual ways.
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{7,15}(?!\d)"
    r"|(?:\+?1[ .-]?)?(?:\(\d{3}\)|\d{3})[ .-]?\d{3}[ .-]?\d{4}(?![\w]))"
)
# pydantic quotes the offending input in its errors: "[type=…, input_value='…', input_type=str]".
_INPUT_VALUE = re.compile(r"input_value=.*?(?=, input_type=|\]|$)", re.DOTALL)


def _mask_phone(match: re.Match[str]) -> str:
    raw = match.group(0)
    digits = re.sub(r"\D", "", raw)
    return ("+" if raw.startswith("+") else "") + _ELLIPSIS + digits[-4:]


def mask_phone_numbers(text: str) -> str:
    """Every phone number in ``text`` reduced to its last 4 digits ("+…0100")."""
    return _PHONE.sub(_mask_phone, text)


def mask_text(text: str) -> str:
    """Free text (an error message, a traceback) with its phone numbers masked and the inputs
    pydantic quotes replaced: a validation error on a message quotes the message."""
    return mask_phone_numbers(_INPUT_VALUE.sub("input_value=" + MASK, text))


def mask_log(value: Any, key: str | None = None) -> Any:
    """A log record's value with every body masked whole and every other string through
    :func:`mask_text`, recursively through mappings and sequences."""
    if isinstance(value, str):
        return MASK if key is not None and key.lower() in BODY_KEYS else mask_text(value)
    if isinstance(value, Mapping):
        return {k: mask_log(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask_log(v, key) for v in value]
    if value is None or isinstance(value, bool | int | float):
        return value
    # Anything else (an exception, a datetime) would be written as its str(): mask that.
    return mask_log(str(value), key)
