"""The CDK app, synthesized once for the whole session: ``python app.py``, every environment of
cdk.json (staging and prod with an alarm subscriber and an on-call number given as context:
``infra_synth.REACHABLE``), cdk-nag on, asset bundling skipped (no Docker, no pip, no network),
into a temp dir.

Tests read the templates it wrote (the real synth, not a stack built on the side).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from infra_synth import ROOT, Synth, cdk_environments, synthesized_environments

from infra.config import CONTEXT_KEY


@pytest.fixture(scope="session")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synth]:
    outdir = tmp_path_factory.mktemp("cdk.out")
    env = {
        **os.environ,
        "CDK_OUTDIR": str(outdir),
        # Skip asset bundling for every stack: the dependency layer is not built (no pip, no
        # Docker, no network); its asset points at its source directory.
        "CDK_CONTEXT_JSON": json.dumps(
            {
                "aws:cdk:bundling-stacks": [],
                "env": ",".join(cdk_environments()),
                CONTEXT_KEY: synthesized_environments(),
            }
        ),
    }
    for name in ("CDK_DEFAULT_ACCOUNT", "CDK_DEFAULT_REGION", "AWS_PROFILE"):
        env.pop(name, None)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(ROOT / "app.py")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        pytest.fail(f"python app.py failed ({done.returncode}):\n{done.stderr[-6000:]}")
    templates = {
        name: json.loads((outdir / f"maestro-{name}.template.json").read_text())
        for name in cdk_environments()
    }
    eval_templates = {
        name: json.loads(path.read_text())
        for name in cdk_environments()
        if (path := outdir / f"maestro-{name}-eval.template.json").is_file()
    }
    return Synth(
        outdir=outdir,
        templates=templates,
        seconds=seconds,
        stderr=done.stderr,
        eval_templates=eval_templates,
    )


@pytest.fixture(params=cdk_environments())
def env(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name
