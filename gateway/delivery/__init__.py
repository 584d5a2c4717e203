"""How things reach people and consumers: the channel protocol and the plugins that implement it
(``channel``, ``plugins``, ``channel_services``), leases for once-per-deployment connections, event feeds
and server-sent events, signed webhooks, and the waiters a long-poll parks on.

Imports: ``gateway.base``, ``gateway.rules`` and ``gateway.store``; never the decision or the process.
"""
