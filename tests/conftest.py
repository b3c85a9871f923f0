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
from typing import Any

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


# How `make test` spreads the tests over its workers (xdist, ``-n 4``):
# - Tests that share one expensive module- or session-scoped setup run on one worker, so the
#   setup is built once rather than once on every worker that runs one of them. (xdist's own
#   ``--dist loadgroup`` cannot do it under pytest 9: it renames ``item._nodeid``, which pytest 9
#   no longer reads.)
# - Groups go first (the scheduler orders them by size), then the tests marked ``slow`` (ten
#   seconds or more), then the rest: the long ones start early and the short ones fill the end.
SHARED_SETUP_GROUPS = {
    "tests/infra/": "synth",  # `python app.py` for every environment, about 20 s
    "tests/e2e/test_demo.py": "demo",  # `maestro demo` once, about 15 s
    "tests/integration/test_least_privilege.py": "least-privilege",  # its stories, about 45 s
    "tests/console/": "console",  # one console server and one browser, about 40 s
}


def _shared_setup_group(nodeid: str) -> str:
    for prefix, group in SHARED_SETUP_GROUPS.items():
        if nodeid.startswith(prefix):
            return group
    return nodeid


class _SharedSetupScheduler:
    """xdist's scheduler hook, registered only where xdist runs (``-p no:xdist`` has no such
    hook, and pytest refuses a conftest that implements an unknown one)."""

    @staticmethod
    def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
        from xdist.scheduler import LoadScopeScheduling

        class SharedSetupScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist is untyped
            def _split_scope(self, nodeid: str) -> str:
                return _shared_setup_group(nodeid)

        return SharedSetupScheduling(config, log)


def pytest_configure(config: pytest.Config) -> None:
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_SharedSetupScheduler(), "shared-setup-scheduler")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
