"""Where a transaction ends, against the server's own number: MySQL writes each transaction's
length on disk into its GTID event (``transaction_length``, 8.0.2+). A compressed transaction
ended at its XID, which sits inside the payload and carries the payload's offset, so it
"ended" about 100 bytes in and counted that many bytes (a 6,000-row transaction: 107 bytes).
It ends where its payload does, and its bytes are the events it holds, uncompressed."""

from __future__ import annotations

import pytest

from lagadvisor.binlog import read_transactions

from conftest import FIXTURES, fixture_dirs


@pytest.mark.parametrize("fixture", [d.name for d in fixture_dirs() if d.name != "mariadb_concurrent"])
def test_every_transaction_ends_where_the_server_says(fixture):
    checked = compressed = 0
    for f in sorted((FIXTURES / fixture).glob("binlog.0*")):
        for t in read_transactions(str(f)):
            if t.transaction_length:
                assert t.end_offset - t.start_offset == t.transaction_length, (f.name, t.gtid)
                checked += 1
                compressed += t.compressed
    assert checked > 100
    if fixture == "single_compressed":
        assert compressed > 1000


def test_a_compressed_transaction_counts_the_bytes_it_holds():
    for t in read_transactions(str(FIXTURES / "single_compressed" / "binlog.000001")):
        if t.compressed and t.rows >= 1000:
            # every row of the fixture's large transaction is at least its key and a value
            assert t.bytes > t.transaction_length and t.bytes > 10 * t.rows, (t.gtid, t.bytes, t.rows)
            assert t.inner_bytes > 0 and t.payload_bytes > 0
            break
    else:
        pytest.fail("no large compressed transaction in the fixture")
