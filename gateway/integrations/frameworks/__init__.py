"""Adapters for agent frameworks' own human-in-the-loop hooks; each imports only its own framework."""
