"""pyproject.toml's extras, and what installing one of them brings (from the installed metadata).

Shared by tests/unit/test_extras.py and tests/e2e/test_demo.py.
"""

from __future__ import annotations

import importlib.metadata
import tomllib
from collections.abc import Iterable
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "maestro"
# A venv's own tooling, present in every venv whatever was installed: never blocked.
VENV_TOOLING = {"pip", "setuptools", "wheel"}


def project() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]  # type: ignore[no-any-return]


def extras() -> dict[str, list[str]]:
    return project()["optional-dependencies"]  # type: ignore[return-value]


def base_requirements() -> list[Requirement]:
    return [Requirement(spec) for spec in project()["dependencies"]]  # type: ignore[attr-defined]


def extra_requirements(extra: str) -> list[Requirement]:
    """The extra's requirements, its references to the project's other extras expanded."""
    found: list[Requirement] = []
    for spec in extras()[extra]:
        requirement = Requirement(spec)
        if canonicalize_name(requirement.name) == PROJECT:
            for other in sorted(requirement.extras):
                found.extend(extra_requirements(other))
        else:
            found.append(requirement)
    return found


def installed_closure(requirements: Iterable[Requirement]) -> set[str]:
    """Every installed distribution the requirements bring, theirs included (canonical names)."""
    names: set[str] = set()
    done: set[tuple[str, str]] = set()
    todo = list(requirements)
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        try:
            needs = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:
            continue  # not for this platform or Python (its marker), so not installed
        names.add(name)
        for extra in {"", *requirement.extras}:
            if (name, extra) in done:
                continue
            done.add((name, extra))
            for spec in needs:
                child = Requirement(spec)
                if child.marker is None:
                    if extra == "":
                        todo.append(child)
                elif child.marker.evaluate({"extra": extra}):
                    todo.append(child)
    return names


def modules_outside(distributions: set[str]) -> set[str]:
    """Top-level modules installed here by distributions outside the given ones."""
    return {
        module
        for module, owners in importlib.metadata.packages_distributions().items()
        if not {canonicalize_name(owner) for owner in owners}
        & (distributions | VENV_TOOLING | {PROJECT})
    }
