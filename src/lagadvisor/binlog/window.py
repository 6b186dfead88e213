"""mysqlbinlog's windows: ``--start-position``/``--stop-position`` (bytes of the first/last file)
and ``--start-datetime``/``--stop-datetime`` (event header times, local time zone), applied the
way the real ``mysqlbinlog`` applies them (client/mysqlbinlog.cc), at transaction granularity:

- the window starts at the first event at or after the start position and time; the first
  transaction read is the first one that begins there or later (a transaction whose GTID event
  came earlier is not one ``mysqlbinlog`` prints a GTID for, so it is left out);
- the window stops at the first event at or after the stop position, or stamped at or after the
  stop time; a transaction that began before it is read to its end (``mysqlbinlog`` prints its
  GTID, then cuts it), and nothing after it.

A transaction's ``last_committed`` that names one before the window is an already-applied
dependency: the simulation starts the window as a new segment (a barrier), as after a rotation.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ..errors import ConfigError

#: Events that open a transaction: GTID, anonymous GTID, tagged GTID, MariaDB GTID.
OPENERS = frozenset((33, 34, 42, 162))
FORMAT_DESCRIPTION = 15


#: The largest byte offset a window option takes (the native core's i64; a binlog's offsets are
#: far below it).
MAX_POSITION = (1 << 63) - 1


@dataclass(frozen=True, slots=True)
class Window:
    start_position: int | None = None
    stop_position: int | None = None
    start_time: int | None = None     # seconds since the epoch
    stop_time: int | None = None

    def native_args(self) -> tuple[int, int, int, int]:
        """For ``Analyzer.set_window`` (-1 = unset)."""
        return tuple(-1 if v is None else v for v in (self.start_position, self.stop_position,  # type: ignore
                                                      self.start_time, self.stop_time))


def parse_datetime(text: str, what: str) -> int:
    """A ``--start-datetime``/``--stop-datetime`` value, in the local time zone as mysqlbinlog
    reads it: ``YYYY-MM-DD HH:MM:SS`` (also ``T`` between, seconds or time left out)."""
    t = text.strip().replace("T", " ")
    for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d"):
        try:
            return int(time.mktime(time.strptime(t, fmt)))
        except (ValueError, OverflowError):
            continue
    raise ConfigError(f"{what} {text!r}: expected a date and time such as '2026-11-22 02:00:00' (local time)")


def windows_for(paths: list, start_position: int | None, stop_position: int | None,
                start_datetime: str | None, stop_datetime: str | None) -> dict | None:
    """Per input file, its :class:`Window` (positions: the first and the last file), or None
    when no window option was given."""
    if start_position is None and stop_position is None and start_datetime is None and stop_datetime is None:
        return None
    for v, name in ((start_position, "--start-position"), (stop_position, "--stop-position")):
        if v is not None and not 0 <= v <= MAX_POSITION:
            raise ConfigError(f"{name} {v}: expected a byte offset from 0 to {MAX_POSITION}")
    t0 = parse_datetime(start_datetime, "--start-datetime") if start_datetime is not None else None
    t1 = parse_datetime(stop_datetime, "--stop-datetime") if stop_datetime is not None else None
    if t0 is not None and t1 is not None and t1 <= t0:
        raise ConfigError(f"--stop-datetime {stop_datetime!r} is not after --start-datetime {start_datetime!r}")
    # an event's time is an unsigned count of seconds since 1970: a time before it is 1970 itself
    # (the native core reads -1 as unset: a stop before 1970 was ignored there, and stopped the reference)
    t0, t1 = (None if t is None else max(0, t) for t in (t0, t1))
    if len(paths) == 1 and start_position is not None and stop_position is not None and stop_position <= start_position:
        raise ConfigError(f"--stop-position {stop_position} is not after --start-position {start_position}")
    out = {}
    for i, p in enumerate(paths):
        out[str(p)] = Window(start_position if i == 0 else None, stop_position if i == len(paths) - 1 else None,
                             t0, t1)
    return out


def gate(events, window: Window | None):
    """The events of one file inside ``window`` (format descriptions always pass)."""
    if window is None:
        yield from events
        return
    start_pos = window.start_position or 0
    start_ts = window.start_time or 0
    stop_pos, stop_ts = window.stop_position, window.stop_time
    triggered = started = stopping = False
    for e in events:
        code = e.type_code
        if code == FORMAT_DESCRIPTION:
            yield e
            continue
        if not stopping and ((stop_pos is not None and e.offset >= stop_pos)
                             or (stop_ts is not None and e.timestamp >= stop_ts)):
            stopping = True
        if stopping and (code in OPENERS or not started):
            return  # the transaction under way (if any) has ended: nothing after the stop
        if not started:
            triggered = triggered or (e.offset >= start_pos and e.timestamp >= start_ts)
            if not (triggered and code in OPENERS):
                continue
            started = True
        yield e


__all__ = ["OPENERS", "Window", "gate", "parse_datetime", "windows_for"]
