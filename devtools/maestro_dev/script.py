"""The ``maestro`` console script: the command (:mod:`maestro_dev.cli`), or the extra it lacks.

The project's base install is the runtime alone (what the Lambda layers ship); each of the
command's jobs needs an extra of pyproject.toml: ``demo`` (the embedded stack: ``demo``,
``serve``, ``send``, ``eval run``…), ``console``, ``evals`` (``eval labeled``'s plots). A job run
without its extra says which one to install, not a traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

# Top-level module -> the extra of pyproject.toml that installs it, for the optional packages the
# command imports (tests/unit/test_extras.py checks each against pyproject.toml).
EXTRA_OF_MODULE = {
    "moto": "demo",
    "yaml": "demo",
    "starlette": "console",
    "uvicorn": "console",
    "matplotlib": "evals",
    "sklearn": "evals",
}


def extra_for(error: ModuleNotFoundError) -> str | None:
    """The extra that brings the module an import did not find, if it is one of ours."""
    return EXTRA_OF_MODULE.get((error.name or "").partition(".")[0])


def missing_extra_message(error: ModuleNotFoundError, extra: str) -> str:
    # `make demo`, `make console` and `make evals` install their extra before they run.
    return (
        f"maestro: this command needs {error.name}, which the project's `{extra}` extra "
        f"installs: `pip install -e '.[{extra}]'` in the project's .venv, or `make {extra}`."
    )


def main(argv: Sequence[str] | None = None) -> int:
    try:
        from maestro_dev.cli import main as run

        return run(argv)
    except ModuleNotFoundError as error:
        extra = extra_for(error)
        if extra is None:
            raise
        print(missing_extra_message(error, extra), file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
