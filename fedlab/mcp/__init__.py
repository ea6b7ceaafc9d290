"""FOMC retrieval as an MCP server (``python -m fedlab.mcp``) and a synchronous client for it.

server: the ``search_fomc`` / ``get_document`` tools on the configured pipeline, over stdio.
client: ``McpSearcher``, a drop-in for ``Pipeline.search`` that talks to that server.
schema: the tools' argument and result shapes, shared by both ends.
"""
