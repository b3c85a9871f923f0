"""`maestro demo` with nothing importable but what `make demo` installs (issue #23).

`make demo` installs the runtime and the `demo` extra alone; this venv holds everything. So the
demo runs here in a fresh interpreter in which every module of a distribution outside that
install (as pyproject.toml and the installed metadata say) fails to import, as it would on a
fresh clone after `make demo`: an import of CDK, matplotlib, the console's server or a test tool
on the demo's path fails this test. `maestro serve`'s module is imported there too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from project_extras import (
    ROOT,
    base_requirements,
    extra_requirements,
    installed_closure,
    modules_outside,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# Runs in the child: every blocked top-level module fails to import, then the `maestro` script.
CHILD = """
import importlib.abc, json, sys

BLOCKED = frozenset(json.loads(sys.argv[1]))


class NotInstalledByMakeDemo(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"{name!r} is not in the demo extra", name=name)
        return None


sys.meta_path.insert(0, NotInstalledByMakeDemo())
import maestro_dev.local.server  # `maestro serve`'s, the quickstart's next step
from maestro_dev.script import main

sys.exit(main(["demo", "--json"]))
"""


def test_the_demo_runs_with_only_what_make_demo_installs() -> None:
    blocked = modules_outside(
        installed_closure([*base_requirements(), *extra_requirements("demo")])
    )
    # The check has teeth: what the first run leaves out is installed here, and blocked.
    assert {"aws_cdk", "cfnlint", "matplotlib", "sklearn", "starlette", "pytest"} <= blocked
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}  # the offline brain
    result = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(sorted(blocked))],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    report = json.loads(result.stdout)
    assert report["packages"] == 6
    assert report["shame"] == 0
