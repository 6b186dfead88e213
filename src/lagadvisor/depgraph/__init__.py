"""Dependency clocks and graphs: what the recorded and re-derived clocks allow a replica to do."""
