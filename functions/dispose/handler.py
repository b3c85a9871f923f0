"""Step Functions task: dispose (see maestro.pipeline.dispose)."""

from maestro.pipeline.entry import dispose as handler

__all__ = ["handler"]
