"""The decision: raising a prompt, receiving a reply and running the answer step on it, settling, voting,
grants, escalation, history, the outbox that announces each state change, and the ``Gateway`` service
that gathers them (``service``), including adoption of pending prompts after a restart.

Imports: ``gateway.base``, ``gateway.rules``, ``gateway.store`` and ``gateway.delivery``; never the HTTP
edge or the process.
"""
