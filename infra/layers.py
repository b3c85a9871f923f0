"""The two Lambda layers: maestro's runtime code, and its third-party dependencies.

- **Runtime layer**: ``layers/maestro/python/maestro`` as it is (runtime only: the dev package
  lives outside it, and an import contract keeps ``maestro`` from importing it).
- **Dependency layer**: ``[project].dependencies`` of pyproject.toml, each pinned to the version
  installed where the app is synthesized (the versions the tests ran with), built *locally*
  without Docker: ``pip install --platform manylinux… aarch64 --only-binary=:all: --target``.
  Tests skip bundling (``aws:cdk:bundling-stacks: []``), so they need neither pip nor network.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import cast

import aws_cdk as cdk
import jsii
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from infra.config import ROOT

RUNTIME = lambda_.Runtime.PYTHON_3_13
PYTHON_VERSION = "3.13"
ARCHITECTURE = lambda_.Architecture.ARM_64
# Wheels for Lambda's arm64 Python (Amazon Linux 2023, glibc 2.34): the newer manylinux tag
# first, the 2014 one for packages that still publish only that.
PLATFORMS = ("manylinux_2_28_aarch64", "manylinux2014_aarch64")
LAMBDA_UNZIPPED_LIMIT_BYTES = 250 * 1024 * 1024  # function code + every layer, unzipped

RUNTIME_LAYER_DIR = ROOT / "layers" / "maestro"
DEPENDENCY_LAYER_DIR = ROOT / "layers" / "dependencies"
RUNTIME_LAYER_EXCLUDE = ["**/__pycache__", "**/*.pyc", "**/*.egg-info", "**/.mypy_cache"]

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?")


def runtime_requirements(pyproject: Path = ROOT / "pyproject.toml") -> list[str]:
    """pyproject's runtime dependencies, each pinned to the installed version (with extras)."""
    specs: list[str] = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    pinned = []
    for spec in specs:
        match = _NAME.match(spec)
        if match is None:
            raise ValueError(f"cannot read the dependency {spec!r}")
        name, extras = match.group(1), match.group(2) or ""
        try:
            pinned.append(f"{name}{extras}=={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            pinned.append(spec)  # not installed here: let pip resolve the declared range
    return sorted(pinned)


def pip_command(requirements: list[str], target: Path) -> list[str]:
    """The local bundling command: binary wheels for Lambda's arm64 Python, no Docker."""
    platforms = [arg for platform in PLATFORMS for arg in ("--platform", platform)]
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
        "--no-compile",  # .pyc files for the synth's Python would be useless on Lambda's
        *platforms,
        "--implementation",
        "cp",
        "--python-version",
        PYTHON_VERSION,
        "--only-binary=:all:",
        "--target",
        str(target),
        *requirements,
    ]


def directory_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


@jsii.implements(cdk.ILocalBundling)
class PipLayerBundling:
    """Builds the dependency layer on this machine; it never falls back to Docker."""

    def __init__(self, requirements: list[str]) -> None:
        self.requirements = requirements

    def try_bundle(self, output_dir: str, options: cdk.BundlingOptions) -> bool:  # noqa: ARG002
        target = Path(output_dir) / "python"
        subprocess.run(pip_command(self.requirements, target), check=True)
        shutil.rmtree(target / "bin", ignore_errors=True)  # console scripts: not for Lambda
        for cache in list(target.rglob("__pycache__")):
            shutil.rmtree(cache, ignore_errors=True)
        size = directory_size(target)
        if size > LAMBDA_UNZIPPED_LIMIT_BYTES:
            raise RuntimeError(
                f"the dependency layer is {size / 2**20:.1f} MiB unzipped: over Lambda's limit"
            )
        return True


def built_here(
    source: Path, asset_hash: str, bundling: object, exclude: list[str] | None = None
) -> lambda_.Code:
    """An asset built on this machine by ``bundling`` (an ILocalBundling), identified by
    ``asset_hash``; where bundling is skipped (the tests), ``source`` as it is."""
    return lambda_.Code.from_asset(
        str(source),
        asset_hash_type=cdk.AssetHashType.CUSTOM,
        asset_hash=asset_hash,
        exclude=exclude,
        bundling=cdk.BundlingOptions(
            # Never pulled: the local bundling always answers (or fails loudly).
            image=cdk.DockerImage.from_registry(f"public.ecr.aws/sam/build-python{PYTHON_VERSION}"),
            local=cast(cdk.ILocalBundling, bundling),
        ),
    )


class Layers(Construct):
    """``self.runtime`` (maestro) and ``self.dependencies`` (third-party), arm64, one runtime."""

    def __init__(self, scope: Construct, construct_id: str, *, removal: cdk.RemovalPolicy) -> None:
        super().__init__(scope, construct_id)
        self.runtime = lambda_.LayerVersion(
            self,
            "Runtime",
            code=lambda_.Code.from_asset(str(RUNTIME_LAYER_DIR), exclude=RUNTIME_LAYER_EXCLUDE),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description="maestro: the code every function shares (runtime only)",
            removal_policy=removal,
        )
        self.requirements = runtime_requirements()
        fingerprint = json.dumps([self.requirements, PLATFORMS, PYTHON_VERSION])
        self.dependencies = lambda_.LayerVersion(
            self,
            "Dependencies",
            # The layer is a function of the pinned requirements and the target platform: the
            # same pins give the same asset, a new pin a new layer version.
            code=built_here(
                DEPENDENCY_LAYER_DIR,
                hashlib.sha256(fingerprint.encode()).hexdigest(),
                PipLayerBundling(self.requirements),
            ),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description=("maestro's dependencies: " + ", ".join(self.requirements))[:256],
            removal_policy=removal,
        )
