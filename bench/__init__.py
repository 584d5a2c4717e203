"""Benchmarks: what a prompt costs the gateway, each figure measured beside its floor on a private Redis."""
