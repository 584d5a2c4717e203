"""Threadgate: a gateway between AI agent runs and the people who answer them in chat threads."""

__version__ = "0.1.0"
