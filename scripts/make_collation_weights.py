"""Generate ``src/lagadvisor/writeset/_collation_weights.py`` from a real MySQL server.

The server hashes a string key part by its collation's sort key (``Field::make_sort_key`` ->
``strnxfrm``), so two values conflict exactly when their weight strings are equal (after PAD
SPACE padding). The weights are taken here from the server itself, ``WEIGHT_STRING()`` of every
character of a fixed repertoire under every collation of ``information_schema.COLLATIONS``:

* single-byte character sets: all 256 byte values;
* multi-byte ones: the code points of :data:`REPERTOIRE` that the character set can hold
  (checked by a round trip through utf32);
* the PAD SPACE fill (``WEIGHT_STRING('' AS CHAR(1))``: not always the space's weight);
* contractions: every pair of ASCII letters whose weight is not the concatenation of the two
  letters' weights (Spanish "ch"/"ll", Danish "aa", Czech "ch", Hungarian digraphs...).

Per collation only what differs from the most similar collation already stored is kept, and the
whole is zlib-compressed: the generated module is a data table, read by
:mod:`lagadvisor.writeset.weights`; nothing queries a server at a user's run time.

Usage: ``python3 scripts/make_collation_weights.py [--port P]`` (starts a fresh MySQL 9.x from
``scripts/realservers.py`` unless ``--port`` names a running one).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "lagadvisor" / "writeset" / "_collation_weights.py"

#: Code points whose weights are stored for multi-byte character sets: ASCII and the Latin
#: blocks, combining marks, Greek, Cyrillic, Latin Extended Additional (Vietnamese), general
#: punctuation (zero-width and special spaces). Characters outside it are approximated.
REPERTOIRE = ((0x0000, 0x04FF), (0x1E00, 0x1EFF), (0x2000, 0x206F))
LETTERS = [chr(c) for c in range(ord("a"), ord("z") + 1)] + [chr(c) for c in range(ord("A"), ord("Z") + 1)]
CHUNK = 600


def code_points() -> list[int]:
    return [cp for lo, hi in REPERTOIRE for cp in range(lo, hi + 1)]


def _select(cur, exprs: list[str]) -> list:
    out: list = []
    for i in range(0, len(exprs), CHUNK):
        cur.execute("SELECT " + ", ".join(exprs[i:i + CHUNK]))
        out.extend(cur.fetchone())
    return out


def _u32(cp: int) -> str:
    return f"_utf32 x'{cp:08X}'"


def collation_table(cur, name: str, charset: str, maxlen: int) -> tuple[dict, dict]:
    """(unit -> weight hex, pair -> weight hex) for one collation."""
    if maxlen == 1:
        units = list(range(256))
        src = [f"CONVERT(_binary x'{b:02X}' USING {charset})" for b in units]
        ok = [1] * len(units)
    else:
        units = code_points()
        src = [f"CONVERT({_u32(cp)} USING {charset})" for cp in units]
        ok = _select(cur, [f"CONVERT({s} USING utf32) = {_u32(cp)}" for s, cp in zip(src, units)])
    weights = _select(cur, [f"HEX(WEIGHT_STRING({s} COLLATE {name}))" for s in src])
    table = {str(u): w for u, w, k in zip(units, weights, ok) if k}
    pairs = {}
    if "_bin" not in name and "general" not in name and name != "binary":
        seqs = [a + b for a in LETTERS for b in LETTERS]
        if maxlen == 1:
            exprs = [f"HEX(WEIGHT_STRING(CONVERT(_binary x'{s.encode().hex()}' USING {charset}) COLLATE {name}))"
                     for s in seqs]
        else:
            exprs = [f"HEX(WEIGHT_STRING(CONVERT(_utf32 x'{''.join(f'{ord(ch):08X}' for ch in s)}' "
                     f"USING {charset}) COLLATE {name}))" for s in seqs]
        got = _select(cur, exprs)
        key = (lambda ch: str(ord(ch)))
        for s, w in zip(seqs, got):
            a, b = table.get(key(s[0])), table.get(key(s[1]))
            if a is None or b is None:
                continue
            if w != _concat(a, b, level_kind(name)):
                pairs[s] = w
    return table, pairs


def level_kind(name: str) -> str:
    """How a collation's weight string separates its levels: ``uca`` (UCA 9.0.0: 2-byte units,
    ``0000`` between levels), ``czech`` (latin2/cp1250 czech_cs: 1-byte units, ``01`` between
    levels, ``00`` at the end), ``halves`` (cp1250_czech_cs: two levels of one byte per character,
    all first-level bytes then all second-level ones) or ``one`` (a single level)."""
    if "_0900_" in name:
        return "uca"
    if name == "cp1250_czech_cs":
        return "halves"
    if name.endswith("_czech_cs"):
        return "czech"
    return "one"


def _levels(w: str, kind: str) -> list[str]:
    """Split a weight hex string into its levels."""
    if kind == "one":
        return [w]
    if kind == "halves":
        return [w[:len(w) // 2], w[len(w) // 2:]]
    size, sep = (4, "0000") if kind == "uca" else (2, "01")
    if kind == "czech" and w.endswith("00"):
        w = w[:-2]
    units = [w[i:i + size] for i in range(0, len(w), size)]
    out, cur = [], []
    for u in units:
        if u == sep:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(u)
    out.append("".join(cur))
    return out


def _concat(a: str, b: str, kind: str) -> str:
    """WEIGHT_STRING(ab) of a collation without contractions, from those of a and b."""
    la, lb = _levels(a, kind), _levels(b, kind)
    if kind == "one" or len(la) != len(lb):
        return a + b
    if kind == "uca":
        return "0000".join(x + y for x, y in zip(la, lb))
    if kind == "halves":
        return la[0] + lb[0] + la[1] + lb[1]
    return "01".join(x + y for x, y in zip(la, lb)) + "00"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, help="a running MySQL 9.x on 127.0.0.1 (root, no password)")
    args = ap.parse_args()
    import pymysql

    server = None
    port = args.port
    if port is None:
        sys.path.insert(0, str(ROOT / "scripts"))
        import realservers

        port = 3400 + os.getpid() % 90
        server = realservers.MySQLServer(f"ws-weights-{os.getpid()}", port, ["--server-id=1"], fresh=True)
        server.start()
    try:
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", charset="utf8mb4")
        cur = conn.cursor()
        cur.execute("SELECT VERSION()")
        version = cur.fetchone()[0]
        cur.execute("SELECT c.COLLATION_NAME, c.ID, c.CHARACTER_SET_NAME, c.PAD_ATTRIBUTE, cs.MAXLEN "
                    "FROM information_schema.COLLATIONS c JOIN information_schema.CHARACTER_SETS cs "
                    "USING (CHARACTER_SET_NAME) ORDER BY c.ID")
        rows = cur.fetchall()
        stored: dict[str, dict] = {}
        full: dict[str, dict] = {}
        t0 = time.time()
        for name, cid, charset, pad, maxlen in rows:
            entry = {"id": cid, "charset": charset, "pad": pad == "PAD SPACE", "maxlen": maxlen,
                     "levels": level_kind(name)}
            if entry["pad"]:
                # What strnxfrm pads with: not always the space's weight (latin7: space 30, pad 20).
                cur.execute(f"SELECT HEX(WEIGHT_STRING(CONVERT('' USING {charset}) COLLATE {name} AS CHAR(1)))")
                entry["padw"] = cur.fetchone()[0]
            if name != "binary":
                table, pairs = collation_table(cur, name, charset, maxlen)
                # Store the difference from the most similar table of the same unit kind.
                best, best_diff = None, table
                for other, otable in full.items():
                    if stored[other]["maxlen"] == 1 if maxlen == 1 else stored[other]["maxlen"] != 1:
                        diff = {u: w for u, w in table.items() if otable.get(u) != w}
                        gone = [u for u in otable if u not in table]
                        if not gone and len(diff) < len(best_diff):
                            best, best_diff = other, diff
                entry.update(base=best, w=best_diff, pairs=pairs)
                full[name] = table
            stored[name] = entry
            print(f"{name}: {len(entry.get('w', {}))} weights"
                  f"{' over ' + entry['base'] if entry.get('base') else ''}, {len(entry.get('pairs', {}))} "
                  f"contractions ({time.time() - t0:.0f} s)", file=sys.stderr)
    finally:
        if server is not None:
            server.stop()
            server.remove()
    blob = json.dumps({"server": version, "repertoire": REPERTOIRE, "collations": stored},
                      separators=(",", ":"), sort_keys=True).encode()
    packed = base64.b85encode(zlib.compress(blob, 9)).decode()
    lines = [packed[i:i + 100] for i in range(0, len(packed), 100)]
    OUT.write_text(
        '"""Generated by scripts/make_collation_weights.py from MySQL ' + version + ' -- do not edit.\n\n'
        "Per collation: WEIGHT_STRING() of every byte (single-byte character sets) or of every code point\n"
        "of the repertoire, PAD attribute, ASCII-letter contractions; stored as differences from a similar\n"
        'collation, zlib-compressed JSON in base85. Read by lagadvisor.writeset.weights."""\n\n'
        f"SERVER = {version!r}\n"
        "DATA = (\n" + "\n".join(f'    "{ln}"' for ln in lines) + "\n)\n")
    print(f"{OUT}: {len(stored)} collations, {len(blob)} bytes of JSON, {OUT.stat().st_size} bytes written",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
