"""Everything that talks to a server, read-only: the connection (options resolved as the mysql
client does, TLS, both drivers), the table definitions and settings from information_schema,
the binlog stream, and the samples calibrate --host and eta take from performance_schema.

It stands above ``sim`` (it builds the model's samples and hands them to its fitting and its
estimate), ``schema`` and ``binlog`` (it reads tables and binlogs as they do); the commands,
``fleet`` and ``advise`` call it. No module below it imports a database driver.
"""
