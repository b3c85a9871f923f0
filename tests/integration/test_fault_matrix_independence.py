"""The fault matrix's outcomes depend on nothing but the cell (#17): not on the cells played
before it on the same stack, in any order.

Each test plays its cells on a fresh :class:`Matrix` (one embedded stack; two cannot share one
process's moto, so these are apart from ``test_fault_matrix.py``'s shared one) and checks each
as that file does: the pinned outcome, nothing lost, duplicated or undecided, the stack quiet.
"""

from __future__ import annotations

import random

import pytest
from fault_outcomes import check

from maestro_dev.local.fault_matrix import CELLS, Cell, Matrix

pytestmark = pytest.mark.integration


def _cell(fault: str, stage: str) -> Cell:
    """The cell playing ``fault`` at ``stage`` (alone, or with the stages it shares a run with)."""
    return next(c for c in CELLS if c.fault == fault and stage in c.stages)


def test_a_cell_after_a_long_flusher_outage_starts_from_a_quiet_stack() -> None:
    """The order that showed the leak: the long outage left a debounce signal received as often
    as its redrive policy allows in its queue (it moves to the DLQ on its next receive), and the
    next cell found it in the DLQ and counted its redrive as its own."""
    with Matrix() as matrix:
        for cell in (_cell("ddb-outage-long", "flusher"), _cell("crash-before", "flusher")):
            check(matrix.run(cell))


# Cells that leave the most behind them (records in a queue or a DLQ, retried executions,
# dropped sweeps, texts retried) and cells that count what they find (redrives, redeliveries).
SHUFFLED = (
    ("ddb-outage-long", "watcher"),
    ("ddb-outage-long", "flusher"),
    ("ddb-outage", "flusher"),
    ("crash-before", "flusher"),
    ("crash-after", "watcher"),
    ("redelivered", "flusher"),
    ("twilio-down", "watcher"),
    ("bus-down", "announce"),
)
# An order that puts a flusher cell right after the long flusher outage (the leak showed there).
SEED = 2


def test_cells_in_a_shuffled_order_end_as_pinned() -> None:
    order = [_cell(fault, stage) for fault, stage in SHUFFLED]
    random.Random(SEED).shuffle(order)
    with Matrix() as matrix:
        for position, cell in enumerate(order):
            try:
                check(matrix.run(cell))
            except AssertionError as failed:
                played = " → ".join(c.id for c in order[: position + 1])
                raise AssertionError(f"after {played}: {failed}") from failed
