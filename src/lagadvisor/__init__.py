"""lagadvisor: why a MySQL replica lags, read from the binlog files themselves."""

__version__ = "0.1.0"
