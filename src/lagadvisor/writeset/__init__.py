"""Row writesets with the server's semantics (sql/rpl_write_set_handler.cc ``add_pke``)."""
