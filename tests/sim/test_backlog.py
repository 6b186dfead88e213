"""eta's early reading of a backlog (``sim/backlog.py``): windows read by seeking into a file give
exactly the transactions a reading in order gives there; a reading from the applier's position is
the tail of a whole reading; the extrapolation from windows prices what is left by where it is."""

from __future__ import annotations

import random
import struct
from dataclasses import replace

import pytest

from conftest import FIXTURES
from lagadvisor.binlog import read_transactions
from lagadvisor.sim.backlog import (SequentialReader, Window, extrapolate, facts_of, next_boundary, preamble,
                                    read_strata, read_window)
from lagadvisor.sim.build import TrxFacts
from lagadvisor.sim.eta import Snapshot, commit_times, estimate, estimate_sampled
from lagadvisor.sim.model import CostModel, ReplicaConfig

ROTATION = sorted(str(p) for p in (FIXTURES / "single_rotation").glob("binlog.0*"))
U = "3e11fa47-71ca-11e1-9e33-c80aa9429562"


def _key(f: TrxFacts) -> tuple:
    return f.seq, f.clocks, f.commit_ts_us, f.inserts, f.updates, f.deletes, f.nbytes, f.dbs


def _in_order(files) -> list[tuple]:
    return [_key(facts_of(t, 0)) for p in files for t in read_transactions(p, selector=lambda tm: frozenset())]


def _gtid_offsets(path: str) -> set[int]:
    data = open(path, "rb").read()
    pos, out = 4, set()
    while pos + 19 <= len(data):
        if data[pos + 4] in (33, 34, 42):
            out.add(pos)
        pos += struct.unpack_from("<I", data, pos + 9)[0]
    return out


def test_windows_are_what_a_reading_in_order_gives_there():
    whole = _in_order(ROTATION)
    windows = read_strata(ROTATION, (0, 0), 8, lambda g: True)
    assert len(windows) == 8 and [w.at for w in windows] == sorted(w.at for w in windows)
    for w in windows:
        keys = [_key(f) for f in w.facts]
        i = whole.index(keys[0])
        assert whole[i:i + len(keys)] == keys


def test_a_boundary_found_by_its_checksum_is_a_transaction_start():
    path = ROTATION[1]
    data = open(path, "rb").read()
    starts = _gtid_offsets(path)
    with open(path, "rb") as f:
        _pre, crc, first = preamble(f)
    assert crc and first == min(starts)
    rnd = random.Random(4)
    for _ in range(200):
        at = rnd.randrange(first, len(data) - 1000)
        p = next_boundary(data, at, crc)
        assert p is not None and p in starts and not any(at <= s < p for s in starts)


def test_a_window_past_the_last_transaction_is_none():
    path = ROTATION[0]
    size = len(open(path, "rb").read())
    assert read_window(path, size - 30, lambda g: True, 0) is None


def test_reading_from_the_applier_position_is_the_tail_of_a_whole_reading():
    path = ROTATION[2]
    offsets = sorted(_gtid_offsets(path))
    start = offsets[len(offsets) // 3]
    whole = _in_order(ROTATION[2:])
    r = SequentialReader(ROTATION, lambda g: True, (2, start)).begin()
    r._thread.join(60)
    assert r.done and r.error is None
    tail = [_key(f) for f in r.facts]
    assert tail == whole[len(whole) - len(tail):] and len(tail) > len(whole) // 2


def test_a_reading_from_the_applier_position_names_the_file_s_offsets(tmp_path):
    """A file read from the applier's position is its preamble, then the file from there
    (``Spliced``): the offsets a warning names are the file's, as a whole reading names them (they
    were the spliced stream's, short by the bytes skipped)."""
    from lagadvisor.binlog.scan import FileSummary

    src = ROTATION[2]
    offsets = sorted(_gtid_offsets(src))
    cut = tmp_path / "binlog.000003"
    cut.write_bytes(open(src, "rb").read()[:offsets[-2] + 100])   # ends inside a transaction
    whole = FileSummary(str(cut))
    list(read_transactions(str(cut), whole, selector=lambda tm: frozenset()))
    assert len(whole.warnings) == 1 and f"offset {whole.truncated_at}" in whole.warnings[0], whole.warnings
    r = SequentialReader([str(cut)], lambda g: True, (0, offsets[len(offsets) // 2])).begin()
    r._thread.join(60)
    assert r.done and r.error is None and r.facts
    assert r.warnings == whole.warnings


def _serial(n: int, updates: int = 3, first: int = 0) -> list[TrxFacts]:
    return [TrxFacts(0, i + 1, (i, i, i, i), 0, 0, updates, 0, 100 * updates, ("c",), None)
            for i in range(first, first + n)]


def test_the_rest_is_priced_where_it_is():
    """A head of cheap transactions and strata of transactions three times as large: what is
    left is priced by the strata beyond the head, by count and by bytes alike."""
    cfg, cost = ReplicaConfig(1, True, False), CostModel()
    head = Window(_serial(100, 1), 100 * 100, 0.0)
    strata = [Window(_serial(50, 3, 200 + 100 * k), 50 * 300, (k + 0.5) / 8) for k in range(8)]
    one_small = commit_times(_serial(100, 1), cfg, cost)[-1] / 1e6 / 100
    one_large = commit_times(_serial(50, 3), cfg, cost)[-1] / 1e6 / 50
    # the applier inside the head: priced there; what is left is the head's last 5%, then the strata
    ext = extrapolate(head, strata, 1000, 900, 0.05, 300.0, cfg, cost, commit_times)
    assert ext.at_applier_trx_s == pytest.approx(one_small)
    assert ext.windows == 7   # the stratum at 6% lies in the head's part: the head prices it
    assert ext.by_count_s == pytest.approx(900 * (0.05 * one_small + 0.9 * one_large) / 0.95, rel=1e-6)
    assert ext.by_bytes_s > ext.by_count_s and ext.band > 0   # the head's bytes price differently: a band
    # the applier past the head: only the strata are left, by count and bytes alike, no spread
    ext = extrapolate(head, strata, 1000, 700, 0.3, 300.0, cfg, cost, commit_times)
    assert ext.at_applier_trx_s == pytest.approx(one_large)
    assert ext.by_count_s == pytest.approx(700 * one_large, rel=1e-6)
    assert ext.by_bytes_s == pytest.approx(ext.by_count_s, rel=1e-6) and ext.band == pytest.approx(0.0, abs=1e-9)
    # nothing seen beyond the head: the rest priced like it, half of the unseen share as the band
    alone = extrapolate(head, [], 1000, 900, 0.05, None, cfg, cost, commit_times)
    assert alone.by_count_s == pytest.approx(900 * one_small) and alone.band == pytest.approx(0.5 * 0.9 / 0.95)


def _snap(at, executed_to, received_to):
    ex = f"{U}:1-{executed_to}" if executed_to else ""
    return Snapshot(at, f"{U}:1-{received_to}", ex, f"{U}:{executed_to + 1}-{received_to}", True, True)


def test_a_sample_and_the_whole_backlog_agree_on_a_uniform_backlog():
    """Serial identical transactions, 10 applied a second: from a head of 30 and two strata, the
    80 left take 8 s, as the estimate over all 100 says."""
    facts = _serial(100)
    gtids = [f"{U}:{i + 1}" for i in range(100)]
    cfg = ReplicaConfig(1, True, False)
    snaps = [_snap(0.0, 0, 100), _snap(1.0, 10, 100), _snap(1.5, 15, 100), _snap(2.0, 20, 100)]
    whole = estimate(snaps, facts, gtids, cfg, CostModel())
    strata = [Window(facts[60:75], 15 * 300, 0.6), Window(facts[85:100], 15 * 300, 0.85)]
    part = estimate_sampled(snaps, facts[:30], strata, 100, 300.0, cfg, CostModel())
    assert part.left == 80 and whole.left == 80
    assert part.current.eta_s == pytest.approx(whole.current.eta_s, rel=0.05)
    assert part.current.eta_s == pytest.approx(8.0, rel=0.05)
    assert part.basis["method"] == "sample" and part.basis["strata"] == 2
    assert part.current.low_s <= part.current.eta_s <= part.current.high_s


def test_a_reader_thread_is_niced_and_the_rest_of_the_process_is_not():
    import os
    import threading

    from lagadvisor.sim.backlog import lower_priority

    main = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    seen = []

    def reader():
        lower_priority(5)
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    t = threading.Thread(target=reader)
    t.start()
    t.join()
    assert seen == [min(19, main + 5)]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == main


def test_a_backlog_too_large_to_read_stays_a_sample_and_says_so():
    """Over FULL_READ_MAX transactions the reader stops after the head: every estimate is the
    sample's, and its basis says the full read was skipped and why."""
    from lagadvisor.sim.eta import Backlog, estimate_now

    r = SequentialReader(ROTATION, lambda g: g is not None, limit=300).begin()
    r._thread.join(60)
    assert not r.done and len(r.facts) == 300 and r.error is None
    snaps = [_snap(0.0, 0, 2_000_000), _snap(1.0, 100, 2_000_000), _snap(2.0, 200, 2_000_000)]
    first = snaps[0]
    e = estimate_now(snaps, first, Backlog(r, [], None, None, False), ReplicaConfig(4, True, False), CostModel())
    assert e.basis["method"] == "sample" and e.basis["full_read"].startswith("skipped: 2,000,000 transactions")
    assert e.basis["head_transactions"] == 300 and e.current.eta_s > 0
    assert e.current.low_s < e.current.eta_s < e.current.high_s   # the unseen rest widens the band
    from lagadvisor.sim.eta import render

    e = replace(e, cpu_s=1.25)
    text = "\n".join(render(e))
    assert "estimated from 300 of the 2,000,000 transactions left when the backlog was first read (300 read in order" \
        in text, text
    assert "too many to read while they are applied" in text and "used 1.2 s of CPU" in text, text


def test_more_strata_fall_between_the_ones_before():
    from lagadvisor.sim.backlog import van_der_corput

    assert [van_der_corput(k) for k in range(1, 8)] == [0.5, 0.25, 0.75, 0.125, 0.625, 0.375, 0.875]
    first = read_strata(ROTATION, (0, 0), 4, lambda g: True)
    more = read_strata(ROTATION, (0, 0), 4, lambda g: True, van_der_corput(2))
    assert [w.at for w in first] == [0.125, 0.375, 0.625, 0.875]
    assert [w.at for w in more] == [0.0625, 0.3125, 0.5625, 0.8125]
    whole = _in_order(ROTATION)
    for w in more:   # still exactly what a reading in order gives there
        keys = [_key(f) for f in w.facts]
        i = whole.index(keys[0])
        assert whole[i:i + len(keys)] == keys


def test_uneven_strata_price_the_parts_nearest_them():
    """Strata at 0.2 (cheap) and 0.8 (three times dearer) beyond a head of 10%: the cut between
    them is their midpoint, 0.5, so what is left from 0.1 is 40/90 cheap and 50/90 dear."""
    cfg, cost = ReplicaConfig(1, True, False), CostModel()
    head = Window(_serial(100, 1), 100 * 100, 0.0)
    strata = [Window(_serial(50, 3, 500), 50 * 300, 0.8), Window(_serial(50, 1, 300), 50 * 100, 0.2)]
    small = commit_times(_serial(50, 1), cfg, cost)[-1] / 1e6 / 50
    large = commit_times(_serial(50, 3), cfg, cost)[-1] / 1e6 / 50
    ext = extrapolate(head, strata, 1000, 900, 0.1, None, cfg, cost, commit_times)
    assert ext.by_count_s == pytest.approx(900 * (0.4 * small + 0.5 * large) / 0.9, rel=1e-6)


def test_a_boundary_right_after_a_type_byte_at_the_very_start_is_found():
    """Bytes equal to a GTID type in the first four of the buffer (where no event header fits)
    do not hide the GTID events after them."""
    path = ROTATION[1]
    data = open(path, "rb").read()
    with open(path, "rb") as f:
        _pre, crc, _first = preamble(f)
    # a GTID event whose bytes hold no other GTID type byte and its own type once
    for at in sorted(_gtid_offsets(path)):
        event = data[at:at + struct.unpack_from("<I", data, at + 9)[0]]
        if 34 not in event and 42 not in event and event.count(33) == 1:
            break
    buf = bytes([33, 33, 33]) + event
    assert next_boundary(buf, 0, crc) == 3
