"""Input and output: every file omniladder reads or writes, by job.

* ``files`` — file safety: reading a regular file's bytes, capped, as UTF-8 text;
* ``documents`` — TOML and JSON text into plain data or a validated model (``parse_json``,
  ``read_document``, ``load_model``), with ``direct``, the validation straight from JSON text;
* ``validation`` — a model's problems worded as one line each;
* ``catalogs`` and ``scopes`` — the billing and model catalogs, the window-scope catalog;
* ``normalise`` — SPEC §2.2's reading of a quota file's readings, as pure functions;
* ``input_set`` — the settings file and the flags into the engine's ``LoadedInputs``;
* ``ledger`` — the traffic ledger, by job: ``events`` (an event, its checks and its line),
  ``lines`` (a JSONL ledger's guarded streamed read), ``read`` (``Ledger``: the two reads,
  and the ledger as a spend ledger), ``one_read`` (``audit traffic``'s one read), ``merge``
  (the importers' merge into a ledger) and ``schema`` (the document's JSON Schema records);
* ``writing`` — atomic writes, and the check that an output never replaces an input;
* ``plan_document``, ``schemas``, ``starter``, ``stamp``, ``credentials`` — the saved plan's
  shape, the JSON Schemas, ``init``'s files, a saved plan's stamp, the key guard.
"""
