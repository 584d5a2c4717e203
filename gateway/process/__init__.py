"""The running process: the runtime that wires store, channels and service together, serving and worker
processes, readiness probes, preflight checks and ``doctor``, and the operator's commands
(``commands``: ``prompts``, ``approvers``, ``people``, ``history``).

Imports: every lower layer (base, rules, store, client, people, delivery, decision); never the HTTP edge.
"""
