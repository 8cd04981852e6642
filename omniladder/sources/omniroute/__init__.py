"""Import a fleet from an OmniRoute SQLite database into omniladder's input files.

The database is opened read-only (``file:...?mode=ro``) and read in one short transaction.
Only the columns mapped below are ever selected, by name, and an SQLite authorizer refuses
any read of any other column, so credential columns (``access_token``, ``refresh_token``,
``api_key``, ``id_token``, ``provider_specific_data``) and ``email`` can never reach
memory, let alone an output file.

Facts about the database, and the mapping, are in ``docs/sources.md#omniroute``. In short:

* one ``provider_connections`` row is one connection: ``id``, ``provider``, ``auth_type``,
  ``is_active`` → active, ``test_status`` → status (OmniRoute's terminal set
  ``credits_exhausted``, ``banned``, ``expired``, ``deactivated`` is kept; ``unavailable``
  is OmniRoute's cooldown and maps to *no* status, its end being ``rate_limited_until``; an
  ``unavailable`` row without that instant maps to the non-terminal ``error``),
  ``rate_limited_until``, ``display_name`` or else ``name`` → label, unless it looks like an
  e-mail address; models come from the model catalog, else ``default_model``; these are
  the connection's state at the import instant, written as ``state_as_of``, and a cooldown's
  ``last_error_at`` (when it last failed) as its recorded start, ``rate_limited_since``;
* ``quota_snapshots`` rows are written only when a value changes, so each reading carries
  the latest value of every window of its connection at its instant; rows of one connection
  within a small tolerance form one reading (a gateway restart re-writes every window once);
* a value is "no value", never 0 %, when the writer said so: ``raw_data`` with
  ``fractionReported: false`` (only that key is ever looked at), a stored 0 of a window the
  window-scope catalog marks ``zero_is_sentinel`` (older Copilot adapters), or NULL;
* ``is_exhausted = 1`` reads as 0 % remaining under every writer generation: generation 1
  sets it only when every window of the connection is at or below 0, so the row's own window
  is empty too; generations 2 and 3 set it per window;
* windows are scoped to the connection's models through the window-scope catalog
  (``omniladder.sources.common``): ignored windows and windows limiting none of the models
  are dropped, unmatched windows limit every model;
* with ``--since``, rows are filtered in SQL and streamed: only rows at or after the since
  instant, plus the latest row before it of every (connection, window_key), are read.

The modules follow the tables: ``database`` (the read-only file, the column allowlist, the
one read transaction), ``connections`` (``provider_connections``), ``snapshots``
(``quota_snapshots``), ``custom`` (custom OpenAI-compatible providers' models, priced as the
model catalog's entry for the model); ``options`` holds the import's options and
``importer`` the entry,
``import_omniroute``, and the files it writes. ``call_logs`` is ``omniroute_traffic``'s.
"""
