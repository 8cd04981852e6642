"""Quota sources: one module per source parses its telemetry into ``SourceReading``s.

What every source shares lives in ``common``: scoping windows to models through the
window-scope catalog and building quota-file readings. Merging into a quota file and
writing it atomically live in ``merge``. Adding a source is one new module here plus
its entries in ``catalogs/quota-windows.toml``.
"""
