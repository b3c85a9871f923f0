"""Step Functions task: persist (see maestro.pipeline.persist)."""

from maestro.pipeline.entry import persist as handler

__all__ = ["handler"]
