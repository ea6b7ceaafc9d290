"""python -m fedlab.mcp: serve search_fomc and get_document over stdio (see fedlab.mcp.server)."""
from fedlab.mcp.server import main

main()
