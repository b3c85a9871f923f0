"""pyproject.toml's extras: each job installs what it imports, and no more (issue #23).

- `make demo`'s extra (`demo`, with the runtime) brings neither CDK, cfn-lint, the eval extras
  nor the console's server; `dev`, what `make test` installs, is the union of the others;
- moto is pinned to the minor release that ``maestro_dev/local/moto_patches.py`` reaches into;
- every optional package the ``maestro`` script names comes with the extra it names, and a
  command run without its extra names that extra instead of a traceback.

The demo run with nothing but the `demo` extra importable: tests/e2e/test_demo.py.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys

import pytest
from packaging.utils import canonicalize_name
from packaging.version import Version
from project_extras import (
    PROJECT,
    ROOT,
    base_requirements,
    extra_requirements,
    extras,
    installed_closure,
)

from maestro_dev import script

# What the first run must not install (issue #23): CDK, cfn-lint (and sympy through it), the
# eval extras (scipy, scikit-learn, matplotlib), the console's server and the test tools.
NOT_FOR_THE_DEMO = {
    "aws-cdk-lib",
    "cdk-nag",
    "cfn-lint",
    "sympy",
    "scipy",
    "scikit-learn",
    "matplotlib",
    "starlette",
    "uvicorn",
    "playwright",
    "pytest",
    "hypothesis",
    "mypy",
}


def test_the_demo_extra_brings_no_cdk_no_cfn_lint_no_eval_extras_no_console() -> None:
    demo = installed_closure([*base_requirements(), *extra_requirements("demo")])
    assert {"moto", "pyyaml"} <= demo
    assert not demo & NOT_FOR_THE_DEMO, sorted(demo & NOT_FOR_THE_DEMO)


def test_the_console_extra_adds_only_the_console_server_to_the_demo() -> None:
    demo = installed_closure([*base_requirements(), *extra_requirements("demo")])
    console = installed_closure([*base_requirements(), *extra_requirements("console")])
    assert {"starlette", "uvicorn"} <= console - demo
    assert not (console - demo) & (NOT_FOR_THE_DEMO - {"starlette", "uvicorn"})


def test_dev_is_the_union_of_the_other_extras() -> None:
    (union,) = extras()["dev"]
    name, _, listed = union.partition("[")
    assert name == PROJECT
    assert set(listed.rstrip("]").split(",")) == set(extras()) - {"dev"}


def test_moto_is_pinned_to_the_minor_release_the_patches_were_written_against() -> None:
    patches = (ROOT / "devtools/maestro_dev/local/moto_patches.py").read_text()
    named = re.search(r"workarounds for moto (\d+\.\d+\.\d+)", patches)
    assert named, "moto_patches.py names the moto release it was written against"
    written_for = Version(named[1])
    next_minor = Version(f"{written_for.major}.{written_for.minor + 1}.0")
    installed = Version(importlib.metadata.version("moto"))
    pins = [r for name in extras() for r in extra_requirements(name) if r.name == "moto"]
    assert pins
    for pin in pins:
        assert written_for in pin.specifier, pin
        assert installed in pin.specifier, pin
        assert next_minor not in pin.specifier, f"{pin} allows moto {next_minor}"
        assert "all" not in pin.extras, pin


def test_each_optional_module_the_script_names_comes_with_that_extra() -> None:
    owners = importlib.metadata.packages_distributions()
    for module, extra in script.EXTRA_OF_MODULE.items():
        declared = {canonicalize_name(r.name) for r in extra_requirements(extra)}
        assert {canonicalize_name(o) for o in owners[module]} & declared, (module, extra)


def test_a_command_run_without_its_extra_names_the_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # As on a venv made by `make demo`: the console's server is not installed.
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    monkeypatch.delitem(sys.modules, "maestro_dev.console.server", raising=False)
    assert script.main(["console", "--port", "0"]) == 2
    error = capsys.readouterr().err
    assert "needs uvicorn" in error
    assert "`console` extra" in error
    assert "pip install -e '.[console]'" in error
    assert "make console" in error


def test_a_missing_module_no_extra_brings_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(argv: object) -> int:
        raise ModuleNotFoundError("No module named 'maestro_dev.gone'", name="maestro_dev.gone")

    monkeypatch.setattr("maestro_dev.cli.main", broken)
    with pytest.raises(ModuleNotFoundError, match="gone"):
        script.main(["demo"])
