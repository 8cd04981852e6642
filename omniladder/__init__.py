"""omniladder: a routing planner for LLM gateways."""

__version__ = "0.1.0"
