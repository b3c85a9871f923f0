"""The README's quickstart, run as written and in its order (issue #23).

Each `maestro …` line of the quickstart runs here through the CLI, in this process: `maestro
serve` starts the embedded stack's server (on a free port rather than 8787, so runs never
collide; its --speed and --step as written), the commands that talk to it get its --url, and
each is run again until it shows what the README says it shows (the idle window passes on the
server's clock). The server stops before the first command that does not talk to it (the
evals start stacks of their own). The evals write under a scratch directory, not the clone.

Not run here, each for its reason (a test of its own says so): the lines in ``NOT_RUN_HERE``.
"""

from __future__ import annotations

import shlex
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
from embedded import run_cli, serving
from readme_quickstart import ROOT, quickstart_commands

from maestro_dev.cli import build_parser

pytestmark = [pytest.mark.integration, pytest.mark.slow]

NOT_RUN_HERE = {
    "make demo": "tests/e2e/test_demo.py runs `maestro demo`, which is what `make demo` runs",
    "make console": "the console (issue #22) is a long-running web server; its own tests start it",
}
SHELL_SETUP = {"source .venv/bin/activate"}  # `maestro` on PATH: here it is called in-process

# What a command's output shows once the text sent before it has gone through (the README says
# so beside it), by the command's first words. A command not listed must just exit 0.
SHOWS = {
    ("executions",): "SUCCEEDED",
    ("wo", "list"): "WO-",
    ("ledger",): "decision.recorded",
}
WAIT_S = 30.0


def _shows(argv: list[str]) -> str | None:
    return next((text for words, text in SHOWS.items() if tuple(argv[: len(words)]) == words), None)


def _until_it_shows(argv: list[str], expected: str | None) -> str:
    deadline = time.monotonic() + WAIT_S
    while True:
        code, out = run_cli(*argv)
        if code == 0 and (expected is None or expected in out):
            return out
        if expected is None or time.monotonic() > deadline:
            raise AssertionError(f"`maestro {shlex.join(argv)}` exited {code}:\n{out}")
        time.sleep(0.25)


def test_the_quickstart_runs_as_written(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    work = tmp_path / "clone"
    work.mkdir()
    (work / "evals").symlink_to(ROOT / "evals")
    monkeypatch.chdir(work)  # .maestro/ (the eval runs and the report) lands here
    commands = quickstart_commands()
    ran: list[str] = []
    outputs: dict[str, str] = {}
    with ExitStack() as server_running:
        url: str | None = None
        for command in commands:
            if command in SHELL_SETUP or command in NOT_RUN_HERE:
                continue
            argv = shlex.split(command)
            assert argv[0] == "maestro", f"a quickstart line this test cannot run: {command}"
            args = build_parser().parse_args(argv[1:])
            if argv[1] == "serve":
                srv = server_running.enter_context(
                    serving(monkeypatch, tmp_path / "home", speed=args.speed, step=args.step)
                )
                url = srv.url
            elif hasattr(args, "url"):
                assert url is not None, f"`{command}` needs `maestro serve`, started before it"
                outputs[command] = _until_it_shows([*argv[1:], "--url", url], _shows(argv[1:]))
            else:
                server_running.close()
                url = None
                outputs[command] = _until_it_shows(argv[1:], None)
            ran.append(command)
    assert set(commands) == set(ran) | (set(commands) & (SHELL_SETUP | set(NOT_RUN_HERE)))
    assert [c.split()[1] for c in ran[:2]] == ["serve", "send"], ran
    ledger = next(out for command, out in outputs.items() if command.startswith("maestro ledger"))
    assert ledger.splitlines()[-1].endswith(" 0 shame"), ledger
    assert "SHAME" not in ledger
    assert any(command.startswith("maestro eval run") for command in ran)
    if any(command.startswith("maestro eval report") for command in ran):
        assert (work / ".maestro" / "eval-report.html").is_file()


@pytest.mark.parametrize(
    "command", [c for c in quickstart_commands() if c in NOT_RUN_HERE] or ["(none)"]
)
def test_a_quickstart_step_not_run_here_says_why(command: str) -> None:
    if command == "(none)":
        return
    pytest.skip(f"`{command}`: {NOT_RUN_HERE[command]}")
