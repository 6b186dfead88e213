#!/usr/bin/env python3
"""Damaged inputs derived from the project's own fixtures: ``fixtures/damaged/`` (issue 34).

Every bad-input test must run from a bare clone, so the shapes that once crashed, hung or
ate memory (found by fuzzing public binlogs) are rebuilt here from ``fixtures/single_full``,
a binlog written by MySQL 9.7.4; nothing is copied from another project's files. Each mutated
event gets its CRC32 footer recomputed, so the damage reaches the decoder it is aimed at
instead of stopping at the checksum (``Log_event_footer::event_checksum_test``).

    python3 scripts/make_damaged.py            # (re)write fixtures/damaged/
    python3 scripts/make_damaged.py --check    # exit 1 if the committed files differ

The output is a pure function of the fixture: gzip headers carry mtime 0 and no file name.
``fixtures/damaged/MANIFEST.json`` says, per file, what was done to which event at which offset
and what every command must answer (exit 2 and one line holding the given words, or exit 0 and
a warning).
"""

from __future__ import annotations

import argparse
import gzip
import json
import struct
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "fixtures" / "single_full" / "binlog.000001"
OUT = ROOT / "fixtures" / "damaged"
HEADER = 19

# libs/mysql/binlog/event/binlog_event.h: Log_event_type
QUERY_EVENT, XID_EVENT, WRITE_ROWS, UPDATE_ROWS, DELETE_ROWS = 2, 16, 30, 31, 32


def events(data: bytes) -> list[tuple[int, int, int]]:
    """``(offset, size, type)`` of every event from offset 4 (the fixture is a whole file)."""
    out, pos = [], 4
    while pos + HEADER <= len(data):
        size = struct.unpack_from("<I", data, pos + 9)[0]
        out.append((pos, size, data[pos + 4]))
        pos += size
    return out


def rows_post_header_len(data: bytes, type_code: int) -> int:
    """The FORMAT_DESCRIPTION event's post-header length for ``type_code``
    (``Format_description_event``: binlog_version 2, server_version 50, timestamp 4,
    header length 1, then one byte per event type from type 1)."""
    return data[4 + HEADER + 2 + 50 + 4 + 1 + type_code - 1]


def with_crc(event: bytearray) -> bytes:
    """The event with its CRC32 footer recomputed over everything before it."""
    struct.pack_into("<I", event, len(event) - 4, zlib.crc32(bytes(event[:-4])))
    return bytes(event)


def through_transaction(data: bytes, evs: list, index: int) -> int:
    """The offset just after the XID_EVENT that ends the transaction holding event ``index``."""
    for off, size, t in evs[index:]:
        if t == XID_EVENT:
            return off + size
    raise ValueError("no XID after the event")


def first(evs: list, type_code: int) -> int:
    return next(i for i, (_, _, t) in enumerate(evs) if t == type_code)


def rows_body(data: bytes, off: int, type_code: int) -> tuple[int, int, int]:
    """``(column count offset, column count, bitmap bytes)`` of a v2 rows event at ``off``
    (``Rows_event``: table id 6, flags 2, then the extra-info length that counts itself)."""
    ph = rows_post_header_len(data, type_code)
    extra = struct.unpack_from("<H", data, off + HEADER + 8)[0]
    pos = off + HEADER + ph + extra - 2
    ncols = data[pos]
    assert ncols < 251, "a one-byte packed column count"
    return pos, ncols, (ncols + 7) // 8


def zeroed_tail(data: bytes, evs: list) -> tuple[bytes, dict]:
    """A WRITE_ROWS event zeroed from its column count to the footer: zero columns, and row
    data that a row image of no columns never consumes (the loop that once did not end)."""
    i = first(evs, WRITE_ROWS)
    off, size, _ = evs[i]
    ev = bytearray(data[off:off + size])
    pos, _, _ = rows_body(data, off, WRITE_ROWS)
    ev[pos - off:size - 4] = bytes(size - 4 - (pos - off))
    end = through_transaction(data, evs, i)
    return data[:off] + with_crc(ev) + data[off + size:end], {
        "event": "WRITE_ROWS_EVENT", "offset": off,
        "mutation": "zeroed from the column count to the checksum footer (CRC32 recomputed)"}


def zeroed_bitmaps(data: bytes, evs: list, type_code: int, name: str) -> tuple[bytes, dict]:
    """A rows event whose columns bitmap(s) select no column while its row data stays."""
    i = first(evs, type_code)
    off, size, _ = evs[i]
    ev = bytearray(data[off:off + size])
    pos, _, nb = rows_body(data, off, type_code)
    maps = 2 if type_code == UPDATE_ROWS else 1
    start = pos - off + 1
    ev[start:start + maps * nb] = bytes(maps * nb)
    end = through_transaction(data, evs, i)
    return data[:off] + with_crc(ev) + data[off + size:end], {
        "event": name, "offset": off,
        "mutation": f"{'both columns bitmaps' if maps == 2 else 'the columns bitmap'} zeroed, "
                    "row data kept (CRC32 recomputed)"}


def huge_length(data: bytes, evs: list) -> tuple[bytes, dict]:
    """The first 4 KB with the second event's length set to 0x40000000 (1 GiB): a reader that
    sizes a buffer from the header before checking it against the file takes a gigabyte."""
    off = evs[1][0]
    out = bytearray(data[:4096])
    struct.pack_into("<I", out, off + 9, 0x40000000)
    return bytes(out), {"event": "PREVIOUS_GTIDS_LOG_EVENT", "offset": off,
                        "mutation": "event length set to 1073741824 in a 4,096-byte file"}


def bad_query(data: bytes, evs: list) -> tuple[bytes, dict]:
    """A QUERY_EVENT whose status-variables length runs past the end of the event."""
    i = first(evs, QUERY_EVENT)
    off, size, _ = evs[i]
    ev = bytearray(data[off:off + size])
    # Query_event post-header: thread id 4, exec time 4, db length 1, error code 2, status vars length 2
    struct.pack_into("<H", ev, HEADER + 11, 0xFFFF)
    end = through_transaction(data, evs, i + 1) if any(t == XID_EVENT for _, _, t in evs[i:i + 8]) \
        else evs[i + 1][0]
    return data[:off] + with_crc(ev) + data[off + size:end], {
        "event": "QUERY_EVENT", "offset": off,
        "mutation": "status variables length set to 65535 (CRC32 recomputed)"}


def gz(payload: bytes) -> bytes:
    return gzip.compress(payload, compresslevel=9, mtime=0)


def gz_crc_mismatch(prefix: bytes) -> tuple[bytes, dict]:
    out = bytearray(gz(prefix))
    out[-8] ^= 0xFF
    return bytes(out), {"mutation": "gzip of the fixture's first transactions, CRC32 trailer flipped",
                        "uncompressed": len(prefix)}


def gz_invalid_block(prefix: bytes) -> tuple[bytes, dict]:
    """A valid first deflate block, then a block of the reserved type 3 (RFC 1951 3.2.3)."""
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = c.compress(prefix) + c.flush(zlib.Z_FULL_FLUSH)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    return header + body + b"\x07" + bytes(16), {
        "mutation": "a full-flushed deflate block of the first transactions, then a block of "
                    "the reserved type 3", "uncompressed": len(prefix)}


def gz_flipped(prefix: bytes) -> tuple[bytes, dict]:
    """One bit flipped inside the deflate stream: the first position, from the middle on, at
    which inflate itself rejects the stream (a deflate error such as an invalid distance, not
    the trailer's CRC32 catching changed data: that is ``gzip-crc-mismatch``)."""
    good = gz(prefix)
    for pos in range(len(good) // 2, len(good) - 8):
        for bit in range(8):
            bad = bytearray(good)
            bad[pos] ^= 1 << bit
            try:
                zlib.decompressobj(31).decompress(bytes(bad))
            except zlib.error as e:
                if "incorrect data check" in str(e):
                    continue
                return bytes(bad), {"mutation": f"bit {bit} of compressed byte {pos} flipped ({e})",
                                    "uncompressed": len(prefix)}
    raise ValueError("no flip that zlib rejects")


def cost_models() -> dict[str, tuple[str, list[str]]]:
    """Cost-model files that once gave a traceback or a simulation that never ended, with the
    words their one-line error must hold."""
    return {"cost-model-list.json": ("[]\n", ["array"]), "cost-model-null.json": ("null\n", ["null"]),
            "cost-model-num.json": ("7\n", ["number"]),
            "cost-model-nan.json": ('{"update_us": NaN}\n', ["NaN"]),
            "cost-model-infinity.json": ('{"flush_us": Infinity}\n', ["Infinity"]),
            "cost-model-1e308.json": ('{"insert_us": 1e308, "commit_us": 1e308}\n', ["outside"]),
            "cost-model-cores_inf.json": ('{"cores": 1e400}\n', ["cores", "finite"])}


ONE_LINE = {"exit": 2}


def build() -> tuple[dict[str, bytes], dict]:
    """Every damaged file's bytes, and the manifest that describes them."""
    data = SOURCE.read_bytes()
    evs = events(data)
    prefix = data[:through_transaction(data, evs, 3)]
    hang_words = ["consumes no bytes", "offset"]
    made: dict[str, tuple[bytes, dict, dict]] = {}
    made["zeroed-tail-rows.binlog"] = (*zeroed_tail(data, evs), {**ONE_LINE, "words": hang_words})
    made["zeroed-bitmaps-update-rows.binlog"] = (
        *zeroed_bitmaps(data, evs, UPDATE_ROWS, "UPDATE_ROWS_EVENT"), {**ONE_LINE, "words": hang_words})
    made["zeroed-bitmap-delete-rows.binlog"] = (
        *zeroed_bitmaps(data, evs, DELETE_ROWS, "DELETE_ROWS_EVENT"), {**ONE_LINE, "words": hang_words})
    made["event-length-1GiB.binlog"] = (*huge_length(data, evs),
                                        {**ONE_LINE, "words": ["event length 1073741824"]})
    made["bad-status-vars-query.binlog"] = (*bad_query(data, evs), {**ONE_LINE, "words": ["QUERY_EVENT", "offset"]})
    gz_words = ["compressed offset", "uncompressed offset"]
    made["gzip-crc-mismatch.binlog.gz"] = (*gz_crc_mismatch(prefix), {**ONE_LINE, "words": gz_words})
    made["zlib-invalid-block.binlog.gz"] = (*gz_invalid_block(prefix), {**ONE_LINE, "words": gz_words})
    made["flipped-deflate.binlog.gz"] = (*gz_flipped(prefix), {**ONE_LINE, "words": gz_words})
    hang = made["zeroed-tail-rows.binlog"]
    made["hang-rows-in-gzip.binlog.gz"] = (gz(hang[0]), {"mutation": "zeroed-tail-rows.binlog, gzipped"},
                                           {**ONE_LINE, "words": hang_words})
    files = {name: b for name, (b, _, _) in made.items()}
    manifest = {"derived_from": str(SOURCE.relative_to(ROOT)), "regenerate": "python3 scripts/make_damaged.py",
                "binlogs": {name: {**how, "expect": expect} for name, (_, how, expect) in made.items()},
                "cost_models": {}}
    for name, (text, words) in cost_models().items():
        files[name] = text.encode()
        manifest["cost_models"][name] = {"expect": {**ONE_LINE, "words": words}}
    files["MANIFEST.json"] = (json.dumps(manifest, indent=1, sort_keys=True) + "\n").encode()
    return files, manifest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with fixtures/damaged/, write nothing")
    args = ap.parse_args(argv)
    files, _ = build()
    if args.check:
        differ = [n for n, b in files.items() if not (OUT / n).is_file() or (OUT / n).read_bytes() != b]
        extra = [p.name for p in OUT.iterdir() if p.name not in files and p.name != "README.md"] \
            if OUT.is_dir() else []
        for n in differ:
            print(f"fixtures/damaged/{n}: differs from what scripts/make_damaged.py derives", file=sys.stderr)
        for n in extra:
            print(f"fixtures/damaged/{n}: not made by scripts/make_damaged.py", file=sys.stderr)
        return 1 if differ or extra else 0
    OUT.mkdir(exist_ok=True)
    for n, b in files.items():
        (OUT / n).write_bytes(b)
    print(f"wrote {len(files)} files to {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
