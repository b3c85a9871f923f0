"""Everything maestro needs on a developer's machine and nothing a Lambda function runs.

The runtime package ``maestro`` (``layers/maestro/python/maestro``) is what the shared layer
ships; this package sits outside the layer and is never imported by it (``lint-imports`` checks
the contract in ``pyproject.toml``):

- ``maestro_dev.local``: the embedded stack (moto, a virtual clock, the loopback server);
- ``maestro_dev.cli``: the ``maestro`` command; ``maestro_dev.core_demo``: the scripted stories;
- ``maestro_dev.fakes``: in-memory stand-ins for every port, for unit tests.
"""
