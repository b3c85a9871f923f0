"""The safety floor of an earlier commit, measured on labeled files of today.

``python benchmarks/floor_at.py 55899c4 evals/labeled/holdout4_emergencies.jsonl
evals/labeled/holdout4_non_emergencies.jsonl`` exports the runtime package of that commit
(``layers/maestro/python``, by ``git archive``) to a temporary folder and runs its
``maestro.domain.safety.safety_floor`` over each file's texts in a child process whose import
path starts there, so a holdout written later is read by the floor as it stood then (the floor
when #20 was filed, before a round). It prints, per file, how many rows the floor raised; the
rows themselves are never printed, so a holdout's one measurement does not show its misses.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNTIME = "layers/maestro/python"

_CHILD = """
import json, sys
import maestro
from maestro.domain.safety import safety_floor
assert maestro.__file__.startswith(sys.argv[1]), maestro.__file__
for path in sys.argv[2:]:
    rows = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    raised = sum(safety_floor(row["text"]) is not None for row in rows)
    print(json.dumps({"file": path, "rows": len(rows), "raised": raised}))
"""


def measure(commit: str, files: list[Path]) -> list[dict[str, object]]:
    archive = subprocess.run(
        ["git", "archive", "--format=tar", commit, RUNTIME],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    with tempfile.TemporaryDirectory(prefix=f"floor-{commit}-") as folder:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        runtime = str(Path(folder) / RUNTIME)
        child = subprocess.run(
            [sys.executable, "-c", _CHILD, runtime, *map(str, files)],
            env={"PYTHONPATH": runtime, "PATH": "/usr/bin:/bin"},
            check=True,
            capture_output=True,
            text=True,
        )
    return [json.loads(line) for line in child.stdout.splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commit", help="a commit, tag or branch whose floor to run")
    parser.add_argument("files", nargs="+", type=Path, help="labeled .jsonl files (a text each)")
    args = parser.parse_args()
    for figure in measure(args.commit, [path.resolve() for path in args.files]):
        rows, raised = int(str(figure["rows"])), int(str(figure["raised"]))
        print(f"{args.commit} {Path(str(figure['file'])).name}: raised {raised}/{rows}")


if __name__ == "__main__":
    main()
