"""What a synthesis produced: the layers' unzipped sizes, read from the cloud assembly."""

from __future__ import annotations

import json
from pathlib import Path

import aws_cdk.cx_api as cx_api

from infra.layers import LAMBDA_UNZIPPED_LIMIT_BYTES, directory_size


def layer_sizes(assembly: cx_api.CloudAssembly, artifact_id: str) -> dict[str, str]:
    """Each layer of the stack → its unzipped size, or why it has none (bundling skipped)."""
    outdir = Path(assembly.directory)
    stack = assembly.get_stack_artifact(artifact_id)
    template = json.loads((outdir / stack.template_file).read_text())
    sizes: dict[str, str] = {}
    total = 0
    for logical_id, resource in sorted(template["Resources"].items()):
        if resource["Type"] != "AWS::Lambda::LayerVersion":
            continue
        asset = resource.get("Metadata", {}).get("aws:asset:path")
        if asset is None:
            sizes[logical_id] = "unknown (no asset metadata)"
            continue
        path = outdir / asset
        if not path.name.startswith("asset.") or not path.is_dir():
            sizes[logical_id] = "not bundled (bundling skipped for this stack)"
            continue
        size = directory_size(path)
        total += size
        sizes[logical_id] = f"{size / 2**20:.1f} MiB unzipped"
    if total > LAMBDA_UNZIPPED_LIMIT_BYTES:
        raise RuntimeError(f"the layers add up to {total / 2**20:.1f} MiB: over Lambda's 250 MiB")
    return sizes
