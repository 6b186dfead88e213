"""Replica applier simulation: cost model, scheduling rules and a deterministic event engine."""
