"""The planning rules: pure functions over immutable records, one module per rule family.

The engine reads the records the loader builds (``engine.inputs``) and the ground modules
(``models``, ``scopes``, ``errors``, ``timefmt``, ``vocabulary``); it imports no analysis,
command, source or view (``tests/test_layers.py`` holds that). See docs/architecture.md.
"""
