"""One console for every test here (a session-scoped server: tests/conftest.py keeps this
directory on one xdist worker), and a run with a lying messenger that several tests read.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from console_harness import RUN_TIMEOUT, Console

from maestro_dev.console.controller import LocalController
from maestro_dev.console.server import ConsoleServer
from maestro_dev.eval_harness.loader import SCENARIOS


@pytest.fixture(scope="session")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    moto = logging.getLogger("moto")
    level = moto.level
    moto.setLevel(logging.CRITICAL)  # its ASL interpreter logs every caught error
    controller = LocalController(SCENARIOS, tmp_path_factory.mktemp("console-runs"))
    server = ConsoleServer(controller).start()
    yield Console(server, controller)
    for run in controller.runs():
        if run["status"] not in ("passed", "failed", "stopped", "error"):
            controller.stop(run["run_id"])
            controller.wait_finished(run["run_id"], 20)
    server.stop()
    moto.setLevel(level)


@pytest.fixture(autouse=True)
def _no_run_left_live(console: Console) -> Iterator[None]:
    """A test that fails while its run is held must not leave it live for the next (one live
    run at a time): stopped here."""
    yield
    for run in console.controller.runs():
        if run["status"] not in ("passed", "failed", "stopped", "error"):
            console.controller.stop(run["run_id"])
            console.controller.wait_finished(run["run_id"], 20)


@pytest.fixture(scope="session")
def lying_run(console: Console) -> tuple[str, list[str]]:
    """leak-204 played to its end with a messenger that claims its sends and never calls
    Twilio: (the run's id, the SIDs it made up)."""
    from maestro.adapters.twilio_sms import TwilioMessenger
    from maestro.ports.messaging import SentMessage

    lies: list[str] = []

    def lie(self: TwilioMessenger, to: str, body: str, *, idempotency_key: str) -> SentMessage:
        lies.append(sid := f"SM{len(lies) + 0xC0FFEE:032x}")
        return SentMessage(sid=sid, to=to, body=body, status="queued", via="twilio")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(TwilioMessenger, "send", lie)
        run_id = console.start("leak-204", "all")
        console.controller.wait_finished(run_id, RUN_TIMEOUT)
    assert lies, "the liar was never asked to send"
    return run_id, lies
