"""Input readers that stream: files too large to load whole (a traffic ledger)."""
