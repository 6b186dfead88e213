"""Key-value equality under MySQL collations.

Where the generated server weight table holds the collation and the value's characters,
:func:`canonicalizer` returns :mod:`.weights`' exact canonicalizer (the server's own
``WEIGHT_STRING()`` data, checked by the sweep against recorded WRITESET clocks). What follows is
the approximation kept for everything else (reported by analyze as "equality approximated").

The server hashes ``Field::make_sort_key`` bytes, so two values conflict exactly when they are
equal under the column's collation. Only that equality matters for dependencies, so each value
is mapped to a canonical Python value with the same equality classes:

* PAD SPACE collations (``utf8mb4_bin``, ``*_general_ci``, ``*_unicode_ci``, latin1...) ignore
  trailing spaces; NO PAD ones (``utf8mb4_0900_*``) do not.
* ``_ai`` collations ignore accents (Unicode canonical decomposition, combining marks dropped),
  ``_ci`` ones ignore case (Unicode case folding: 'ß' folds to 'ss' as UCA does at level 1).
* ``binary`` compares bytes, and so do the ``*_bin`` collations (:func:`binary_canonicalizer`):
  their sort key is the characters' code points or the stored bytes themselves, never a weight
  table, so they are exact for every character (PAD SPACE ones with trailing spaces dropped) and
  never counted as approximated.

This approximates the UCA tables (contractions and ignorable characters of a few scripts are not
modelled); the fixtures exercise the common cases (case, accents, trailing spaces).
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from ..schema.ddl import charset_of

#: TABLE_MAP optional-metadata collation ids -> names (information_schema.COLLATIONS, 8.0+).
COLLATION_NAMES = {
    8: "latin1_swedish_ci", 5: "latin1_german1_ci", 15: "latin1_danish_ci", 31: "latin1_german2_ci",
    47: "latin1_bin", 48: "latin1_general_ci", 49: "latin1_general_cs", 94: "latin1_spanish_ci",
    11: "ascii_general_ci", 65: "ascii_bin", 63: "binary",
    33: "utf8mb3_general_ci", 83: "utf8mb3_bin", 192: "utf8mb3_unicode_ci", 76: "utf8mb3_tolower_ci",
    45: "utf8mb4_general_ci", 46: "utf8mb4_bin", 224: "utf8mb4_unicode_ci", 246: "utf8mb4_unicode_520_ci",
    255: "utf8mb4_0900_ai_ci", 278: "utf8mb4_0900_as_ci", 305: "utf8mb4_0900_as_cs",
    309: "utf8mb4_0900_bin", 28: "gbk_chinese_ci", 87: "gbk_bin", 51: "cp1251_general_ci",
    35: "ucs2_general_ci", 54: "utf16_general_ci", 60: "utf32_general_ci",
    # A few language-specific 0900 collations (accent/case insensitive at level 1).
    256: "utf8mb4_de_pb_0900_ai_ci", 257: "utf8mb4_is_0900_ai_ci", 258: "utf8mb4_lv_0900_ai_ci",
    266: "utf8mb4_pl_0900_ai_ci", 270: "utf8mb4_es_0900_ai_ci", 271: "utf8mb4_sv_0900_ai_ci",
    277: "utf8mb4_vi_0900_ai_ci", 303: "utf8mb4_ja_0900_as_cs", 306: "utf8mb4_ru_0900_ai_ci",
}

_PYTHON_CODEC = {"utf8mb4": "utf-8", "utf8mb3": "utf-8", "utf8": "utf-8", "latin1": "cp1252",
                 "ascii": "ascii", "cp1251": "cp1251", "gbk": "gbk", "ucs2": "utf-16-be",
                 "utf16": "utf-16-be", "utf32": "utf-32-be", "latin2": "iso8859-2"}


def is_pad_space(collation: str) -> bool:
    c = collation.lower()
    from .weights import collations

    known = collations().get(c)
    if known is not None:
        return known["pad"]  # PAD_ATTRIBUTE of information_schema.COLLATIONS
    return not ("_0900_" in c or c.endswith("_nopad_ci") or c.endswith("_nopad_bin") or c == "binary")


def _strip_accents(s: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFD", s) if not unicodedata.combining(ch))


_NORDIC = str.maketrans({"æ": "ä", "ø": "ö", "ü": "y"})


def _server_names() -> None:
    """Complete and correct :data:`COLLATION_NAMES` from the generated weight table (the hand
    list above predates it: an id missing there made a column binary, and five ids were wrong,
    e.g. 278 is utf8mb4_0900_as_cs and 305 utf8mb4_0900_as_ci, not the reverse)."""
    from .weights import names_by_id

    COLLATION_NAMES.update(names_by_id())


_server_names()


@lru_cache(maxsize=512)
def canonicalizer(collation: str | None):
    """A function ``bytes -> canonical value`` for string values of ``collation``
    (None: binary comparison): the server's weights where :mod:`.weights` holds them,
    else the approximation below."""
    if collation is None or collation == "binary":
        return lambda b: b
    if is_binary_collation(collation):
        return binary_canonicalizer(collation.lower())
    from .weights import exact_canonicalizer

    exact = exact_canonicalizer(collation.lower(), approximate_canonicalizer(collation))
    return exact if exact is not None else approximate_canonicalizer(collation)


def is_binary_collation(collation: str) -> bool:
    """A ``*_bin`` collation: MySQL's utf8mb4_bin, utf8mb4_0900_bin, utf8mb3_bin, latin1_bin...,
    MariaDB's ``*_bin`` and ``*_nopad_bin`` (``binary``, the binary strings' own, is apart)."""
    return collation.lower().endswith("_bin")


#: How a space is stored in the character sets whose code unit is wider than a byte (everywhere
#: else it is the byte 0x20, which no multi-byte character holds as a trailing byte: UTF-8
#: continuation bytes are 0x80-0xBF, the CJK sets' trailing bytes 0x30 and up).
_WIDE_SPACE = {"ucs2": b"\x00 ", "utf16": b"\x00 ", "utf16le": b" \x00", "utf32": b"\x00\x00\x00 "}


@lru_cache(maxsize=512)
def binary_canonicalizer(collation: str):
    """``bytes -> canonical value`` of a ``*_bin`` collation, exact for every character.

    The server's sort key there is no weight table: ``my_strnxfrm_unicode`` /
    ``my_strnxfrm_unicode_full_bin`` write each character's code point (utf8mb4_bin,
    utf8mb3_bin, ucs2/utf16/utf32_bin), ``my_strnxfrm_8bit_bin`` / ``my_strnxfrm_mb`` and
    utf8mb4_0900_bin the stored bytes; the generated table agrees for every code point it holds.
    Code points and valid encodings map one to one, so the bytes are the canonical value, with the
    trailing spaces dropped under PAD SPACE (whole code units: U+2020 in ucs2 is the bytes 20 20,
    no space) and kept under NO PAD (utf8mb4_0900_bin, MariaDB's ``*_nopad_bin``)."""
    if not is_pad_space(collation):
        return lambda b: b
    space = _WIDE_SPACE.get(charset_of(collation))
    if space is None:
        return lambda b: b.rstrip(b" ")
    width = len(space)

    def canon(b: bytes) -> bytes:
        if len(b) % width:
            return b  # not whole code units (the server stores none): as it is
        end = len(b)
        while end and b[end - width:end] == space:
            end -= width
        return b[:end]

    return canon


@lru_cache(maxsize=512)
def approximate_canonicalizer(collation: str):
    """Case folding, accent stripping and PAD SPACE trimming: the equality classes of the
    common collations, not their UCA tables (see the module doc; ``*_bin`` ones never come here)."""
    c = collation.lower()
    codec = _PYTHON_CODEC.get(charset_of(c), "utf-8")
    pad = is_pad_space(c)
    ai = c.endswith("_ai_ci") or (c.endswith("_ci") and "_as_" not in c)
    ci = c.endswith("_ci")
    nordic = c.startswith(("latin1_swedish", "utf8mb4_sv_", "latin1_danish", "utf8mb4_da_"))

    def canon(b: bytes):
        s = b.decode(codec, "surrogateescape")
        if pad:
            s = s.rstrip(" ")
        if ci:
            s = s.casefold()
        if nordic:
            # Swedish/Danish collations keep å, ä, ö as letters of their own (æ sorts as ä,
            # ø as ö, ü as y) and fold the other accents.
            s = s.translate(_NORDIC)
            s = "".join(ch if ch in "åäö" else _strip_accents(ch) for ch in s)
        elif ai:
            s = _strip_accents(s)
        return s

    return canon


def prefix_chars(value: bytes, n: int, collation: str | None) -> bytes:
    """The first ``n`` characters (bytes for binary) of a string value, as a prefix key keeps."""
    if collation is None or collation == "binary":
        return value[:n]
    codec = _PYTHON_CODEC.get(charset_of(collation), "utf-8")
    return value.decode(codec, "surrogateescape")[:n].encode(codec, "surrogateescape")
