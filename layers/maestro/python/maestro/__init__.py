"""maestro: a message router for property maintenance.

A language model proposes actions from a closed vocabulary; the deterministic layer in
:mod:`maestro.domain` disposes of them. See ARCHITECTURE.md for the whole design.
"""

__version__ = "0.1.0"
