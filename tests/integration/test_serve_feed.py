"""`maestro serve` at its default speed: a text sent is processed within seconds, and each
package is printed as it flows (started, paused at a gate, ended with its route, actions,
outcome and evidence count)."""

from __future__ import annotations

import io
import re
import time
from datetime import timedelta
from pathlib import Path

import pytest
from embedded import run_cli, serving, sms

from maestro_dev.cli import build_parser
from maestro_dev.local.serve_feed import PackageFeed
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import seed

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


def test_an_ended_package_waits_for_the_watcher_then_says_its_count_is_so_far() -> None:
    """Ended, its claims not read yet: the line waits (patience), then prints the count so
    far; once the watcher has read them, the count is whole and said without the caveat."""
    with LocalStack() as stack:
        seed(stack)
        sms(stack, "the porch light flickers")
        # The flush and the execution, without the settle that lets the watcher read.
        stack.clock.set(stack.clock.now() + timedelta(seconds=stack.idle + 1))
        stack.debounce.release_due()
        stack.poll_debounce()
        stack.wait_for_executions()
        waiting, impatient = io.StringIO(), io.StringIO()
        PackageFeed(stack, waiting).poll()
        assert "started" in waiting.getvalue()
        assert "SUCCEEDED" not in waiting.getvalue()  # the watcher has not read its claims
        PackageFeed(stack, impatient, patience=0).poll()
        assert (
            impatient.getvalue()
            .splitlines()[-1]
            .endswith("evidence 0, shame 0 so far (3 claims not read yet)")
        )
        # The watcher reads the events queue (and the new WO starts its own execution, whose
        # claims, unread yet, are not this package's).
        stack.advance(1)
        caught_up = io.StringIO()
        PackageFeed(stack, caught_up).poll()
    ended = caught_up.getvalue().splitlines()[-1]
    assert ended.endswith("; evidence 3, shame 0"), ended
