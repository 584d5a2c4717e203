"""Pure rules, decided once for every channel and path: reading a reply (``mapper``, ``replies``), who may
answer (``authz``), grants and what a pattern matches, approval policy and verdicts, typed edits, and
what a person is told and shown (``notices``, ``render``, ``text_fit``).

Imports: ``gateway.base`` only. Nothing here does I/O.
"""
