"""Each function's log lines on the embedded stack name that function, as separate Lambdas'
would: nothing one handler appended to the logger carries over to the next."""

from __future__ import annotations

import json
import threading
from collections import defaultdict

import pytest
from embedded import captured_logs, sms

from maestro.observability import logger
from maestro_dev.local import lambda_logs
from maestro_dev.local.stack import LocalStack
from maestro_dev.local.world import MARIA, seed

pytestmark = pytest.mark.integration


def test_each_function_logs_under_its_own_name_after_the_pipeline_ran() -> None:
    with LocalStack() as stack, captured_logs() as buffer:
        seed(stack)
        # The first package runs the pipeline's steps (persist, announce, …); the second text's
        # flush then logs from the flusher, after them, in the same process.
        sms(stack, "the dishwasher will not drain", MARIA.phone)
        stack.advance(stack.idle + 1)
        sms(stack, "and the garbage disposal hums", MARIA.phone)
        stack.advance(stack.idle + 1)
    names: dict[str, set[str | None]] = defaultdict(set)
    for line in buffer.getvalue().splitlines():
        record = json.loads(line)
        names[record["message"]].add(record.get("function_name"))
    assert names["package started"] == {"maestro-flusher"}
    assert names["claim checked"] == {"maestro-watcher"}
    assert logger.get_current_keys().get("function_name") is None  # nothing left behind


def test_an_invocation_leaves_no_key_behind_even_when_its_handler_appended_one() -> None:
    with captured_logs() as buffer:
        with lambda_logs.invocation("maestro-persist", "req-1", correlation_id="pkg-1"):
            logger.append_keys(function_name="maestro-persist", left="behind")
            logger.info("in persist")
        with lambda_logs.invocation("maestro-flusher", "req-2"):
            logger.info("in the flusher")
    persist, flusher = (json.loads(line) for line in buffer.getvalue().splitlines())
    assert (persist["function_name"], persist["correlation_id"]) == ("maestro-persist", "pkg-1")
    assert flusher["function_name"] == "maestro-flusher"
    assert "left" not in flusher
    assert "correlation_id" not in flusher
    assert flusher["function_request_id"] == "req-2"


def test_two_invocations_at_once_on_two_threads_each_log_under_their_own_name() -> None:
    """The embedded stack runs executions on threads: a handler that sets the logger's shared
    keys (as inject_lambda_context does) lends none of them to another thread's invocation."""
    inside = threading.Barrier(2)
    done = threading.Barrier(2)

    def run(name: str) -> None:
        with lambda_logs.invocation(name, f"req-{name}"):
            logger.append_keys(function_name=name)  # the shared keys, as the decorator sets
            inside.wait(timeout=10)
            logger.info(f"from {name}")
            done.wait(timeout=10)

    with captured_logs() as buffer:
        threads = [
            threading.Thread(target=run, args=(name,))
            for name in ("maestro-persist", "maestro-flusher")
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=10)
    records = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert {r["message"]: r["function_name"] for r in records} == {
        "from maestro-persist": "maestro-persist",
        "from maestro-flusher": "maestro-flusher",
    }
