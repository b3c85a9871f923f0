"""Who may call `maestro serve`'s operator routes, and where the `maestro` command finds the
run's token (the server itself: tests/integration/test_serve.py)."""

from __future__ import annotations

import stat
from email.message import Message
from pathlib import Path

import pytest

from maestro_dev.local.operator_access import (
    TOKEN_ENV,
    TOKEN_HEADER,
    OperatorAccess,
    new_token,
    remove_token,
    token_for,
    token_path,
    write_token,
)

PORT = 48123
ACCESS = OperatorAccess(token="the-run-token", port=PORT)


@pytest.fixture(autouse=True)
def _home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(TOKEN_ENV, raising=False)


def _headers(*pairs: tuple[str, str]) -> Message:
    message = Message()
    for name, value in pairs:
        message[name] = value  # appends: a name given twice is sent twice
    return message


def _refused(*pairs: tuple[str, str]) -> str | None:
    refusal = ACCESS.refusal(_headers(*pairs))
    return None if refusal is None else refusal[0]


TOKEN = (TOKEN_HEADER, "the-run-token")


@pytest.mark.parametrize(
    "host",
    [f"127.0.0.1:{PORT}", f"localhost:{PORT}", f"LocalHost:{PORT}", f"[::1]:{PORT}"],
)
def test_a_loopback_host_with_the_servers_port_and_the_token_may(host: str) -> None:
    assert _refused(("Host", host), TOKEN) is None
    assert _refused(("Host", host), ("Origin", f"http://{host}"), TOKEN) is None


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1",  # no port: not what a client of this server sends
        f"127.0.0.1:{PORT + 1}",
        f"evil.example:{PORT}",
        f"127.0.0.1.evil.example:{PORT}",
        f"127.0.0.1:{PORT}.evil.example",
        f"0.0.0.0:{PORT}",
        f"127.0.0.2:{PORT}",
        "",
    ],
)
def test_any_other_host_is_refused(host: str) -> None:
    assert _refused(("Host", host), TOKEN) == "host"


def test_no_host_or_two_hosts_are_refused() -> None:
    assert _refused(TOKEN) == "host"
    assert _refused(("Host", f"127.0.0.1:{PORT}"), ("Host", "evil.example"), TOKEN) == "host"


@pytest.mark.parametrize(
    "origin",
    [
        "null",  # a sandboxed frame, a file:// page
        f"https://127.0.0.1:{PORT}",  # another scheme is another origin
        f"http://127.0.0.1:{PORT + 1}",
        f"http://tenant-portal.example:{PORT}",
        f"http://127.0.0.1:{PORT}/",
        "",
    ],
)
def test_another_origin_is_refused(origin: str) -> None:
    assert _refused(("Host", f"127.0.0.1:{PORT}"), ("Origin", origin), TOKEN) == "origin"


def test_a_missing_wrong_or_doubled_token_is_refused_with_401() -> None:
    host = ("Host", f"localhost:{PORT}")
    for token in [(), ((TOKEN_HEADER, ""),), ((TOKEN_HEADER, "the-run-tokeN"),), (TOKEN, TOKEN)]:
        refusal = ACCESS.refusal(_headers(host, *token))
        assert refusal is not None
        assert refusal[:2] == ("token", 401)
        assert str(token_path(PORT)) in refusal[2]  # the message says where the token is
    non_ascii = ACCESS.refusal(_headers(host, (TOKEN_HEADER, "jeton-é")))
    assert non_ascii is not None
    assert non_ascii[0] == "token"


def test_the_token_file_is_the_users_alone_and_replaces_a_stale_one(tmp_path: Path) -> None:
    first = write_token(PORT, "stale")
    token = new_token()
    assert write_token(PORT, token) == first == token_path(PORT)
    assert first.read_text() == token
    assert stat.S_IMODE(first.stat().st_mode) == 0o600
    assert stat.S_IMODE(first.parent.stat().st_mode) == 0o700
    assert [p.name for p in first.parent.iterdir()] == [first.name]  # no staging file left


def test_a_link_left_at_the_token_path_is_replaced_not_written_through(tmp_path: Path) -> None:
    target = tmp_path / "someone-elses-file"
    target.write_text("theirs")
    token_path(PORT).parent.mkdir(mode=0o700)
    token_path(PORT).symlink_to(target)
    write_token(PORT, "the-run-token")
    assert target.read_text() == "theirs"
    assert not token_path(PORT).is_symlink()
    assert token_path(PORT).read_text() == "the-run-token"


def test_a_run_removes_its_own_token_file_only() -> None:
    write_token(PORT, "a later run's")
    remove_token(PORT, "an earlier run's")
    assert token_path(PORT).read_text() == "a later run's"
    remove_token(PORT, "a later run's")
    assert not token_path(PORT).exists()
    remove_token(PORT, "a later run's")  # nothing left: nothing to do


def test_the_command_finds_the_token_given_then_in_the_env_then_in_the_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = f"http://127.0.0.1:{PORT}"
    assert token_for(url, None) is None
    write_token(PORT, "from-the-file")
    assert token_for(url, None) == "from-the-file"
    assert token_for(f"http://localhost:{PORT}/", None) == "from-the-file"
    assert token_for(f"http://[::1]:{PORT}", None) == "from-the-file"
    assert token_for(f"http://127.0.0.1:{PORT + 1}", None) is None  # another port's run
    monkeypatch.setenv(TOKEN_ENV, "from-the-env")
    assert token_for(url, None) == "from-the-env"
    assert token_for(url, "given") == "given"


@pytest.mark.parametrize(
    "url",
    [
        f"http://ops-box.example:{PORT}",
        f"http://127.0.0.1.evil.example:{PORT}",
        f"http://192.168.1.20:{PORT}",
        "http://127.0.0.1",  # no port: no file to pick
    ],
)
def test_the_file_token_is_never_sent_beyond_loopback(url: str) -> None:
    write_token(PORT, "from-the-file")
    assert token_for(url, None) is None
    assert token_for(url, "given") == "given"  # the user's own choice


def test_a_new_token_can_always_be_passed_as_the_next_argument() -> None:
    """`maestro step --token <token>` as serve prints it: a token starting with "-" would be
    read as an option (one urlsafe token in 64 did)."""
    from maestro_dev.cli import build_parser

    for _ in range(500):
        token = new_token()
        args = build_parser().parse_args(["executions", "--token", token])
        assert args.token == token
