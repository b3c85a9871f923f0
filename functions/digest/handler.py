"""A schedule (hourly) → the digest: one page listing the unknown numbers of each hour that is
over, and the pages a daily cap held back (see maestro.pipeline.digest)."""

from maestro.pipeline.digest_entry import digest_handler as handler

__all__ = ["handler"]
