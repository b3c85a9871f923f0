"""`maestro serve` on loopback, driven by `maestro send`, `executions` and `step`."""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Iterator

import pytest

from maestro_dev.cli import main
from maestro_dev.local.server import LocalServer, start

pytestmark = pytest.mark.integration


@pytest.fixture
def server() -> Iterator[LocalServer]:
    stack, srv = start(port=0, speed=1000.0, step=True)  # port 0: any free loopback port
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield srv
    finally:
        srv.httpd.shutdown()
        thread.join(timeout=10)
        stack.__exit__(None, None, None)


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(argv), out=out)
    return code, out.getvalue()


def _wait_for(predicate: object, timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()  # type: ignore[operator]
        if result:
            return str(result)
        time.sleep(0.1)
    raise AssertionError("timed out")


def test_send_then_step_through_both_gates(server: LocalServer) -> None:
    code, sent = _cli(
        "send", "--url", server.url, "--from", "+14155550100", "the hallway light is broken"
    )
    assert code == 0, sent
    assert "<Response></Response>" in sent

    def paused() -> str:
        _, listing = _cli("executions", "--url", server.url)
        return listing if "paused:" in listing else ""

    listing = _wait_for(paused)
    assert "paused: before the brain" in listing
    name = listing.split()[0]
    assert _cli("step", "--url", server.url, name)[0] == 0
    listing = _wait_for(lambda: paused() if "before the action" in paused() else "")
    assert _cli("step", "--url", server.url, name)[0] == 0
    done = _wait_for(
        lambda: (lambda s: s if "SUCCEEDED" in s else "")(
            _cli("executions", "--url", server.url)[1]
        )
    )
    assert name in done


@pytest.mark.parametrize("signed_with", ["a guessed token", None], ids=["wrong token", "junk"])
def test_a_forged_request_to_the_server_is_refused(
    server: LocalServer, signed_with: str | None
) -> None:
    import urllib.error
    import urllib.request

    from maestro.adapters.webhook_auth import twilio_signature
    from maestro_dev.local.events import form_body, sms_params, twilio_sid

    params = sms_params(twilio_sid("SM", "forged"), "+14155550100", "hi")
    url = server.url + "/twilio/sms"
    request = urllib.request.Request(
        url,
        data=form_body(params).encode(),
        headers={
            "X-Twilio-Signature": twilio_signature(signed_with, url, params)
            if signed_with
            else "forged",
            "Content-Type": "application/x-www-form-urlencoded",
        },
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403


def test_the_ledger_shows_the_evidence_behind_each_claim(server: LocalServer) -> None:
    code, sent = _cli("send", "--url", server.url, "--from", "+14155550100", "the oven is broken")
    assert code == 0, sent
    for _ in range(2):  # step mode: release the brain's gate, then the action's
        name = _wait_for(
            lambda: next(
                (line.split()[0] for line in _cli("executions", "--url", server.url)[1].splitlines()
                 if "paused:" in line),
                "",
            )
        )  # fmt: skip
        assert _cli("step", "--url", server.url, name)[0] == 0

    def claims() -> str:
        # The server's clock does not wait for the execution: its claims are read as they come,
        # the package's last (decision.recorded) after the others.
        _, listing = _cli("ledger", "--url", server.url)
        expected = ("wo.created", "message.sent", "decision.recorded")
        return listing if all(claim in listing for claim in expected) else ""

    listing = _wait_for(claims)
    assert listing.splitlines()[-1].endswith(" 0 shame"), listing
    assert "SHAME" not in listing
    created = next(line for line in listing.splitlines() if "wo.created" in line)
    package, wo = created.split()[2:4]
    assert wo.startswith("WO-"), created
    # Filtered by package, and by WO: the same claims, as JSON rows.
    _, by_package = _cli("ledger", "--url", server.url, "--package", package, "--json")
    rows = [json.loads(line) for line in by_package.splitlines()]
    assert rows
    assert {r["package_id"] for r in rows} == {package}
    assert {r["verdict"] for r in rows} == {"evidence"}
    assert {"wo.created", "message.sent", "decision.recorded"} <= {r["event_type"] for r in rows}
    _, by_wo = _cli("ledger", "--url", server.url, "--wo", wo, "--json")
    assert {json.loads(line)["wo_id"] for line in by_wo.splitlines()} == {wo}
    _, shame = _cli("ledger", "--url", server.url, "--shame", "--json")
    assert shame == ""
