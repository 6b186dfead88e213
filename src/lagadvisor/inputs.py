"""Input resolution for every command that reads binlogs: each argument is a binlog or relay-log
file (plain, ``.gz`` or ``.zst``), a directory, a ``binlog.index`` / relay-log ``.index`` file
or a glob, expanded in that order into one ordered list of files, each named once.

The rules follow the server's own listing: an index file names the files in order, relative to
its folder (``MYSQL_BIN_LOG::find_log_pos`` reads it line by line); a directory holding exactly
one ``.index`` file is read through it, else its ``<base>.<digits>`` files sorted (one base only:
a directory mixing ``binlog.*`` and ``relay-bin.*`` is refused, it is ambiguous, and so is one
holding a log both plain and compressed); a glob's matches are sorted, numbers as numbers
(``binlog.999999`` before ``binlog.1000000``). A file reached twice (named twice, through a
link or another path) is refused; a byte-identical copy under another name is read once, with
a warning (:func:`distinct_files`).
"""

from __future__ import annotations

import glob
import hashlib
import os
import re
import stat

from .errors import ConfigError

#: A binlog or relay log file name: ``<base>.<digits>``, optionally ``.gz`` or ``.zst`` compressed.
BINLOG_NAME = re.compile(r"(?P<base>.+)\.\d+(\.gz|\.zst)?$")


def read_index(path: str) -> list[str]:
    """The files an ``.index`` file names, in order, relative to its folder; one that names none
    is refused (the server writes at least its current file)."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
    except (OSError, UnicodeDecodeError) as err:
        why = getattr(err, "strerror", None) or "not a text file"
        raise ConfigError(f"{path}: cannot read the index file: {why}") from None
    if not lines:
        raise ConfigError(f"{path}: the index file names no binlog files")
    folder = os.path.dirname(path)
    return [ln if os.path.isabs(ln) else os.path.normpath(os.path.join(folder, ln)) for ln in lines]


def log_number(path: str) -> int | None:
    """The number of a log file's name (``binlog.000042``, ``x/binlog.000042.gz``: 42), None
    for a name that is not ``<base>.<digits>``."""
    name = os.path.basename(path)
    m = BINLOG_NAME.match(name)
    return None if m is None else int(name[len(m.group("base")) + 1:].split(".")[0])


def log_order(path: str):
    """Sort key of a log file: its folder, its base name, then its number as a number
    (``binlog.999999`` before ``binlog.1000000``: the server numbers past six digits), then the
    name; names that are not ``<base>.<digits>`` after those of their folder, by name."""
    folder, name = os.path.split(path)
    n = log_number(name)
    if n is None:
        return (folder, 1, name, 0, name)
    return (folder, 0, BINLOG_NAME.match(name).group("base"), n, name)


def _one_copy(folder: str, names: list[str]) -> None:
    """A log kept both plain and compressed (``binlog.000001`` and ``binlog.000001.gz``) would be
    read twice: refused, naming both."""
    seen: dict[str, str] = {}
    for n in names:
        plain = re.sub(r"\.(gz|zst)$", "", n)
        if plain in seen:
            raise ConfigError(f"{folder}: holds {seen[plain]} and {n}, the same log twice; give the files "
                              f"to read by name or a glob")
        seen[plain] = n


def _directory(path: str) -> list[str]:
    try:
        names = os.listdir(path)
    except OSError as err:  # a directory this user may not list
        raise ConfigError(f"{path}: cannot list the directory: {err.strerror or err}") from None
    indexes = sorted(n for n in names if n.endswith(".index") and os.path.isfile(os.path.join(path, n)))
    if len(indexes) == 1:
        return read_index(os.path.join(path, indexes[0]))
    found = sorted((n for n in names if BINLOG_NAME.match(n) and os.path.isfile(os.path.join(path, n))),
                   key=log_order)
    if not found:
        raise ConfigError(f"{path}: no binlog files (name.NNNNNN) in this directory")
    bases = sorted({BINLOG_NAME.match(n).group("base") for n in found})
    if len(bases) > 1:
        raise ConfigError(f"{path}: holds several logs ({', '.join(bases)}); give one index file or a glob "
                          f"such as {os.path.join(path, bases[0] + '.*')}")
    _one_copy(path, found)
    return [os.path.join(path, n) for n in found]


def expand(arg: str) -> list[str]:
    """The files one argument names, in order (see the module's rules). A plain path is returned
    as given, also when missing (the reader names it)."""
    if os.path.isdir(arg):
        return _directory(arg)
    if arg.endswith(".index") and os.path.isfile(arg):
        return read_index(arg)
    if glob.has_magic(arg) and not os.path.exists(arg):
        found = sorted((p for p in glob.glob(arg) if os.path.isfile(p) and not p.endswith(".index")), key=log_order)
        if not found:
            raise ConfigError(f"{arg}: no file matches")
        return found
    return [arg]


#: Set to 1 to read every file given, a file named twice or a copy of one too: for benchmarks that
#: feed one binlog many times (bench/throughput.py --jobs, bench/scale.py); a user's numbers would
#: count it twice.
REPEAT_FILES_ENV = "LAGADVISOR_REPEAT_FILES"


def repeat_files() -> bool:
    """Whether :data:`REPEAT_FILES_ENV` asks for every file given to be read, repeats included."""
    return os.environ.get(REPEAT_FILES_ENV) == "1"


def resolve(args) -> list[str]:
    """All arguments expanded in order, each resulting file once: a file named twice (also
    through a link, another path, or an index and a glob) is refused in one line naming both
    (unless :func:`repeat_files`)."""
    if repeat_files():
        return [f for arg in args for f in expand(arg)]
    seen: dict[object, str] = {}
    out: list[str] = []
    for arg in args:
        for f in expand(arg):
            try:
                st = os.stat(f)
                key: object = (st.st_dev, st.st_ino)
            except OSError:
                key = os.path.abspath(f)  # missing: the reader names it
            if key in seen:
                same = "" if seen[key] == f else f" (as {seen[key]} and {f})"
                raise ConfigError(f"{f}: the same file is given twice{same}; give each file once")
            seen[key] = f
            out.append(f)
    return out


#: Bytes hashed at each end of two files of one size to tell whether they are one binlog
#: (:func:`distinct_files`): each binlog starts with its own FORMAT_DESCRIPTION and GTID set and
#: ends with its own last transactions and ROTATE; a multi-GB file is not read whole for it.
SAMPLE_BYTES = 64 * 1024
#: The magic and one event header: a shorter file holds no event to tell it apart by.
_SMALLEST = 4 + 19


def _ends_hash(path: str, size: int) -> bytes | None:
    """A hash of the first and last :data:`SAMPLE_BYTES` of a file (None: it cannot be read;
    the reader names it)."""
    try:
        with open(path, "rb") as f:
            h = hashlib.blake2b(f.read(SAMPLE_BYTES))
            if size > SAMPLE_BYTES:
                f.seek(max(SAMPLE_BYTES, size - SAMPLE_BYTES))
                h.update(f.read(SAMPLE_BYTES))
    except OSError:
        return None
    return h.digest()


def distinct_files(files: list[str]) -> tuple[list[str], list[str]]:
    """``files`` (resolved: none named twice) without the byte-identical copies of a file before
    them, and a line for each copy left out, naming both: a binlog and its backup copy under
    another name (``dir/binlog.000005 backup/binlog.000005``, a glob matching
    ``binlog.000005.bak``) were both read, every figure doubled. Identical: the same size, then
    the same first and last :data:`SAMPLE_BYTES`; only regular files are compared (a FIFO is
    never opened here), and only files of one size are read at all. With :func:`repeat_files`,
    every file is kept."""
    if repeat_files():
        return list(files), []
    by_size: dict[int, list[str]] = {}
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            continue  # missing: the reader names it
        if stat.S_ISREG(st.st_mode) and st.st_size >= _SMALLEST:
            by_size.setdefault(st.st_size, []).append(f)
    first: dict[tuple[int, bytes], str] = {}
    copy_of: dict[str, str] = {}
    for size, same_size in by_size.items():
        for f in same_size if len(same_size) > 1 else ():
            key = (size, _ends_hash(f, size))
            if key[1] is not None:
                copy_of[f] = first.setdefault(key, f)
    kept = [f for f in files if copy_of.get(f, f) == f]
    return kept, [f"{f} is the same binlog as {copy_of[f]}: read once" for f in files if copy_of.get(f, f) != f]


__all__ = ["BINLOG_NAME", "REPEAT_FILES_ENV", "distinct_files", "expand", "read_index", "repeat_files", "resolve"]
