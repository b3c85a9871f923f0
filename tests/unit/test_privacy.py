"""Masking for logs and error text (#11), and maestro.observability's masking logger."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from maestro.domain.memory import mask_phone_numbers as window_mask
from maestro.domain.privacy import MASK, mask_log, mask_phone_numbers, mask_text
from maestro.observability import logger

PHONE = "+14155550100"


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        (f"from {PHONE}", "from +…0100"),
        ("call (415) 555-0199 today", "call …0199 today"),
        ("or 415.555.0199", "or …0199"),
        ("+447911123456 in London", "+…3456 in London"),
    ],
)
def test_phone_numbers_keep_their_last_four_digits(text: str, masked: str) -> None:
    assert mask_phone_numbers(text) == masked
    assert mask_text(text) == masked


@pytest.mark.parametrize(
    "text",
    [
        "pkg-85fc03bda0a82998-3",
        "conv-3f2a9c0d1e4b5a6978123456",
        "SMt000001",
        "2026-11-30 06:03:20,831+0000",
        "1780000000000",
        "WO-204 costs 1500",
    ],
)
def test_ids_times_and_amounts_are_left_alone(text: str) -> None:
    assert mask_text(text) == text


def test_the_memory_window_masks_numbers_the_same_way() -> None:
    text = f"text me at {PHONE} or (415) 555-0199"
    assert window_mask(text) == mask_phone_numbers(text)


def test_the_inputs_pydantic_quotes_are_erased() -> None:
    class Reading(BaseModel):
        level: int

    with pytest.raises(ValidationError) as caught:
        Reading(level="the ceiling is sagging, call 415 555 0100")  # type: ignore[arg-type]
    masked = mask_text(str(caught.value))
    assert "sagging" not in masked
    assert "0100" not in masked
    assert f"input_value={MASK}, input_type=str" in masked


def test_a_log_record_loses_bodies_and_numbers_but_keeps_its_shape() -> None:
    error = ValueError(f"no reply from {PHONE}")
    record: dict[str, Any] = {
        "message": f"texted {PHONE}",
        "Body": "the ceiling is sagging",
        "count": 3,
        "ok": True,
        "nested": {"text": "my words", "to": ["(415) 555-0199"], "transcript": ["a", "b"]},
        "error": error,
        "none": None,
    }
    assert mask_log(record) == {
        "message": "texted +…0100",
        "Body": MASK,
        "count": 3,
        "ok": True,
        "nested": {"text": MASK, "to": ["…0199"], "transcript": [MASK, MASK]},
        "error": "no reply from +…0100",
        "none": None,
    }


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    handler = logger.registered_handler
    assert isinstance(handler, logging.StreamHandler)
    buffer = io.StringIO()
    previous = handler.setStream(buffer)
    try:
        yield buffer
    finally:
        handler.setStream(previous)


def test_the_logger_writes_masked_json(log_lines: io.StringIO) -> None:
    try:
        raise ValueError(f"could not reach {PHONE}")
    except ValueError:
        logger.exception(
            "inbound from %s", PHONE, extra={"body": "gas smell in 3B", "message_id": "SM1"}
        )
    (line,) = log_lines.getvalue().splitlines()
    written = json.loads(line)
    assert written["message"] == "inbound from +…0100"
    assert written["body"] == MASK
    assert written["message_id"] == "SM1"
    assert written["exception_name"] == "ValueError"
    assert "could not reach +…0100" in written["exception"]
    assert PHONE not in line
    assert "gas smell" not in line
