"""Hypothesis profiles for every test directory.

``ci`` is the default, so ``make test`` and CI run the same examples every time: a red build is
reproducible and a green one is not luck. ``random`` is for hunting bugs locally
(``make fuzz``, or ``HYPOTHESIS_PROFILE=random``); whatever it finds is kept as an
``@example`` on the property, so the ``ci`` profile checks it from then on.

This module is imported before any test module, so the ``@settings`` of a test inherit the
loaded profile for every value they do not set themselves.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,  # examples from a hash of the test, not a random seed (implies no database)
    deadline=None,  # a slow machine must not turn a pass into a failure
    print_blob=True,  # a failure prints the blob that reproduces it
    # The one check left that depends on the clock rather than on the examples.
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "random",
    derandomize=False,
    deadline=None,
    print_blob=True,
    max_examples=int(os.environ.get("HYPOTHESIS_MAX_EXAMPLES", "1000")),
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _no_model_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reaches a real model: the demo and `maestro serve` use Anthropic when a key is
    set, so a developer's key is hidden from every test (they run the offline brain, or a
    scripted model they are given)."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
