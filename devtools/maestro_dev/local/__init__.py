"""The embedded stack: maestro on one machine, no account (grows with #4)."""
