"""The traffic ledger (SPEC §7.1), by job; its modules import each other downwards only:

* ``events`` — one event: its fields, ``event_from`` and ``fast_check`` (the one validation
  every reader holds an event to), ``ledger_event``, and ``event_line``, the one writer of an
  event's line, with the bounds every reader and the writer hold an event to;
* ``lines`` — a JSONL ledger's lines, streamed a block at a time and held to what a JSON
  document is held to (``json_lines``);
* ``suffixes`` — the file types a ledger is read from (``LINE_SUFFIXES``, ``refuse_suffix``),
  all a plan given a spend document needs of the ledger;
* ``one_read`` — ``audit traffic``'s one read of a JSONL ledger (``Ledger.one_pass``), given
  up (``Unsettled``) for the two reads whenever its answer could differ from theirs;
* ``read`` — ``Ledger``: a JSONL ledger or an events document, read without holding it,
  twice (``scan``, then ``records`` or ``events``) or once (``one_pass``); and the ledger as
  a spend ledger (``is_traffic``, ``spend_events``);
* ``merge`` — the importers' atomic, idempotent merge of events into a JSONL ledger;
* ``schema`` — ``TrafficFile``, the ledger document's records for ``schema traffic`` only.
"""
