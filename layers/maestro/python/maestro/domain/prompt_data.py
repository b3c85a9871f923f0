"""How what people wrote enters a model's prompt: one JSON document inside one ``<data>`` block.

Every prompt maestro builds follows one convention. Its own words (the task, the instructions,
the allowed options) are plain text; everything a party supplied, or that was derived from what a
party wrote (a text, a work order's summary and unit, a name, a note, a question that quotes
someone, a tool result), is a string in one JSON document between a ``<data>`` line and a
``</data>`` line, never on a line of its own. The system prompts tell the model so.

The encoding keeps that structure whatever the strings hold: JSON escapes quotes, backslashes
and control characters (newlines included); on top of it, ``<`` and ``>`` are escaped
(``\\u003c``, ``\\u003e``), so no tag can close or open inside the block, and so are the line
breaks JSON leaves raw (U+0085, U+2028, U+2029) and lone surrogates (which no UTF-8 request can
carry). So the block opens and closes exactly once, the document is one line, and parsing it
gives back exactly the strings that went in. Non-ASCII text stays as it is (an escape per accent
would cost tokens for nothing).

Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from typing import Any

from maestro.domain.common import ELLIPSIS, truncate

__all__ = [
    "DATA_CLOSE",
    "DATA_OPEN",
    "data_block",
    "data_strings",
    "encode_data",
    "encoded_length",
    "read_data_blocks",
    "truncate_encoded",
]

DATA_OPEN = "<data>"
DATA_CLOSE = "</data>"

# Structural JSON characters are never among these, so every match sits inside a string literal,
# where a \uXXXX escape means the same character.
_ESCAPED = re.compile("[<>\u0085\u2028\u2029\ud800-\udfff]")
_BLOCK = re.compile(f"{re.escape(DATA_OPEN)}\n(.*?)\n{re.escape(DATA_CLOSE)}", re.DOTALL)


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def encode_data(value: object) -> str:
    """``value`` as one line of compact JSON that cannot close a tag or start a line."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _ESCAPED.sub(_escape, text)


def data_block(value: object) -> str:
    """The data block of a prompt: ``<data>``, the encoded document, ``</data>``, one line each."""
    return f"{DATA_OPEN}\n{encode_data(value)}\n{DATA_CLOSE}"


def encoded_length(text: str) -> int:
    """The characters ``text`` takes inside a data block (its JSON literal, quotes left out)."""
    return len(encode_data(text)) - 2


def truncate_encoded(text: str, limit: int) -> str:
    """``text`` cut as :func:`~maestro.domain.common.truncate` cuts, to fit ``limit`` characters
    once encoded: a cap on a prompt line bounds what the line costs in the prompt, escapes
    included (a text of ``<`` would otherwise be six times its cap)."""
    cut = truncate(text, limit)
    if encoded_length(cut) <= limit:
        return cut  # the usual case: nothing in it needs an escape
    if len(text) < 2:
        return ELLIPSIS  # one character whose escape is longer than the limit
    # A longer cut never encodes shorter, so the longest that fits is found by bisection.
    # Below len(text) every cut ends in the ellipsis; truncate(text, 1) is the ellipsis alone.
    low, high = 1, min(limit, len(text) - 1)
    while low < high:
        middle = (low + high + 1) // 2
        if encoded_length(truncate(text, middle)) <= limit:
            low = middle
        else:
            high = middle - 1
    return truncate(text, low)


def read_data_blocks(text: str) -> list[Any]:
    """The documents of the data blocks in ``text``, in order (for scripted models and tests)."""
    return [json.loads(found) for found in _BLOCK.findall(text)]


def data_strings(value: object) -> list[str]:
    """Every string in a decoded document, keys left out, in document order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in data_strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in data_strings(item)]
    return []
