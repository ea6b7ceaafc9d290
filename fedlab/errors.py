"""User-facing errors: one line that names the problem and the fix."""
from __future__ import annotations


class FedlabError(Exception):
    """A user mistake or an unmet precondition; printed as one line, never a traceback."""
