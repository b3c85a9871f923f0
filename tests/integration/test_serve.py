"""`maestro serve` on loopback, driven by `maestro send`, `executions` and `step`; its operator
routes answer the operator alone (the run's token, a loopback Host, no foreign Origin)."""

from __future__ import annotations

import http.client
import json
import os
import queue
import signal
import stat
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from embedded import run_cli, serving

from maestro_dev.local.operator_access import TOKEN_ENV, TOKEN_HEADER
from maestro_dev.local.server import LocalServer

pytestmark = pytest.mark.integration


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[LocalServer]:
    with serving(monkeypatch, tmp_path, speed=1000.0, step=True) as srv:
        yield srv


_cli = run_cli


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


def _request(
    server: LocalServer, method: str, path: str, headers: dict[str, str], body: bytes = b""
) -> tuple[int, str]:
    """One request with exactly these headers (http.client adds no Host when one is given)."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in {**headers, "Content-Length": str(len(body))}.items():
            connection.putheader(name, value)
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def _paused_gate(server: LocalServer, sender: str, text: str) -> str:
    """Send a text; the name of its execution once it waits at its first gate (step mode)."""
    code, sent = _cli("send", "--url", server.url, "--from", sender, text)
    assert code == 0, sent
    return _wait_for(lambda: next((e["name"] for e in server.executions() if e["paused_at"]), ""))


def _gate_of(server: LocalServer, name: str) -> str | None:
    return next(e["paused_at"] for e in server.executions() if e["name"] == name)


def test_a_cross_origin_post_releases_no_gate(server: LocalServer) -> None:
    """A page the operator visits posts a form to /local/step: the browser sends its own Origin
    and the right Host, but the page knows no token."""
    name = _paused_gate(server, "+14155550142", "the garbage disposal hums but won't spin")
    own_host = f"127.0.0.1:{server.port}"
    forged = json.dumps({"execution": name}).encode()
    status, answer = _request(
        server,
        "POST",
        "/local/step",
        {"Host": own_host, "Origin": "https://coupons.example", "Content-Type": "text/plain"},
        forged,
    )
    assert status == 403, answer
    assert "origin" in answer
    # Even with the token (a page cannot have it), another Origin is refused.
    status, _ = _request(
        server,
        "POST",
        "/local/step",
        {"Host": own_host, "Origin": "null", TOKEN_HEADER: server.token},
        forged,
    )
    assert status == 403
    assert _gate_of(server, name) == "before the brain"
    assert server.refused["operator origin"] == 2
    # The operator's own page (the server's origin) with the token may.
    status, answer = _request(
        server,
        "POST",
        "/local/step",
        {"Host": own_host, "Origin": f"http://{own_host}", TOKEN_HEADER: server.token},
        forged,
    )
    assert status == 200, answer
    assert json.loads(answer)["released"] == "before the brain"


def test_a_rebound_host_reads_nothing(server: LocalServer) -> None:
    """DNS rebinding: a page's own name now resolves to 127.0.0.1, so the browser lets it read
    the answers; its requests carry its name in Host."""
    _paused_gate(server, "+14155550143", "water stain spreading on the bedroom ceiling")
    for host in (f"attacker.example:{server.port}", "127.0.0.1", "localhost:1", "127.0.0.1.nip.io"):
        for path in ("/local/ledger", "/local/executions"):
            # Even with the token: the Host says whose page this is.
            status, answer = _request(
                server, "GET", path, {"Host": host, TOKEN_HEADER: server.token}
            )
            assert status == 403, (host, path, answer)
            assert "pkg-" not in answer
            assert "Host must be" in answer
    assert server.refused["operator host"] == 8
    for host in (f"localhost:{server.port}", f"LOCALHOST:{server.port}", f"[::1]:{server.port}"):
        status, answer = _request(
            server, "GET", "/local/executions", {"Host": host, TOKEN_HEADER: server.token}
        )
        assert status == 200, (host, answer)
        assert "pkg-" in answer


def test_the_operator_routes_need_the_runs_token(server: LocalServer) -> None:
    name = _paused_gate(server, "+14155550144", "the intercom buzzes all night")
    own_host = {"Host": f"127.0.0.1:{server.port}"}
    step = json.dumps({"execution": name}).encode()
    for token in ({}, {TOKEN_HEADER: ""}, {TOKEN_HEADER: server.token[:-1] + "x"}):
        status, answer = _request(server, "POST", "/local/step", {**own_host, **token}, step)
        assert status == 401, answer
        assert TOKEN_HEADER in answer
        status, answer = _request(server, "GET", "/local/executions", {**own_host, **token})
        assert status == 401, answer
        assert name not in answer
    assert _gate_of(server, name) == "before the brain"
    assert server.refused["operator token"] == 6


def test_the_commands_find_the_token_or_are_told_where_it_is(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert _cli("executions", "--url", server.url)[0] == 0  # from the file serve wrote
    elsewhere = tmp_path / "another-home"
    elsewhere.mkdir()
    monkeypatch.setenv("HOME", str(elsewhere))  # no file: the server says where to look
    code, out = _cli("executions", "--url", server.url)
    assert code == 1
    assert out.startswith("401 ")
    assert f"serve-{server.port}.token" in out
    assert _cli("executions", "--url", server.url, f"--token={server.token}")[0] == 0
    monkeypatch.setenv(TOKEN_ENV, server.token)
    assert _cli("ledger", "--url", server.url)[0] == 0
    assert _cli("ledger", "--url", server.url, "--token", "not-the-token")[0] == 1


def test_serve_prints_its_token_once_and_no_secret_it_was_given(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`maestro serve` as the operator runs it, with secrets in its environment: what it prints
    (banner and logs, while it answers signed, junk and operator requests) names where a secret
    came from and never shows one. Its operator token is printed once and written to a file
    only the user can read, which the commands read; the file goes when it stops."""
    twilio_token = "tw-" + uuid.uuid4().hex
    anthropic_key = "sk-ant-api03-" + uuid.uuid4().hex
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "TWILIO_AUTH_TOKEN": twilio_token,
        "ANTHROPIC_API_KEY": anthropic_key,
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",  # the discard port: nothing leaves the host
        "PYTHONUNBUFFERED": "1",
    }
    env.pop(TOKEN_ENV, None)
    serve = subprocess.Popen(
        [sys.executable, "-m", "maestro_dev.cli", "serve", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stdout: queue.Queue[str] = queue.Queue()
    stderr: list[str] = []
    threading.Thread(target=lambda: [stdout.put(line) for line in serve.stdout or ()]).start()
    err_reader = threading.Thread(target=lambda: stderr.extend(serve.stderr or ()))
    err_reader.start()
    printed: list[str] = []
    try:
        while not (printed and printed[-1].startswith("  curl ")):
            printed.append(stdout.get(timeout=120))
        banner = "".join(printed)
        assert twilio_token not in banner
        assert "the one in TWILIO_AUTH_TOKEN" in banner  # where it came from, instead
        # Where its texts go, truly (the loopback Twilio, not a recording), and when a text
        # sent now is processed at the default speed.
        assert "recorded" not in banner
        assert "to a loopback Twilio on http://127.0.0.1:" in banner
        assert "at 60x: a text is processed about 5 s after" in banner
        url = printed[0].split(" on ", 1)[1].split()[0]
        port = int(url.rsplit(":", 1)[1])
        token_file = tmp_path / ".maestro" / f"serve-{port}.token"
        token = token_file.read_text()
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700

        monkeypatch.setenv("HOME", str(tmp_path))
        monkeypatch.delenv(TOKEN_ENV, raising=False)
        monkeypatch.setenv("TWILIO_AUTH_TOKEN", twilio_token)  # `maestro send` signs with it
        code, sent = _cli("send", "--url", url, "--from", "+14155550145", "the fridge ices up")
        assert code == 0, sent
        assert _cli("executions", "--url", url)[0] == 0  # the token, from its file
        code, refused = _cli("ledger", "--url", url, "--token", "guessed")
        assert code == 1, refused
        junk = urllib.request.Request(
            url + "/twilio/sms", data=b"Body=x", headers={"X-Twilio-Signature": "x"}
        )
        with pytest.raises(urllib.error.HTTPError) as edge:
            urllib.request.urlopen(junk, timeout=30)
        assert edge.value.code == 403
    finally:
        serve.send_signal(signal.SIGINT)  # Ctrl-C, as the operator stops it
        try:
            serve.wait(timeout=60)
        finally:
            serve.kill()
    err_reader.join(timeout=30)
    while not stdout.empty():
        printed.append(stdout.get())
    out, err = "".join(printed), "".join(stderr)
    assert serve.returncode == 0, err
    for secret in (twilio_token, anthropic_key):
        assert secret not in out + err
    assert out.count(token) == 1
    assert token not in err
    assert not token_file.exists()
