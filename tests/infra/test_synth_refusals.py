"""``python app.py`` (what ``cdk synth`` and ``make synth`` run) refuses an environment that would
alarm or page no one: it exits non-zero, names the environment and the key to set, and writes no
template."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from infra_synth import ROOT, synthesized_environments

from infra.config import CONTEXT_KEY


def _app(outdir: Path, context: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "CDK_OUTDIR": str(outdir),
        "CDK_CONTEXT_JSON": json.dumps({"aws:cdk:bundling-stacks": [], **context}),
    }
    for name in ("CDK_DEFAULT_ACCOUNT", "CDK_DEFAULT_REGION", "AWS_PROFILE"):
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, str(ROOT / "app.py"), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_staging_synth_without_alarm_email_exits_non_zero_saying_what_to_set(
    tmp_path: Path,
) -> None:
    """Naive: staging synthesized without a subscriber on its alarm topic."""
    environments = synthesized_environments()  # a real on-call number; no alarm_email
    environments["staging"] = {**environments["staging"], "alarm_email": ""}
    done = _app(tmp_path, {"env": "staging", CONTEXT_KEY: environments})
    assert done.returncode == 1, done.stderr[-2000:]
    assert "maestro: cannot synthesize 'staging'" in done.stderr
    assert f"{CONTEXT_KEY} → staging" in done.stderr
    assert "alarm_email is empty" in done.stderr
    assert "on_call_pm_phone" not in done.stderr  # its number is a real one
    assert "Traceback" not in done.stderr
    assert not list(tmp_path.glob("*.template.json"))


def test_prod_as_committed_is_refused_for_its_subscriber_and_its_test_number(
    tmp_path: Path,
) -> None:
    """``ENV=prod make synth`` on cdk.json's placeholders: both keys named."""
    done = _app(tmp_path, {}, "--env", "prod")
    assert done.returncode == 1, done.stderr[-2000:]
    assert "cannot synthesize 'prod'" in done.stderr
    assert "alarm_email is empty" in done.stderr
    assert "on_call_pm_phone +15005550006 is one of Twilio's magic test numbers" in done.stderr
    assert not list(tmp_path.glob("*.template.json"))
