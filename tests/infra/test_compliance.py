"""cdk-nag (AwsSolutions) and cfn-lint over every synthesized template."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path
from typing import Any

from infra_synth import ROOT, Synth, cdk_environments


def _nag_rows(synth: Synth, env: str) -> list[dict[str, str]]:
    report = synth.outdir / f"AwsSolutions--maestro-{env}-NagReport.csv"
    with report.open() as handle:
        return list(csv.DictReader(handle))


def _suppressions(template: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(resource, rule, reason) for every cdk-nag suppression written into the template."""
    found = []
    for lid, resource in template["Resources"].items():
        for rule in resource.get("Metadata", {}).get("cdk_nag", {}).get("rules_to_suppress", []):
            found.append((lid, rule["id"], rule["reason"]))
    return found


def test_cdk_nag_finds_no_unsuppressed_error(synth: Synth, env: str) -> None:
    rows = _nag_rows(synth, env)
    assert rows, "no cdk-nag report: the AwsSolutions checks did not run"
    open_findings = [
        (r["Rule ID"], r["Resource ID"], r["Rule Level"])
        for r in rows
        if r["Compliance"] == "Non-Compliant"
    ]
    assert open_findings == []
    # (python app.py also fails on an unsuppressed error: error annotations fail synthesis.)


def test_every_suppression_gives_a_specific_reason(synth: Synth, env: str) -> None:
    suppressions = _suppressions(synth.templates[env])
    assert suppressions
    for lid, rule, reason in suppressions:
        assert rule.startswith("AwsSolutions-"), (lid, rule)
        assert len(reason) >= 80, f"{lid} {rule}: say why, specifically: {reason!r}"
    # One reason per rule, never a blanket: a rule's reason says why *this* stack needs it.
    reasons_by_rule: dict[str, set[str]] = {}
    for _, rule, reason in suppressions:
        reasons_by_rule.setdefault(rule, set()).add(reason)
    assert set(reasons_by_rule) <= {
        "AwsSolutions-IAM4",
        "AwsSolutions-IAM5",
        "AwsSolutions-L1",
        "AwsSolutions-SMG4",
        "AwsSolutions-SQS3",
        "AwsSolutions-APIG4",
        "AwsSolutions-COG4",
        "AwsSolutions-SF1",  # state_machine_log_level ERROR (prod), for cost
    }, "a new kind of suppression: review it, then add it here and to docs/deploy.md"


def test_suppressed_findings_are_only_the_documented_ones(synth: Synth, env: str) -> None:
    suppressed = {r["Rule ID"] for r in _nag_rows(synth, env) if r["Compliance"] == "Suppressed"}
    assert suppressed <= {rule for _, rule, _ in _suppressions(synth.templates[env])}


def test_cfn_lint_is_clean_on_every_template(synth: Synth) -> None:
    templates = [str(synth.outdir / f"maestro-{env}.template.json") for env in cdk_environments()]
    # One eval copy (staging's is the same constructs with staging's numbers): cfn-lint takes
    # seconds a template.
    templates += [str(synth.outdir / f"maestro-{env}-eval.template.json") for env in ("dev",)]
    done = subprocess.run(
        [str(Path(sys.executable).parent / "cfn-lint"), *templates],
        cwd=ROOT,  # .cfnlintrc.yaml: one documented ignore (W3005, the CDK's own DependsOn)
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
