"""`maestro serve` at its default speed: a text sent is processed within seconds, and each
package is printed as it flows (started, paused at a gate, ended with its route, actions,
outcome and evidence count)."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import pytest
from embedded import run_cli, serving

from maestro_dev.cli import build_parser

pytestmark = pytest.mark.integration


def _lines(feed: io.StringIO, pattern: str, timeout: float) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [line for line in feed.getvalue().splitlines() if re.search(pattern, line)]
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"nothing matched {pattern!r} in {timeout} s:\n{feed.getvalue()}")


@pytest.mark.slow  # about 10 s: the idle window's 5 real seconds, at the default speed
def test_a_text_sent_to_serve_at_its_default_speed_flows_within_seconds(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    speed = build_parser().parse_args(["serve"]).speed
    feed = io.StringIO()
    with serving(monkeypatch, tmp_path, speed=speed, step=False, feed=feed) as server:
        sent_at = time.monotonic()
        code, sent = run_cli(
            "send", "--url", server.url, "--from", "+14155550100", "a kitchen cabinet door is loose"
        )
        assert code == 0, sent
        (ended,) = _lines(feed, r"^package pkg-\S+ SUCCEEDED: ", timeout=30)
        took = time.monotonic() - sent_at
    # The 5-minute idle window at the default speed is 5 real seconds; at --speed 1 it was 300.
    assert took < 20, took
    name = ended.split()[1]
    (started,) = [line for line in feed.getvalue().splitlines() if "started" in line]
    assert started == f"package {name} started: 1 text from +…0100 (trigger idle_timeout)"
    assert "route reasoning; actions create_wo; outcome create_wo done → WO-" in ended
    evidence = re.search(r"; evidence (\d+), shame (\d+)$", ended)
    assert evidence, ended
    # The reply, the new WO and the decision: each claim read back before the line printed.
    assert (int(evidence[1]), int(evidence[2])) == (3, 0), ended
    assert "+14155550100" not in feed.getvalue()  # the operator's terminal gets it masked


def test_serve_says_where_a_package_paused_and_how_to_release_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    feed = io.StringIO()
    with serving(monkeypatch, tmp_path, speed=60.0, step=True, feed=feed) as server:
        code, sent = run_cli(
            "send", "--url", server.url, "--from", "+14155550100", "a cabinet hinge snapped"
        )
        assert code == 0, sent
        (paused,) = _lines(feed, r" paused ", timeout=30)
        name = paused.split()[1]
        assert paused == (
            f"package {name} paused before the brain: `maestro step {name}` releases it"
        )
        assert run_cli("step", "--url", server.url, name)[0] == 0
        _lines(feed, r" paused before the action", timeout=30)
        assert run_cli("step", "--url", server.url, name)[0] == 0
        (ended,) = _lines(feed, rf"^package {name} SUCCEEDED: ", timeout=30)
    assert "evidence" in ended
