"""Questions asked of plans, one module per command: ``why``, ``who``, ``simulate``,
``check``, ``diff``, ``audit`` (``audit omniroute``), ``traffic`` (``audit traffic``),
``export/`` and ``catalog_check`` (``catalog check``)."""
