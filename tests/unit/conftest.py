"""Unit tests are pure: no sockets, no AWS, no clock of their own."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _sockets_off(socket_disabled: None) -> None:
    """Every unit test runs with sockets disabled (pytest-socket), so none can reach a network."""
