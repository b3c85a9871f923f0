"""Numbers the embedded stack and the eval executors share, in a module that imports nothing:
the cloud's eval functions read them without loading the embedded stack (moto)."""

from __future__ import annotations

ON_CALL_PM = "+14155550199"
"""The on-call PM the embedded stack pages, and a scenario's ``pm`` (the eval copy in the cloud
pages this number too: a test number, so an eval never pages a person)."""
