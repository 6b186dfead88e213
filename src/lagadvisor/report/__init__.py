"""Reports: the analysis model (plain data) and its renderers (console, JSON, CSV)."""
