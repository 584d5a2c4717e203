"""People: who a person is behind their identities, and how they sign in (OIDC with Authlib, server-side
sessions, OAuth access tokens for MCP clients).

Imports: ``gateway.base``, ``gateway.rules`` and ``gateway.store``; never the delivery, the decision, the
process or the HTTP edge.
"""
