"""Reading MySQL 5.0-9.x and MariaDB binlog files: framing, event decoders, transactions."""

from .scan import FileSummary, read_transactions
from .transactions import ColumnSelector, RowChange, TableStats, Transaction

__all__ = ["ColumnSelector", "FileSummary", "RowChange", "TableStats", "Transaction", "read_transactions"]
