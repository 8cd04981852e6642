"""omniladder: a routing planner for LLM gateways."""

__version__ = "0.1.0"

RELEASED = "2026-12-06"
"""The release date of this version (ISO). The shipped catalogs were reviewed for it, so
``catalog check`` judges their review dates against it, never against today: a user's check
never turns red on a calendar date over entries the user cannot edit. A test keeps it at or
after the newest shipped ``reviewed`` / ``as_of``; bump it with ``__version__``."""
