"""A small load run in every `make test` (the 1,000-message run is `make load`): many senders,
long first texts, unknown numbers and emergencies, all through the embedded stack."""

from __future__ import annotations

import pytest
from load import run_load

pytestmark = pytest.mark.integration


@pytest.mark.slow
def test_a_mixed_load_loses_nothing_and_escalates_every_emergency() -> None:
    report = run_load(senders=6, messages=36, seed_value=11)
    assert report.messages_accepted == report.messages_sent == 36
    assert report.executions == {"SUCCEEDED": report.packages}
    assert report.failed_open == 0
    assert report.emergencies > 0
    assert report.emergencies_escalated == report.emergencies
    assert report.emergency_pages >= report.emergencies
    assert (report.lost, report.duplicated, report.order_violations) == (0, 0, 0)
    assert report.ok
