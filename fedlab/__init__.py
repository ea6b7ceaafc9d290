"""fedlab: evaluation-centric RAG experiments on FOMC statements and minutes."""
from fedlab import env as _env  # noqa: F401  (telemetry off before any heavy import)

__version__ = "0.1.0"
