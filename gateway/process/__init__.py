"""The running process: the runtime that wires store, channels and service together, serving and worker
processes, readiness probes, preflight checks and ``doctor``.

Imports: every lower layer (base, rules, store, delivery, decision) and ``gateway.commands``; never the
HTTP edge.
"""
