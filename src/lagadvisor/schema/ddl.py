"""A tolerant reader of the DDL that changes table definitions: CREATE TABLE, ALTER TABLE,
DROP/RENAME/TRUNCATE TABLE, CREATE/ALTER/DROP DATABASE — as written in binlog QUERY events and
in ``mysqldump --no-data`` output.

It extracts only what writesets need (columns, collations, PRIMARY/UNIQUE keys, foreign keys);
anything it does not understand in a statement is skipped, and statements it cannot follow
mark the table unknown rather than guessing (see :func:`apply_statement`).
Naming rules follow the server: an unnamed UNIQUE index takes its first column's name with
``_2``, ``_3``... on clashes (sql_table.cc ``make_unique_key_name``); an unnamed foreign key is
``<table>_ibfk_<n>``.
"""

from __future__ import annotations

import gc
import re
from sys import intern as _intern
from dataclasses import dataclass, replace

from .model import Catalog, Column, ForeignKey, Key, KeyPart, TableSchema

_TOKEN = re.compile(r"""\s*(?:
    (?P<vcomment>/\*!\d*)            # versioned comment opener: its content is SQL
  | (?P<comment>/\*.*?\*/|--[^\n]*|\#[^\n]*)
  | (?P<vend>\*/)
  | (?P<bq>`[^`]*(?:``[^`]*)*`)
  | (?P<str>'[^'\\]*(?:(?:\\.|'')[^'\\]*)*'|"[^"\\]*(?:(?:\\.|"")[^"\\]*)*")
  | (?P<num>\d+(?:\.\d+)?)
  | (?P<word>[A-Za-z_$@][\w$@]*)
  | (?P<op>[(),;.=])
  | (?P<other>.)
)""", re.X | re.S)

class Tok(str):
    """A token; ``quoted`` when it was a backtick identifier (never a keyword)."""

    quoted: bool = False
    kind: str = "word"


class _Word(Tok):
    __slots__ = ()
    kind = "word"


class _Num(Tok):
    __slots__ = ()
    kind = "num"


class _Op(Tok):
    __slots__ = ()
    kind = "op"


class _Other(Tok):
    __slots__ = ()
    kind = "other"


class _Str(Tok):
    __slots__ = ()
    kind = "str"


class _Ident(Tok):
    __slots__ = ()
    kind = "ident"
    quoted = True


#: The same tokens as :data:`_TOKEN` as plain strings (``findall`` runs in C); the kind is told by
#: the first character, in the order of :data:`_TOKEN`'s alternatives.
_TOKEN_TEXT = re.compile(r"""\s*(
    /\*!\d* | /\*.*?\*/ | --[^\n]* | \#[^\n]* | \*/
  | `[^`]*(?:``[^`]*)*`
  | '[^'\\]*(?:(?:\\.|'')[^'\\]*)*' | "[^"\\]*(?:(?:\\.|"")[^"\\]*)*"
  | \d+(?:\.\d+)? | [A-Za-z_$@][\w$@]* | [(),;.=] | .
)""", re.X | re.S)
_OPS = frozenset("(),;.=")
_WORD_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_$@")


def tokenize(sql: str) -> list[Tok]:
    out: list[Tok] = []
    append = out.append
    for text in _TOKEN_TEXT.findall(sql):
        c = text[0]
        if c in _WORD_START:
            append(_Word(text))
        elif c in _OPS:
            append(_Op(text))
        elif c == "`" and len(text) > 1:
            append(_Ident(text[1:-1].replace("``", "`")))
        elif c == "'" or c == '"':
            if len(text) > 1 and text[-1] == c:
                append(_Str(text[1:-1]))
            else:
                append(_Other(text))  # an unterminated quote: one character, as _TOKEN
        elif c in "0123456789":
            append(_Num(text))
        elif c == "/" and text[:2] == "/*" or c == "#" or text[:2] == "--" or text == "*/":
            continue
        else:
            append(_Other(text))
    return out


def _tokenize_reference(sql: str) -> list[Tok]:
    """The tokenizer by named groups (kept as the specification :func:`tokenize` is tested against)."""
    out: list[Tok] = []
    for m in _TOKEN.finditer(sql):
        kind = m.lastgroup
        if kind in ("vcomment", "comment", "vend"):
            continue
        text = m.group(kind)
        if kind == "bq":
            out.append(_Ident(text[1:-1].replace("``", "`")))
        elif kind == "str":
            out.append(_Str(text[1:-1]))
        else:
            out.append({"word": _Word, "num": _Num, "op": _Op, "other": _Other}[kind](text))
    return out


class _P:
    """Token cursor with keyword helpers."""

    def __init__(self, toks: list[Tok]) -> None:
        self.t = toks
        self.i = 0

    def peek(self, k: int = 0) -> Tok | None:
        j = self.i + k
        return self.t[j] if j < len(self.t) else None

    def kw(self, *words: str) -> bool:
        """Consume the keyword sequence if it is next."""
        t, i = self.t, self.i
        if i + len(words) > len(t):
            return False
        for k, w in enumerate(words):
            tok = t[i + k]
            if tok.kind == "ident" or tok.kind == "str" or tok.upper() != w:
                return False
        self.i = i + len(words)
        return True

    def word(self, k: int = 0) -> str:
        """The upper-cased keyword at ``k`` ahead, or "" (a quoted name, string, number or the end)."""
        j = self.i + k
        if j < len(self.t):
            tok = self.t[j]
            if tok.kind == "word":
                return tok.upper()
        return ""

    def at(self, *words: str) -> bool:
        for k, w in enumerate(words):
            t = self.peek(k)
            if t is None or t.quoted or t.kind == "str" or t.upper() != w:
                return False
        return True

    def next(self) -> Tok | None:
        t = self.peek()
        if t is not None:
            self.i += 1
        return t

    def ident(self) -> str | None:
        t = self.next()
        return None if t is None else str(t)

    def qualified(self, default_db: str) -> tuple[str, str]:
        a = self.ident() or ""
        if self.peek() == "." and self.peek(1) is not None:
            self.i += 1
            b = self.ident() or ""
            return a, b
        return default_db, a

    def skip_group(self) -> list[Tok]:
        """Consume a balanced ``( ... )`` and return its inner tokens."""
        assert self.peek() == "("
        start = self.i
        end = _after_group(self.t, start)
        if end < 0:
            self.i = len(self.t)
            return self.t[start + 1:]
        self.i = end
        return self.t[start + 1:end - 1]

    def until_comma(self) -> list[Tok]:
        """Tokens up to (not including) the next top-level comma or the end."""
        out = []
        while self.i < len(self.t):
            t = self.t[self.i]
            if t.kind == "op" and t in (",", ";"):
                break
            if t.kind == "op" and t == "(":
                out.append(t)
                out.extend(self.skip_group())
                out.append(Tok(")"))
                continue
            out.append(t)
            self.i += 1
        return out


def _after_group(toks: list[Tok], i: int) -> int:
    """The index after the ``( ... )`` group that opens at ``toks[i]``, or -1 when it never closes."""
    depth = 0
    n = len(toks)
    while i < n:
        t = toks[i]
        i += 1
        if t.kind == "op":
            if t == "(":
                depth += 1
            elif t == ")":
                depth -= 1
                if depth == 0:
                    return i
    return -1


def _skip(toks: list[Tok], i: int) -> int:
    """:func:`_after_group`, to the end when the group never closes (as :meth:`_P.skip_group`)."""
    j = _after_group(toks, i)
    return len(toks) if j < 0 else j


def _split_top(toks: list[Tok]) -> list[list[Tok]]:
    parts: list[list[Tok]] = []
    cur: list[Tok] = []
    depth = 0
    for t in toks:
        if t.kind == "op":
            if t == "(":
                depth += 1
            elif t == ")":
                depth -= 1
            elif t == "," and depth == 0:
                if cur:
                    parts.append(cur)
                cur = []
                continue
        cur.append(t)
    if cur:
        parts.append(cur)
    return parts


_STRING_TYPES = {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set",
                 "nchar", "nvarchar", "national"}
_CHARSET_DEFAULT_COLLATION = {
    "utf8mb4": "utf8mb4_0900_ai_ci", "utf8mb3": "utf8mb3_general_ci", "utf8": "utf8mb3_general_ci",
    "latin1": "latin1_swedish_ci", "ascii": "ascii_general_ci", "binary": "binary",
    "ucs2": "ucs2_general_ci", "utf16": "utf16_general_ci", "utf32": "utf32_general_ci",
    "cp1251": "cp1251_general_ci", "gbk": "gbk_chinese_ci", "big5": "big5_chinese_ci",
    "sjis": "sjis_japanese_ci", "euckr": "euckr_korean_ci", "latin2": "latin2_general_ci",
}


def default_collation(charset: str) -> str:
    cs = charset.lower()
    return _CHARSET_DEFAULT_COLLATION.get(cs, f"{cs}_general_ci")


def charset_of(collation: str) -> str:
    c = collation.lower()
    if c == "binary":
        return "binary"
    if c.startswith("utf8_"):
        return "utf8mb3"
    return c.split("_", 1)[0]


class _ColumnAttrs:
    """What follows a column's type in its definition (``_column_attributes``): ``binary`` is
    the BINARY attribute (the charset's _bin collation), ``inline`` the inline key kinds."""

    __slots__ = ("unsigned", "nullable", "charset", "collation", "generated", "invisible", "binary", "inline")

    def __init__(self) -> None:
        self.unsigned = self.generated = self.invisible = self.binary = False
        self.nullable = True
        self.charset: str | None = None
        self.collation: str | None = None
        self.inline: list[str] = []   # PRIMARY, UNIQUE


def _column_attributes(toks: list[Tok], i: int) -> tuple[_ColumnAttrs, int]:
    """The attributes of a column definition from ``toks[i]`` on, and where they end."""
    a = _ColumnAttrs()
    n = len(toks)
    while i < n:
        t = toks[i]
        if t.kind != "word":
            i = _skip(toks, i) if t == "(" else i + 1
            continue
        w = t.upper()
        nxt = toks[i + 1] if i + 1 < n else None
        w1 = nxt.upper() if nxt is not None and nxt.kind == "word" else ""
        if w == "UNSIGNED":
            i += 1
            a.unsigned = True
        elif w == "NOT" and w1 == "NULL":
            i += 2
            a.nullable = False
        elif w == "NULL":
            i += 1
            a.nullable = True
        elif (w == "CHARACTER" and w1 == "SET") or w == "CHARSET":
            i += 2 if w == "CHARACTER" else 1
            if i < n:
                a.charset = str(toks[i]).lower()
                i += 1
            else:
                a.charset = ""
        elif w == "COLLATE":
            i += 1
            if i < n:
                a.collation = str(toks[i]).lower()
                i += 1
            else:
                a.collation = ""
        elif w == "PRIMARY":
            i += 2 if w1 == "KEY" else 1
            a.inline.append("PRIMARY")
            a.nullable = False
        elif w == "UNIQUE":
            i += 2 if w1 in ("KEY", "INDEX") else 1
            a.inline.append("UNIQUE")
        elif w == "KEY":
            i += 1
            a.inline.append("PRIMARY")  # a bare KEY in a column definition means PRIMARY KEY
            a.nullable = False
        elif (w == "GENERATED" and w1 == "ALWAYS") or w == "AS":
            i += 2 if w == "GENERATED" else 1
            a.generated = True
            if i < n and toks[i] == "(":
                i = _skip(toks, i)
            elif i < n and toks[i].kind == "word" and toks[i].upper() == "AS":
                i += 1
                if i < n and toks[i] == "(":
                    i = _skip(toks, i)
        elif w == "INVISIBLE":
            i += 1
            a.invisible = True
        elif w == "BINARY":
            i += 1
            a.binary = True
        elif w in ("DEFAULT", "COMMENT") or (w == "ON" and w1 == "UPDATE"):
            i += 2 if w == "ON" else 1
            if i < n:  # the value: a word, a function call, a literal or a parenthesised expression
                if toks[i].kind == "word" and i + 1 < n and toks[i + 1] == "(":
                    i = _skip(toks, i + 1)
                else:
                    i += 1
                    if i < n and toks[i] == "(":
                        i = _skip(toks, i)
        else:
            i += 1
    return a, i


def _parse_column(name: str, toks: list[Tok], table_collation: str | None) -> tuple[Column, list[str]]:
    """A column definition; returns the column and inline key kinds (PRIMARY, UNIQUE)."""
    p = _P(toks)
    typ = (p.ident() or "").lower()
    if typ == "national":
        typ = (p.ident() or "").lower()
    if typ in ("character", "char") and p.at("VARYING"):
        p.next()
        typ = "varchar"
    length = None
    if p.peek() == "(":
        inner = p.skip_group()
        nums = [t for t in inner if t.kind == "num"]
        if nums and typ not in ("enum", "set"):
            length = int(float(nums[0]))
    a, p.i = _column_attributes(p.t, p.i)
    unsigned, nullable, charset, collation = a.unsigned, a.nullable, a.charset, a.collation
    generated, invisible, inline, binary_attr = a.generated, a.invisible, a.inline, a.binary
    if typ in ("serial",):
        typ, unsigned, nullable = "bigint", True, False
        inline.append("UNIQUE")
    if typ in ("bool", "boolean"):
        typ = "tinyint"
    if typ == "integer":
        typ = "int"
    if typ in ("dec", "numeric", "fixed"):
        typ = "decimal"
    is_string = typ in _STRING_TYPES
    if is_string:
        if collation is None:
            if charset is not None:
                collation = default_collation(charset)
            else:
                collation = table_collation
        if binary_attr and collation:
            collation = charset_of(collation) + "_bin"
        if collation and charset is None:
            charset = charset_of(collation)
        if typ in ("char", "varchar") and length is None:
            length = 1
    else:
        charset = collation = None
    # one string object per type, collation and charset name across a catalog of many tables
    return Column(name, _intern(typ), length, unsigned, nullable, collation and _intern(collation),
                  charset and _intern(charset), generated, invisible), inline


def _key_parts(toks: list[Tok]) -> tuple[tuple[KeyPart, ...], bool]:
    parts = []
    functional = False
    for part in _split_top(toks):
        if part[0].kind == "op" and part[0] == "(":
            functional = True
            parts.append(KeyPart("", None))
            continue
        name = str(part[0])
        prefix = None
        if len(part) >= 3 and part[1] == "(" and part[2].kind == "num":
            prefix = int(part[2])
        parts.append(KeyPart(name, prefix))
    return tuple(parts), functional


def _unique_name(first_col: str, taken: set[str]) -> str:
    if first_col.lower() not in taken and first_col.upper() != "PRIMARY":
        return first_col
    n = 2
    while f"{first_col}_{n}".lower() in taken:
        n += 1
    return f"{first_col}_{n}"


class _TableBuilder:
    def __init__(self, t: TableSchema) -> None:
        self.db = t.db
        self.name = t.name
        self.columns = list(t.columns)
        self.keys = list(t.keys)
        self.fks = list(t.foreign_keys)
        self.collation = t.default_collation
        self.engine = t.engine
        self.indexed = t.indexed
        self.indexes = list(t.indexes)
        self.fk_counter = max([int(m.group(1)) for fk in self.fks
                               if (m := re.search(r"_ibfk_(\d+)$", fk.name))] or [0])

    def build(self, source: str) -> TableSchema:
        keys = sorted(self.keys, key=lambda k: not k.primary)
        return TableSchema(self.db, self.name, tuple(self.columns), tuple(keys), tuple(self.fks),
                           self.collation, source, True, self.engine, self.indexed, tuple(self.indexes))

    def taken(self) -> set[str]:
        return {k.name.lower() for k in self.keys} | {k.name.lower() for k in self.indexes}

    def add_index(self, name: str | None, parts: tuple[KeyPart, ...], functional: bool) -> None:
        """A non-unique KEY/INDEX (named as the server names an unnamed one: its first column)."""
        if name is None:
            name = _unique_name(parts[0].column if parts and parts[0].column else "functional_index",
                                self.taken())
        self.indexes.append(Key(name, parts, False, functional))
        self.indexed = True

    def drop_index(self, name: str) -> None:
        low = name.lower()
        self.keys = [k for k in self.keys if not ((k.name or "").lower() == low or (low == "primary" and k.primary))]
        self.indexes = [k for k in self.indexes if k.name.lower() != low]

    def add_key(self, kind: str, name: str | None, parts: tuple[KeyPart, ...], functional: bool) -> None:
        if kind == "PRIMARY":
            self.keys = [k for k in self.keys if not k.primary]
            self.keys.insert(0, Key("PRIMARY", parts, True, functional))
            # PRIMARY KEY columns are NOT NULL.
            names = {p.column.lower() for p in parts}
            self.columns = [replace(c, nullable=False) if c.name.lower() in names else c for c in self.columns]
            return
        if name is None:
            name = _unique_name(parts[0].column if parts and parts[0].column else "functional_index",
                                self.taken())
        self.keys.append(Key(name, parts, False, functional))

    def add_fk(self, name: str | None, cols: list[str], ref_db: str, ref_table: str, ref_cols: list[str]) -> None:
        if name is None:
            self.fk_counter += 1
            name = f"{self.name}_ibfk_{self.fk_counter}"
        self.fks.append(ForeignKey(name, tuple(cols), ref_db, ref_table, tuple(ref_cols)))

    def rename_in_keys(self, old: str, new: str) -> None:
        low = old.lower()
        self.keys, self.indexes = ([replace(k, parts=tuple(replace(pt, column=new) if pt.column.lower() == low else pt
                                                          for pt in k.parts)) for k in keys]
                                   for keys in (self.keys, self.indexes))

    def column_pos(self, name: str) -> int | None:
        for i, c in enumerate(self.columns):
            if c.name.lower() == name.lower():
                return i
        return None


def _index_def(p: _P) -> tuple[str | None, tuple[KeyPart, ...] | None, bool]:
    """An index definition after its KEY/INDEX word: ``[name] [USING type] (parts)``: its name
    (None when unnamed), parts (None when there is no part list) and whether a part is an
    expression."""
    iname = None
    if p.peek() is not None and p.peek() != "(":
        t = p.peek()
        if not (not t.quoted and t.upper() == "USING"):
            iname = p.ident()
    while p.peek() is not None and p.peek() != "(":
        p.next()  # USING BTREE
    if p.peek() != "(":
        return iname, None, False
    parts, fn = _key_parts(p.skip_group())
    return iname, parts, fn


def _parse_constraint(p: _P, tb: _TableBuilder, db: str) -> bool:
    """PRIMARY KEY / UNIQUE / FOREIGN KEY / KEY / INDEX / FULLTEXT / CHECK clauses."""
    name = None
    if p.kw("CONSTRAINT"):
        t = p.peek()
        if t is not None and not (not t.quoted and t.upper() in ("PRIMARY", "UNIQUE", "FOREIGN", "CHECK")):
            name = p.ident()
    if p.kw("PRIMARY", "KEY"):
        while p.peek() is not None and p.peek() != "(":
            p.next()  # USING BTREE
        parts, fn = _key_parts(p.skip_group()) if p.peek() == "(" else ((), False)
        tb.add_key("PRIMARY", None, parts, fn)
        return True
    if p.kw("UNIQUE"):
        p.kw("KEY") or p.kw("INDEX")
        iname, parts, fn = _index_def(p)
        tb.add_key("UNIQUE", iname or name, parts if parts is not None else (), fn)
        return True
    if p.kw("FOREIGN", "KEY"):
        fk_index = None
        if p.peek() != "(":
            fk_index = p.ident()
        cols = [str(x[0]) for x in _split_top(p.skip_group())] if p.peek() == "(" else []
        if p.kw("REFERENCES"):
            ref_db, ref_table = p.qualified(db)
            ref_cols = [str(x[0]) for x in _split_top(p.skip_group())] if p.peek() == "(" else []
            tb.add_fk(name or fk_index, cols, ref_db, ref_table, ref_cols)
        return True
    if name is not None and p.kw("CHECK"):
        return True
    if p.kw("KEY") or p.kw("INDEX"):
        tb.indexed = True  # a non-unique index: the replica can seek rows through it
        iname, parts, fn = _index_def(p)
        if parts is not None:
            tb.add_index(iname or name, parts, fn)
        return True
    if p.at("FULLTEXT") or p.at("SPATIAL") or p.at("CHECK"):
        return True
    return False


_CONSTRAINT_WORDS = frozenset(("CONSTRAINT", "PRIMARY", "UNIQUE", "FOREIGN", "KEY", "INDEX", "FULLTEXT",
                               "SPATIAL", "CHECK"))


def _parse_create_body(body: list[Tok], tb: _TableBuilder, db: str) -> None:
    for item in _split_top(body):
        head = item[0]
        if head.kind != "word" or head.upper() not in _CONSTRAINT_WORDS:
            p = _P(item)  # a column: no constraint clause starts with a name
        else:
            p = _P(item)
            if _parse_constraint(p, tb, db):
                continue
            p = _P(item)
        name = p.ident()
        if name is None:
            continue
        col, inline = _parse_column(name, item[1:], tb.collation)
        tb.columns.append(col)
        for kind in inline:
            tb.add_key(kind, None if kind == "PRIMARY" else None, (KeyPart(name),), False)


def _table_options(p: _P, tb: _TableBuilder) -> None:
    toks = p.t
    n = len(toks)
    while p.i < n:
        t = toks[p.i]
        w = t.upper() if t.kind == "word" else ""
        if w == "CHARACTER" and p.word(1) == "SET" or w == "CHARSET":
            p.i += 2 if w == "CHARACTER" else 1
            p.kw("=")
            cs = (p.ident() or "").lower()
            if tb.collation is None or charset_of(tb.collation) != cs:
                tb.collation = default_collation(cs)
        elif w == "COLLATE":
            p.i += 1
            p.kw("=")
            tb.collation = (p.ident() or "").lower()
        elif w == "ENGINE":
            p.i += 1
            p.kw("=")
            tb.engine = (p.ident() or "").lower()
        else:
            p.i += 1  # DEFAULT and everything else


class UnsupportedDDL(Exception):
    """A statement that changes a table in a way this reader cannot follow."""


def apply_statement(cat: Catalog, sql: str, default_db: str, source: str = "binlog-ddl") -> list[str]:
    """Apply one DDL statement to ``cat``. Returns the ``db.table`` names whose definition became
    unknown because the statement could not be followed (the caller reports them)."""
    toks = tokenize(sql)
    if not toks:
        return []
    p = _P(toks)
    try:
        if p.kw("CREATE"):
            p.kw("OR", "REPLACE")
            p.kw("TEMPORARY")  # temporary tables are never binlogged in row format
            if p.kw("TABLE"):
                return _create_table(cat, p, default_db, source)
            if p.kw("UNIQUE", "INDEX") or p.kw("UNIQUE", "KEY"):
                return _create_unique_index(cat, p, default_db, source)
            if p.kw("INDEX") or p.kw("KEY"):
                return _create_index(cat, p, default_db, source)
            if p.kw("DATABASE") or p.kw("SCHEMA"):
                p.kw("IF", "NOT", "EXISTS")
                db = p.ident() or ""
                tb = _TableBuilder(TableSchema(db, "", ()))
                _table_options(p, tb)
                if tb.collation:
                    cat.db_collation[db.lower()] = tb.collation
                return []
            return []
        if p.kw("ALTER"):
            p.kw("ONLINE") or p.kw("IGNORE")
            if p.kw("TABLE"):
                return _alter_table(cat, p, default_db, source)
            if p.kw("DATABASE") or p.kw("SCHEMA"):
                t = p.peek()
                db = default_db
                if t is not None and (t.quoted or t.upper() not in ("DEFAULT", "CHARACTER", "CHARSET", "COLLATE")):
                    db = p.ident() or default_db
                tb = _TableBuilder(TableSchema(db, "", ()))
                _table_options(p, tb)
                if tb.collation:
                    cat.db_collation[db.lower()] = tb.collation
            return []
        if p.kw("DROP", "INDEX") or p.kw("DROP", "KEY"):
            return _drop_index(cat, p, default_db, source)
        if p.kw("DROP"):
            p.kw("TEMPORARY")
            if p.kw("TABLE") or p.kw("TABLES"):
                p.kw("IF", "EXISTS")
                for item in _split_top(p.t[p.i:]):
                    q = _P(item)
                    db, name = q.qualified(default_db)
                    cat.drop(db, name)
                return []
            if p.kw("DATABASE") or p.kw("SCHEMA"):
                p.kw("IF", "EXISTS")
                cat.drop_database(p.ident() or "")
            return []
        if p.kw("RENAME", "TABLE"):
            for item in _split_top(p.t[p.i:]):
                q = _P(item)
                db, name = q.qualified(default_db)
                if q.kw("TO"):
                    ndb, nname = q.qualified(default_db)
                    _rename(cat, db, name, ndb, nname)
            return []
    except (IndexError, ValueError, AssertionError) as err:
        raise UnsupportedDDL(str(err)) from err
    return []


def _create_unique_index(cat: Catalog, p: _P, default_db: str, source: str) -> list[str]:
    """``CREATE UNIQUE INDEX name [USING ...] ON tbl (parts)``: the server's ``ALTER TABLE tbl
    ADD UNIQUE name (parts)`` (sql/sql_yacc.yy create_index_stmt maps to the same Alter_info).
    A non-unique index changes no writeset and is not followed."""
    iname = p.ident()
    while p.peek() is not None and not (not p.peek().quoted and p.peek().upper() == "ON"):
        p.next()  # USING BTREE
    if not p.kw("ON"):
        return []
    db, name = p.qualified(default_db)
    t = cat.get(db, name)
    if t is None or p.peek() != "(":
        return []
    tb = _TableBuilder(t)
    parts, fn = _key_parts(p.skip_group())
    tb.add_key("UNIQUE", iname, parts, fn)
    cat.put(tb.build(source if t.source != "schema-file" or source == "schema-file" else t.source))
    return []


def _create_index(cat: Catalog, p: _P, default_db: str, source: str) -> list[str]:
    """``CREATE INDEX name ON tbl (...)``: no writeset key, but the replica can seek through it
    and writes its entries."""
    iname = p.ident()
    while p.peek() is not None and not (not p.peek().quoted and p.peek().upper() == "ON"):
        p.next()
    if not p.kw("ON"):
        return []
    db, name = p.qualified(default_db)
    t = cat.get(db, name)
    if t is None:
        return []
    tb = _TableBuilder(t)
    tb.indexed = True
    if p.peek() == "(":
        parts, fn = _key_parts(p.skip_group())
        tb.add_index(iname, parts, fn)
    cat.put(tb.build(source if t.source != "schema-file" or source == "schema-file" else t.source))
    return []


def _drop_index(cat: Catalog, p: _P, default_db: str, source: str) -> list[str]:
    """``DROP INDEX name ON tbl``: ``ALTER TABLE tbl DROP INDEX name``."""
    iname = (p.ident() or "").lower()
    if not p.kw("ON"):
        return []
    db, name = p.qualified(default_db)
    t = cat.get(db, name)
    if t is None:
        return []
    tb = _TableBuilder(t)
    tb.drop_index(iname)
    cat.put(tb.build(source if t.source != "schema-file" or source == "schema-file" else t.source))
    return []


def _rename(cat: Catalog, db: str, name: str, ndb: str, nname: str) -> None:
    t = cat.get(db, name)
    old = cat.key_of(db, name)
    # Foreign keys of other tables follow the rename (the server updates them), the table's own
    # too (a self-referencing one): which point at it is decided before the old name is gone.
    hits = {k: [cat.key_of(fk.ref_db, fk.ref_table) == old for fk in other.foreign_keys]
            for k, other in cat.tables.items()}
    cat.drop(db, name)
    if t is not None:
        cat.put(replace(t, db=ndb, name=nname))
        for k, other in list(cat.tables.items()):
            refers = hits.get(old if k == (ndb, nname) else k, ())
            if any(refers):
                fks = tuple(replace(fk, ref_db=ndb, ref_table=nname) if hit else fk
                            for fk, hit in zip(other.foreign_keys, refers))
                cat.put(replace(other, foreign_keys=fks))


def _create_table(cat: Catalog, p: _P, default_db: str, source: str) -> list[str]:
    p.kw("IF", "NOT", "EXISTS")
    db, name = p.qualified(default_db)
    if p.kw("LIKE") or (p.peek() == "(" and p.peek(1) is not None and p.peek(1).upper() == "LIKE"):
        if p.peek() == "(":
            p.next()
            p.kw("LIKE")
        sdb, sname = p.qualified(default_db)
        src = cat.get(sdb, sname)
        if src is None:
            return [f"{db}.{name}"]
        # LIKE copies columns and indexes but not foreign keys.
        cat.put(replace(src, db=db, name=name, foreign_keys=(), source=source))
        return []
    coll = cat.db_collation.get(db.lower(), cat.server_collation)
    tb = _TableBuilder(TableSchema(db, name, (), default_collation=None))
    body = p.skip_group() if p.peek() == "(" else []
    # Table options come after the body but set the default collation the columns inherit.
    _table_options(_P(p.t[p.i:]), tb)
    if tb.collation is None:
        tb.collation = coll
    _parse_create_body(body, tb, db)
    cat.put(tb.build(source))
    return []


def _split_position(coltoks: list[Tok], tb: _TableBuilder) -> tuple[list[Tok], int | None]:
    """Cut a trailing ``FIRST`` / ``AFTER col`` off a column definition; returns the
    definition and the index the column goes to (None: where it is, or at the end)."""
    for k, tok in enumerate(coltoks):
        if tok.quoted:
            continue
        if tok.upper() == "FIRST":
            return coltoks[:k], 0
        if tok.upper() == "AFTER" and k + 1 < len(coltoks):
            after = tb.column_pos(str(coltoks[k + 1]))
            return coltoks[:k], None if after is None else after + 1
    return coltoks, None


def _alter_table(cat: Catalog, p: _P, default_db: str, source: str) -> list[str]:
    db, name = p.qualified(default_db)
    t = cat.get(db, name)
    if t is None:
        return []  # nothing known to update; the table stays unknown
    tb = _TableBuilder(t)
    rename_to = None
    rest = p.t[p.i:]
    for spec in _split_top(rest):
        q = _P(spec)
        if q.kw("ADD"):
            _alter_add(q, spec, tb, db)
        elif q.kw("DROP"):
            _alter_drop(q, tb)
        elif q.kw("MODIFY") or q.at("CHANGE"):
            _alter_modify(q, spec, tb)
        elif q.kw("RENAME", "COLUMN"):
            old = q.ident() or ""
            q.kw("TO")
            new = q.ident() or ""
            i = tb.column_pos(old)
            if i is not None:
                tb.columns[i] = replace(tb.columns[i], name=new)
            tb.rename_in_keys(old, new)
        elif q.kw("RENAME", "INDEX") or q.kw("RENAME", "KEY"):
            old = (q.ident() or "").lower()
            q.kw("TO")
            new = q.ident() or ""
            tb.keys = [replace(k, name=new) if k.name.lower() == old else k for k in tb.keys]
            tb.indexes = [replace(k, name=new) if k.name.lower() == old else k for k in tb.indexes]
        elif q.kw("RENAME"):
            q.kw("TO") or q.kw("AS")
            rename_to = q.qualified(db)
        elif q.kw("CONVERT", "TO"):
            q.kw("CHARACTER", "SET") or q.kw("CHARSET")
            cs = (q.ident() or "").lower()
            coll = default_collation(cs)
            if q.kw("COLLATE"):
                coll = (q.ident() or "").lower()
            tb.collation = coll
            tb.columns = [replace(c, collation=coll, charset=charset_of(coll)) if c.collation else c
                          for c in tb.columns]
        else:
            _table_options(q, tb)
    cat.put(tb.build(source if t.source != "schema-file" or source == "schema-file" else t.source))
    if rename_to is not None:
        _rename(cat, db, name, rename_to[0], rename_to[1])
    return []


def _alter_add(q: _P, spec: list[Tok], tb: "_TableBuilder", db: str) -> None:
    """``ADD`` a constraint, one column (where FIRST / AFTER says) or a parenthesised list."""
    if _parse_constraint(q, tb, db):
        return
    q.kw("COLUMN")
    if q.peek() == "(":
        for item in _split_top(q.skip_group()):
            iq = _P(item)
            if not _parse_constraint(iq, tb, db):
                col, inline = _parse_column(str(item[0]), item[1:], tb.collation)
                tb.columns.append(col)
                for kind in inline:
                    tb.add_key(kind, None, (KeyPart(col.name),), False)
        return
    cname = q.ident()
    if cname is None:
        return
    coltoks, pos = _split_position(spec[q.i:], tb)
    col, inline = _parse_column(cname, coltoks, tb.collation)
    if pos is None:
        tb.columns.append(col)
    else:
        tb.columns.insert(pos, col)
    for kind in inline:
        tb.add_key(kind, None, (KeyPart(cname),), False)


def _alter_drop(q: _P, tb: "_TableBuilder") -> None:
    """``DROP`` the primary key, a foreign key, an index, a constraint or a column."""
    if q.kw("PRIMARY", "KEY"):
        tb.keys = [k for k in tb.keys if not k.primary]
    elif q.kw("FOREIGN", "KEY"):
        fname = (q.ident() or "").lower()
        tb.fks = [fk for fk in tb.fks if fk.name.lower() != fname]
    elif q.kw("INDEX") or q.kw("KEY"):
        tb.drop_index(q.ident() or "")
    elif q.kw("CONSTRAINT") or q.kw("CHECK"):
        cname = (q.ident() or "").lower()
        tb.fks = [fk for fk in tb.fks if fk.name.lower() != cname]
        tb.keys = [k for k in tb.keys if k.name.lower() != cname or k.primary]
    else:
        q.kw("COLUMN")
        cname = (q.ident() or "").lower()
        tb.columns = [c for c in tb.columns if c.name.lower() != cname]
        # Dropping a column drops it from every index; an index left empty disappears.
        def without(keys):
            out = []
            for k in keys:
                parts = tuple(pt for pt in k.parts if pt.column.lower() != cname)
                if parts:
                    out.append(replace(k, parts=parts))
            return out

        tb.keys, tb.indexes = without(tb.keys), without(tb.indexes)


def _alter_modify(q: _P, spec: list[Tok], tb: "_TableBuilder") -> None:
    """``MODIFY`` or ``CHANGE`` a column (``q`` is at MODIFY's end or at CHANGE)."""
    changing = q.kw("CHANGE")
    q.kw("COLUMN")
    old = q.ident() or ""
    new = q.ident() if changing else old
    if new is None:
        return
    i = tb.column_pos(old)
    coltoks, _ = _split_position(spec[q.i:], tb)
    col, inline = _parse_column(new, coltoks, tb.collation)
    if i is None:
        tb.columns.append(col)
    elif len(coltoks) < len(spec) - q.i:
        # MODIFY/CHANGE ... FIRST | AFTER x moves the column (the row images follow the
        # new order); the target is found once the column is out of the list.
        del tb.columns[i]
        _, pos = _split_position(spec[q.i:], tb)
        tb.columns.insert(len(tb.columns) if pos is None else pos, col)
    else:
        tb.columns[i] = col
    if changing and old.lower() != new.lower():
        tb.rename_in_keys(old, new)
    for kind in inline:
        tb.add_key(kind, None, (KeyPart(new),), False)


@dataclass
class SchemaLoad:
    """What reading a schema file gave: the catalog and an account of its statements."""

    catalog: Catalog
    statements: int = 0          # statements in the file (after DELIMITER handling)
    followed: int = 0            # DDL statements applied (CREATE/ALTER/DROP/RENAME TABLE, USE, ...)
    ignored: int = 0             # statements a dump holds that change no key (INSERT, SET, LOCK, ...)
    not_understood: int = 0      # anything else: not SQL a dump holds, or DDL that could not be parsed
    first_not_understood: tuple[int, str] | None = None   # (line, the statement's first characters)

    def warnings(self, name: str) -> list[str]:
        out = []
        if self.not_understood:
            line, snip = self.first_not_understood or (0, "")
            out.append(f"{name}: {self.not_understood:,} of {self.statements:,} statements not understood "
                       f"and ignored (the first at line {line:,}: {snip!r})")
        if not self.catalog.tables:
            out.append(f"{name}: no CREATE TABLE statement among {self.statements:,} statements: table "
                       "definitions come from the binlog alone")
        return out


#: First words of statements a dump (mysqldump, mydumper, mysqlpump, SHOW CREATE output) holds that
#: change no key: skipped without being parsed (a data dump's INSERTs are most of its bytes).
_IGNORED_STATEMENTS = frozenset("""
    INSERT REPLACE UPDATE DELETE SELECT SET LOCK UNLOCK START BEGIN COMMIT ROLLBACK SAVEPOINT RELEASE
    GRANT REVOKE FLUSH TRUNCATE CALL DO ANALYZE OPTIMIZE CHECK CHECKSUM REPAIR SHOW PREPARE EXECUTE
    DEALLOCATE CHANGE RESET PURGE INSTALL UNINSTALL XA HANDLER LOAD KILL EXPLAIN DESCRIBE DESC WITH
    VALUES TABLE HELP IMPORT CLONE STOP SOURCE WARNINGS NOWARNINGS TEE NOTEE CONNECT USE_SECONDARY
    """.split())
_DDL_STATEMENTS = frozenset(("CREATE", "ALTER", "DROP", "RENAME", "USE"))
_FIRST_WORD = re.compile(r"(?:\s+|/\*(?!!).*?\*/|--[^\n]*|\#[^\n]*|/\*!\d*)*([A-Za-z_]+)?", re.S)


def load_schema_file(text: str, cat: Catalog | None = None, default_db: str = "") -> Catalog:
    """Read ``mysqldump --no-data`` output (or any file of DDL statements) into a catalog.
    ``USE db`` switches the default database, as in the dump."""
    return read_schema_file(text, cat, default_db).catalog


def read_schema_file(text: str, cat: Catalog | None = None, default_db: str = "") -> SchemaLoad:
    """:func:`load_schema_file` with the account of what was followed, ignored and not understood.
    Linear in the file: statements are split by a scanner that matches whole runs, and only DDL
    is tokenized (a full dump's data statements are classified by their first word)."""
    enabled = gc.isenabled()
    gc.disable()  # the catalog only grows and holds no cycles: collections would rescan it (~20%)
    try:
        return _read_schema_file(text, cat, default_db)
    finally:
        if enabled:
            gc.enable()


def _read_schema_file(text: str, cat: Catalog | None, default_db: str) -> SchemaLoad:
    out = SchemaLoad(cat if cat is not None else Catalog())
    db = default_db
    for offset, stmt in iter_statements(text):
        m = _FIRST_WORD.match(stmt)
        word = (m.group(1) or "").upper()
        if not word:
            if stmt[m.end():].strip():
                out.statements += 1   # counted, so that "N of M not understood" never has N > M
                _not_understood(out, text, offset, stmt)
            continue  # only comments (a dump's /*!40101 ... */ settings are SET statements)
        out.statements += 1
        if word in _IGNORED_STATEMENTS:
            out.ignored += 1
            continue
        if word not in _DDL_STATEMENTS:
            _not_understood(out, text, offset, stmt)
            continue
        if word == "USE":
            toks = tokenize(stmt)
            if len(toks) > 1:
                db = str(toks[1])
            out.followed += 1
            continue
        try:
            apply_statement(out.catalog, stmt, db, source="schema-file")
            out.followed += 1
        except UnsupportedDDL:
            _not_understood(out, text, offset, stmt)
    return out


def _not_understood(out: SchemaLoad, text: str, offset: int, stmt: str) -> None:
    out.not_understood += 1
    if out.first_not_understood is None:
        lead = len(stmt) - len(stmt.lstrip())
        snip = " ".join(stmt[lead:lead + 60].split())
        out.first_not_understood = (text.count("\n", 0, offset + lead) + 1, snip)


def _split_pattern(delimiter: str) -> re.Pattern:
    """Whole runs of plain text, strings, quoted identifiers and comments as single matches, so
    a statement costs a few matches rather than one per character (no nested quantifiers: no
    backtracking blow-up on an unterminated string)."""
    first = re.escape(delimiter[0])
    return re.compile(
        rf"""[^'"`/\#\-{first}]+
          | '[^'\\]*(?:\\.[^'\\]*)*'
          | "[^"\\]*(?:\\.[^"\\]*)*"
          | `[^`]*`
          | /\*.*?\*/
          | --[^\n]*
          | \#[^\n]*
          | (?P<delim>{re.escape(delimiter)})
          | .""", re.X | re.S)


_DELIMITER_CMD = re.compile(r"\s*DELIMITER[ \t]+(\S+)[^\n]*", re.I)


def iter_statements(text: str):
    """``(offset, statement)`` for each statement, split on the current delimiter outside strings
    and comments; the mysql client's ``DELIMITER x`` lines (mysqldump's triggers and routines)
    switch it, as ``mysql < dump.sql`` would."""
    pos, start, delimiter = 0, 0, ";"
    patterns: dict[str, re.Pattern] = {}
    n = len(text)
    while pos < n:
        cmd = _DELIMITER_CMD.match(text, start)
        if cmd:
            delimiter = cmd.group(1)
            pos = start = cmd.end()
            continue
        pat = patterns.get(delimiter) or patterns.setdefault(delimiter, _split_pattern(delimiter))
        for m in pat.finditer(text, pos):
            if m.lastgroup == "delim":
                yield start, text[start:m.start()]
                pos = start = m.end()
                break
        else:
            pos = n
    if text[start:].strip():
        yield start, text[start:]


def split_statements(text: str) -> list[str]:
    """The statements of ``text`` (see :func:`iter_statements`)."""
    return [stmt for _, stmt in iter_statements(text)]


def read_schema_path(path: str, limit: int = 4 << 30) -> SchemaLoad:
    """Read a ``--schema`` file: only a regular file (a FIFO would block, a directory is refused in
    one line), decoded as UTF-8 with undecodable bytes kept (names compare as the server's bytes)."""
    import os
    import stat

    from ..errors import SchemaError

    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"
            raise SchemaError(f"{path}: cannot read the schema file: {kind}")
        if st.st_size > limit:
            raise SchemaError(f"{path}: schema file of {st.st_size:,} bytes: larger than {limit:,}")
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
    except OSError as err:
        raise SchemaError(f"{path}: cannot read the schema file: {err.strerror or err}") from None
    what = _not_sql(text)
    if what:
        raise SchemaError(f"{path}: not a schema file: {what} (--schema takes `mysqldump --no-data` output, UTF-8)")
    return read_schema_file(text)


def _not_sql(text: str) -> str:
    """What a ``--schema`` file is instead of SQL text, from its first bytes ('' when it may be SQL)."""
    head = text[:4].encode("utf-8", "surrogateescape")
    if head == b"\xfebin":
        return "a binlog (it starts with the binlog magic): give it as a file to read, not as --schema"
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "UTF-16 text (save it as UTF-8)"
    if head[:2] == b"\x1f\x8b":
        return "gzip-compressed (uncompress it first)"
    if "\x00" in text[:4096]:
        return "binary data (NUL bytes)"
    return ""
