"""What the tool knows of each table's columns and keys, and where that knowledge came from."""
