"""Exact string-key equality from the server's own collation weights.

The server hashes a string key part by its sort key (``Field::make_sort_key`` -> the
collation's ``strnxfrm``, sql/field.cc), so two values are one writeset key exactly when their
weight strings are equal, PAD SPACE collations padding with the space's weight. The weights come
from ``WEIGHT_STRING()`` on a real MySQL server, taken once by
``scripts/make_collation_weights.py`` into the generated table :mod:`._collation_weights`:

* single-byte character sets: the weight of every byte value (complete);
* multi-byte ones: the weight of every code point of the stored repertoire (ASCII, Latin,
  combining marks, Greek, Cyrillic, Latin Extended Additional, general punctuation);
* contractions between two ASCII letters (Spanish "ch"/"ll", Danish "aa", Czech "ch", ...).

A value is canonicalized as the per-level concatenation of its characters' weights (UCA 9.0.0
collations have up to four levels separated by ``0000``; the others one), trailing fill units
dropped under PAD SPACE single-level collations (the fill is ``WEIGHT_STRING('' AS CHAR(1))``,
not always the space's weight: latin7 weighs a space 0x30 and fills with 0x20, so there 'a' and
'a ' differ; the czech_cs collations give a space no weight at all). A value with a character the table does not hold or an undecodable byte
sequence falls back to the approximation of
:mod:`.collation`; :data:`APPROXIMATED` counts those values per collation so the report can
say so. The ``*_bin`` collations never come here: their sort key is the code points or bytes
themselves (:func:`.collation.binary_canonicalizer`, exact for every character).
"""

from __future__ import annotations

import base64
import json
import zlib
from collections import Counter
from functools import lru_cache

#: Values whose equality fell back to the approximation, per collation (reported by analyze).
APPROXIMATED: Counter[str] = Counter()

#: Python codecs of the multi-byte character sets (single-byte ones are read byte by byte).
CODECS = {"utf8mb4": "utf-8", "utf8mb3": "utf-8", "utf8": "utf-8", "ucs2": "utf-16-be",
          "utf16": "utf-16-be", "utf16le": "utf-16-le", "utf32": "utf-32-be", "gbk": "gbk",
          "gb2312": "gb2312", "gb18030": "gb18030", "big5": "big5", "sjis": "shift_jis",
          "cp932": "cp932", "ujis": "euc_jp", "eucjpms": "euc_jp", "euckr": "euc_kr"}

#: Collations whose weight strings are not per-character concatenations: left to the
#: approximation (none since the czech_cs levels are split; kept for a future server).
NOT_CONCATENATIVE: frozenset[str] = frozenset()


@lru_cache(maxsize=1)
def _data() -> dict:
    from . import _collation_weights as gen

    return json.loads(zlib.decompress(base64.b85decode("".join(gen.DATA))))


def collations() -> dict[str, dict]:
    """Name -> {id, charset, pad, maxlen, ...} for every collation of the generating server."""
    return _data()["collations"]


def server_version() -> str:
    return _data()["server"]


def names_by_id() -> dict[int, str]:
    return {e["id"]: name for name, e in collations().items()}


@lru_cache(maxsize=None)
def _table(name: str) -> dict[int, tuple[bytes, ...]] | None:
    """Unit (byte or code point) -> weight per level, resolved through the ``base`` chain."""
    colls = collations()
    e = colls.get(name)
    if e is None or "w" not in e:
        return None
    chain = []
    while e is not None:
        chain.append(e)
        e = colls.get(e["base"]) if e.get("base") else None
    raw: dict[str, str] = {}
    for link in reversed(chain):
        raw.update(link["w"])
    kind = colls[name].get("levels", "one")
    return {int(u): _split(w, kind) for u, w in raw.items()}


def _split(w: str, kind: str) -> tuple[bytes, ...]:
    """Weight hex -> bytes per level: ``uca`` weights (UCA 9.0.0) separate levels by a ``0000``
    unit, ``czech`` ones (latin2_czech_cs) by a ``01`` byte and end with ``00``; ``halves``
    (cp1250_czech_cs) hold one byte per level per character; ``one`` is a single level."""
    if kind == "one":
        return (bytes.fromhex(w),)
    if kind == "halves":  # cp1250_czech_cs: all first-level bytes, then all second-level ones
        return (bytes.fromhex(w[:len(w) // 2]), bytes.fromhex(w[len(w) // 2:]))
    size, sep = (4, "0000") if kind == "uca" else (2, "01")
    if kind == "czech" and w.endswith("00"):
        w = w[:-2]
    levels, cur = [], []
    for i in range(0, len(w), size):
        u = w[i:i + size]
        if u == sep:
            levels.append("".join(cur))
            cur = []
        else:
            cur.append(u)
    levels.append("".join(cur))
    return tuple(bytes.fromhex(x) for x in levels)


def is_exact(name: str) -> bool:
    """Whether values of this collation are compared by the server's weights (within the
    stored repertoire for multi-byte character sets)."""
    e = collations().get(name)
    return (e is not None and name not in NOT_CONCATENATIVE and _table(name) is not None
            and (e["maxlen"] == 1 or e["charset"] in CODECS))


@lru_cache(maxsize=None)
def exact_canonicalizer(name: str, fallback):
    """``bytes -> canonical value`` equal exactly when the server's sort keys are, or None when
    the collation is not covered. ``fallback`` canonicalizes values the table cannot."""
    if not is_exact(name):
        return None
    e = collations()[name]
    table = _table(name)
    assert table is not None
    pairs = {}
    kind = e.get("levels", "one")
    for seq, w in e.get("pairs", {}).items():
        pairs[(ord(seq[0]), ord(seq[1]))] = _split(w, kind)
    first_of_pair = {a for a, _ in pairs}
    nlevels = max((len(v) for v in table.values()), default=1)
    single = e["maxlen"] == 1
    codec = CODECS.get(e["charset"])
    # PAD SPACE: sort keys are filled with this unit, so trailing ones do not count.
    space = bytes.fromhex(e["padw"]) if e["pad"] and e.get("padw") and kind == "one" else None

    czech = kind == "czech"

    def canon(b: bytes):
        if czech:
            # latin2_czech_cs skips trailing spaces, and weighs an inner space by its neighbours
            # (' a' and 'a b' are not per-character concatenations): those values are approximated.
            b = b.rstrip(b" ")
            if b" " in b:
                APPROXIMATED[name] += 1
                return ("~", fallback(b))
        if single:
            units = b
        else:
            try:
                units = [ord(ch) for ch in b.decode(codec)]
            except UnicodeDecodeError:
                APPROXIMATED[name] += 1
                return ("~", fallback(b))
        acc = [bytearray() for _ in range(nlevels)]
        i, n = 0, len(units)
        while i < n:
            u = units[i]
            w = None
            if u in first_of_pair and i + 1 < n:
                w = pairs.get((u, units[i + 1]))
                if w is not None:
                    i += 1
            if w is None:
                w = table.get(u)
                if w is None:
                    APPROXIMATED[name] += 1
                    return ("~", fallback(b))
            for lv, part in enumerate(w):
                acc[lv] += part
            i += 1
        if space:
            first = acc[0]
            while first.endswith(space):
                del first[len(first) - len(space):]
        return tuple(bytes(x) for x in acc)

    return canon
