"""Agent integrations: Claude Code and Codex hooks, the Claude Agent SDK callback and the MCP server.

Each is a thin layer over the HTTP API through ``gateway.client``; none reaches Redis itself.
"""
