"""The README's quickstart, as the tests read it: its shell lines in order (tests/unit/test_docs.py
checks each exists; tests/e2e/test_quickstart.py runs them)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def quickstart_commands() -> list[str]:
    """The shell lines of the README's Quickstart section, in order, comments dropped."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Quickstart\n", 1)[1].split("\n## ", 1)[0]
    commands = []
    for block in re.findall(r"^```sh\n(.*?)^```", section, re.S | re.M):
        for line in block.splitlines():
            line = line.split(" #", 1)[0].strip()
            if line:
                commands.append(line)
    return commands
