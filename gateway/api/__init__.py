"""The HTTP API (contract §3) and the platform ingress routes, served by ``threadgate serve``."""

from gateway.api.app import create_app

__all__ = ["create_app"]
