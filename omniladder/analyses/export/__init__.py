"""Export a plan as configuration a gateway runs: a LiteLLM ``config.yaml`` fragment or an
OmniRoute combo, each with a fidelity report saying what the target cannot hold.

The package is pure: it reads a ``Plan`` (or a saved plan's document), builds plain data and
compares it with what is deployed. It never calls a gateway, never reads a credential and
imports neither typer nor rich (tests/test_export.py holds it to that).

* ``source`` — what an export reads of a plan, from a plan just made or a saved one;
* ``routes`` — the ``--map`` file: where LiteLLM reaches each connection;
* ``fidelity`` — the report's items and their stable codes;
* ``targets`` — the registry of targets (``TARGETS``) and the interface each implements;
* ``litellm`` and ``omniroute`` — one module per target, each with its ``TARGET`` class;
* ``core`` — the one entry point the command calls, and the ``--current`` comparison;
* ``compare`` — ``--current``'s matching of deployments and steps by identity.
"""
