"""One module per command; cli.py only registers them."""
