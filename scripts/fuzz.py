#!/usr/bin/env python3
"""A seeded mutation fuzzer over the fixtures (damaged ones included) and, where
``LAGADVISOR_FUZZ_CORPUS`` names it, the optional public corpus, through every command.

Each execution ``i`` of a run with seed ``S`` is fully determined by ``(S, i)``: which seed file,
which mutations (bit flips, overwritten runs, truncation, spliced regions, overwritten event
lengths, zeroed tails, changed event types, dropped/duplicated/swapped events, interesting
integers, inserted bytes, gzip and damaged gzip, with or without the CRC32 footers recomputed so
the damage reaches the decoders), which command (analyze, export, graph, simulate, advise,
calibrate) and native core or pure-Python reference. ``--replay I`` rebuilds one execution.

The commands run in-process in worker subprocesses (many executions per process, the CLI's own
entry point with stdout/stderr captured). A parent watchdog restarts a worker that reports no
result for ``--hang-seconds`` (a Rust loop holding the GIL cannot be interrupted from inside)
and records that input as a hang; a worker that dies is a crash. The contract checked per
execution is the CLI's: exit 0 (warnings allowed), or exit 2 with exactly one line on stderr;
anything else (a traceback, exit 2 with several lines, another exit code) is a failure. Peak
RSS is the workers' ``ru_maxrss``; an execution that lifts it past ``--rss-limit-mb`` is a
failure too. Failing inputs are saved under ``--save-dir`` (by default
``tests/fuzz_regressions/``), where ``tests/binlog/test_damaged_every_command.py`` replays them.

  python scripts/fuzz.py --seconds 60                 # what the test suite runs (bounded)
  python scripts/fuzz.py --executions 100000 --seed 17 --log build/fuzz.jsonl
  python scripts/fuzz.py --seed 17 --replay 4242      # one execution again, verbosely
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import io
import json
import os
import random
import re
import resource
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
#: The optional public corpus (tests/test_fuzz.py passes the suite's, where it is here).
CORPUS = Path(os.environ["LAGADVISOR_FUZZ_CORPUS"]) if os.environ.get("LAGADVISOR_FUZZ_CORPUS") else None
REGRESSIONS = Path(os.environ.get("LAGADVISOR_FUZZ_REGRESSIONS", ROOT / "tests" / "fuzz_regressions"))

#: A seed larger than this is cut at the last event boundary before it: small inputs keep
#: executions fast, and the damage lands in every part of a file rather than its first 1%.
MAX_SEED_BYTES = 48 * 1024
HEADER = 19

#: Command lines; ``{f}`` is the mutated file, ``{g}`` an undamaged second file.
COMMANDS: list[list[str]] = [
    ["analyze", "--no-progress", "{f}"],
    ["analyze", "--no-progress", "--format", "json", "{f}"],
    ["analyze", "--no-progress", "{g}", "{f}"],
    ["export", "--format", "jsonl", "{f}"],
    ["export", "--format", "csv", "--keys", "{f}"],
    ["graph", "{f}"],
    ["simulate", "--workers", "1,4", "{f}"],
    ["simulate", "--workers", "2", "--mode", "database", "{f}"],
    ["advise", "--no-progress", "{f}"],
    ["calibrate", "{f}"],
]


# --------------------------------------------------------------------------- seeds

def _events(data: bytes) -> list[tuple[int, int]]:
    """(offset, size) of the events framed from offset 4 while the sizes stay plausible."""
    out = []
    pos = 4
    while pos + HEADER <= len(data):
        size = struct.unpack_from("<I", data, pos + 9)[0]
        if size < HEADER or pos + size > len(data):
            break
        out.append((pos, size))
        pos += size
    return out


def _cut(data: bytes) -> bytes:
    if len(data) <= MAX_SEED_BYTES:
        return data
    end = 4
    for off, size in _events(data):
        if off + size > MAX_SEED_BYTES:
            break
        end = off + size
    return data[:max(end, 4)]


def seed_files() -> list[tuple[str, Path]]:
    """``(name, path)`` of the corpus's binlogs (damaged ones too), the fixtures and the saved
    regressions, ordered by name (which does not depend on where the checkout is)."""
    files: list[tuple[str, Path]] = []
    if CORPUS is not None and CORPUS.is_dir():
        files += [(f"corpus/{p.relative_to(CORPUS)}", p) for p in CORPUS.rglob("*")
                  if p.is_file() and p.suffix not in (".md", ".json")]
    if FIXTURES.is_dir():
        files += [(f"fixtures/{p.relative_to(FIXTURES)}", p) for p in FIXTURES.rglob("*")
                  if p.is_file() and ("binlog" in p.name or "-bin." in p.name)]
    if REGRESSIONS.is_dir():
        files += [(f"regressions/{p.name}", p) for p in REGRESSIONS.iterdir()
                  if p.is_file() and p.suffix not in (".md", ".json")]
    return sorted(files)


def load_seeds(files: list[tuple[str, Path]] | None = None) -> list[tuple[str, bytes, str]]:
    """``(name, data, form)``: form ``plain``, ``gz`` (data is the uncompressed binlog of a
    gzip seed) or ``rawgz`` (a gzip file that does not decompress: mutated as it is)."""
    seeds = []
    for name, p in (seed_files() if files is None else files):
        raw = p.read_bytes()
        if p.suffix == ".gz":
            try:
                seeds.append((name, _cut(gzip.decompress(raw)), "gz"))
            except (OSError, EOFError, zlib.error):
                seeds.append((name, raw[:MAX_SEED_BYTES], "rawgz"))
        else:
            seeds.append((name, _cut(raw), "plain"))
    return seeds


# --------------------------------------------------------------------------- mutations

_LENGTHS = (0, 1, 18, 19, 20, 22, 23, 24, 0x7F, 0xFF, 0x100, 0xFFFF, 0x10000, 0x3FFFFFFF, 0x40000000,
            0x40000417, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)
_INTERESTING = (b"\x00", b"\xff", b"\x7f", b"\x80", b"\xfb", b"\xfc", b"\xfd", b"\xfe", b"\x00\x00",
                b"\xff\xff", b"\x00\x80", b"\xff\x7f", b"\x00\x00\x00\x00", b"\xff\xff\xff\xff",
                b"\x00\x00\x00\x80", b"\xfe\xff\xff\xff\xff\xff\xff\xff\xff", b"\x01", b"\x10\x00")


def m_bitflip(rng, d, others):
    d = bytearray(d)
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(d))
        d[i] ^= 1 << rng.randrange(8)
    return bytes(d)


def m_overwrite_run(rng, d, others):
    i = rng.randrange(len(d))
    n = rng.randint(1, 64)
    fill = rng.choice((b"\0", b"\xff", None))
    run = fill * n if fill else rng.randbytes(n)
    return d[:i] + run + d[i + n:]


def m_truncate(rng, d, others):
    return d[:rng.randrange(len(d) + 1)]


def m_splice(rng, d, others):
    src = rng.choice(others) if others and rng.random() < 0.6 else d
    if not src:
        return d
    a = rng.randrange(len(src))
    b = min(len(src), a + rng.randint(1, 512))
    i = rng.randrange(len(d) + 1)
    if rng.random() < 0.5:
        return d[:i] + src[a:b] + d[i:]
    return d[:i] + src[a:b] + d[i + (b - a):]


def _pick_event(rng, d):
    evs = _events(d)
    return rng.choice(evs) if evs else None


def m_event_length(rng, d, others):
    ev = _pick_event(rng, d)
    if ev is None:
        return m_bitflip(rng, d, others)
    off, size = ev
    new = rng.choice(_LENGTHS + (size - 1, size + 1, size * 2, len(d) - off, rng.randrange(1 << 32)))
    return d[:off + 9] + struct.pack("<I", new & 0xFFFFFFFF) + d[off + 13:]


def m_zero_tail(rng, d, others):
    i = rng.randrange(len(d) + 1)
    return d[:i] + b"\0" * (len(d) - i)


def m_event_type(rng, d, others):
    ev = _pick_event(rng, d)
    if ev is None:
        return m_bitflip(rng, d, others)
    off, _ = ev
    t = rng.choice(list(range(0, 45)) + list(range(160, 167)) + [rng.randrange(256)])
    return d[:off + 4] + bytes([t]) + d[off + 5:]


def m_log_pos(rng, d, others):
    ev = _pick_event(rng, d)
    if ev is None:
        return m_bitflip(rng, d, others)
    off, size = ev
    new = rng.choice((0, off, off + size - 1, off + size + 1, 0xFFFFFFFF, rng.randrange(1 << 32)))
    return d[:off + 13] + struct.pack("<I", new) + d[off + 17:]


def m_events(rng, d, others):
    """Drop, duplicate or swap whole events."""
    evs = _events(d)
    if len(evs) < 2:
        return m_truncate(rng, d, others)
    i, j = sorted(rng.sample(range(len(evs)), 2))
    (a, sa), (b, sb) = evs[i], evs[j]
    op = rng.randrange(3)
    if op == 0:
        return d[:a] + d[a + sa:]
    if op == 1:
        return d[:b + sb] + d[a:a + sa] + d[b + sb:]
    return d[:a] + d[b:b + sb] + d[a + sa:b] + d[a:a + sa] + d[b + sb:]


def m_interesting(rng, d, others):
    v = rng.choice(_INTERESTING)
    i = rng.randrange(len(d))
    return d[:i] + v + d[i + len(v):]


def m_insert(rng, d, others):
    i = rng.randrange(len(d) + 1)
    return d[:i] + rng.randbytes(rng.randint(1, 32)) + d[i:]


def m_body_zero(rng, d, others):
    """Zero the body of one event past a random point (a row image or bitmap of nothing)."""
    ev = _pick_event(rng, d)
    if ev is None:
        return m_zero_tail(rng, d, others)
    off, size = ev
    if size <= HEADER:
        return d
    i = off + rng.randrange(HEADER, size)
    j = off + size - rng.choice((0, 4))
    return d[:i] + b"\0" * max(0, j - i) + d[max(i, j):]


MUTATIONS = {
    "bitflip": m_bitflip, "overwrite_run": m_overwrite_run, "truncate": m_truncate, "splice": m_splice,
    "event_length": m_event_length, "zero_tail": m_zero_tail, "event_type": m_event_type,
    "log_pos": m_log_pos, "events": m_events, "interesting": m_interesting, "insert": m_insert,
    "body_zero": m_body_zero,
}


def fix_crcs(d: bytes) -> bytes:
    """Recompute every framed event's CRC32 footer when the FDE says CRC32 is in use, so the
    damage reaches the event decoders instead of stopping at the checksum."""
    evs = _events(d)
    if not evs or d[evs[0][0] + 4] != 15:
        return d
    off, size = evs[0]
    if d[off + size - 5] != 1:
        return d
    out = bytearray(d)
    for off, size in evs:
        if size >= HEADER + 4:
            body = bytearray(out[off:off + size - 4])
            if body[4] == 15:
                body[17] &= ~1  # the FDE's CRC is computed with LOG_EVENT_BINLOG_IN_USE_F clear
            out[off + size - 4:off + size] = struct.pack("<I", zlib.crc32(bytes(body)))
    return bytes(out)


def make_case(seed: int, i: int, seeds, others) -> dict:
    """Execution ``i`` of seed ``seed``: input bytes, file suffix, argv template and mode."""
    rng = random.Random(f"{seed}:{i}")
    name, data, form = seeds[rng.randrange(len(seeds))]
    applied = []
    if data:
        for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
            kind = rng.choice(list(MUTATIONS))
            data = MUTATIONS[kind](rng, data, others) if data else data
            applied.append(kind)
    if form == "plain" and rng.random() < 0.5:
        data = fix_crcs(data)
        applied.append("fix_crcs")
    suffix = ".binlog"
    if form == "gz" or (form == "plain" and rng.random() < 0.05):
        data = gzip.compress(data, mtime=0)
        suffix = ".binlog.gz"
        if rng.random() < 0.5:
            kind = rng.choice(("bitflip", "overwrite_run", "truncate", "zero_tail", "interesting"))
            data = MUTATIONS[kind](rng, data, others) if data else data
            applied.append("gz_" + kind)
    elif form == "rawgz":
        suffix = ".binlog.gz"
    argv = rng.choice(COMMANDS)
    native = rng.random() < 0.5
    return {"i": i, "seed_file": name, "mutations": applied, "argv": argv, "native": native,
            "data": data, "suffix": suffix}


# --------------------------------------------------------------------------- one execution

def run_cli(argv: list[str], native: bool) -> tuple[object, str, str]:
    """The CLI in-process: (exit code or ('traceback', text), stdout, stderr)."""
    from lagadvisor.cli import app

    if native:
        os.environ.pop("LAGADVISOR_PUREPYTHON", None)
    else:
        os.environ["LAGADVISOR_PUREPYTHON"] = "1"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rv = app(args=argv, prog_name="lagadvisor", standalone_mode=False)
            code: object = rv if isinstance(rv, int) else 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        except BaseException:  # noqa: BLE001 - every escape is the finding
            code = ("traceback", traceback.format_exc())
    return code, out.getvalue(), err.getvalue()


_NUM = re.compile(r"\d+")
_HEX = re.compile(r"\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*[a-f])[0-9a-f]{8,}\b")


def error_kind(line: str) -> str:
    """An error line without its file, offsets and numbers: the kind of failure."""
    text = line.split("lagadvisor: error: ", 1)[-1]
    text = re.sub(r"^\S*case\S*( at offset \d+)?( \([A-Z_0-9]+\))?: ", "", text).strip()
    text = re.sub(r"\([^()]*\)", "", text)  # details in parentheses: sizes, offsets, zlib's words
    return re.sub(r"\s+", " ", _NUM.sub("N", _HEX.sub("X", text))).strip()[:120]


def judge(code, stderr: str) -> tuple[str, str]:
    """``(status, detail)``: ok, error (exit 2 and one line), or a failure status."""
    if isinstance(code, tuple):
        tb = code[1].strip().splitlines()
        return "traceback", tb[-1][:200] if tb else "?"
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    if code == 0:
        return "ok", ""
    if code == 2:
        if len(lines) == 1 and lines[0].startswith("lagadvisor: error: "):
            return "error", error_kind(lines[0])
        return "multiline", " | ".join(lines)[:300]
    return f"exit{code}", " | ".join(lines)[:300]


def execute(case: dict, workdir: Path, clean: Path) -> dict:
    f = workdir / f"case{case['suffix']}"
    f.write_bytes(case["data"])
    argv = [a.format(f=str(f), g=str(clean)) for a in case["argv"]]
    t0 = time.perf_counter()
    code, _out, err = run_cli(argv, case["native"])
    status, detail = judge(code, err)
    res = {"i": case["i"], "status": status, "detail": detail, "cmd": case["argv"][0],
           "native": case["native"], "ms": round((time.perf_counter() - t0) * 1000, 1),
           "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}
    if status == "traceback":
        res["traceback"] = code[1][-4000:]  # type: ignore[index]
    return res


# --------------------------------------------------------------------------- worker / parent

def worker(seed: int, start: int, stop: int, selftest: dict[int, str] | None = None,
           seed_list: str | None = None) -> None:
    """Executions ``start`` .. ``stop - 1``, one JSON line each on stdout. ``seed_list`` is the
    parent's list of seed files (inputs saved during the run do not change it); ``selftest``
    makes chosen executions hang, raise or kill the worker (the fuzzer's own test)."""
    files = None
    if seed_list:
        files = [(n, Path(p)) for n, p in json.loads(Path(seed_list).read_text())]
    seeds = load_seeds(files)
    others = [d for _, d, form in seeds if form == "plain" and d]
    workdir = Path(tempfile.mkdtemp(prefix="lagadvisor-fuzz-"))
    clean = workdir / "clean.binlog"
    clean.write_bytes(_cut((FIXTURES / "single_full" / "binlog.000001").read_bytes()))
    report = os.fdopen(os.dup(1), "w", buffering=1)
    try:
        for i in range(start, stop):
            case = make_case(seed, i, seeds, others)
            trick = (selftest or {}).get(i)
            if trick == "hang":
                time.sleep(1e6)
            elif trick == "die":
                os._exit(3)
            elif trick == "raise":
                case["argv"] = ["analyze", "--no-progress", "--selftest-raise"]
            res = execute(case, workdir, clean)
            if trick == "raise":
                res.update(status="traceback", detail="selftest")
            report.write(json.dumps(res) + "\n")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


class Stats:
    def __init__(self) -> None:
        self.executions = 0
        self.by_status: dict[str, int] = {}
        self.kinds: dict[str, int] = {}
        self.failures: list[dict] = []
        self.peak_rss_kb = 0
        self.by_cmd: dict[str, int] = {}

    def add(self, r: dict) -> None:
        self.executions += 1
        self.by_status[r["status"]] = self.by_status.get(r["status"], 0) + 1
        self.by_cmd[r["cmd"]] = self.by_cmd.get(r["cmd"], 0) + 1
        if r["status"] == "error":
            self.kinds[r["detail"]] = self.kinds.get(r["detail"], 0) + 1
        self.peak_rss_kb = max(self.peak_rss_kb, r.get("rss_kb", 0))

    def summary(self, seed: int, elapsed: float) -> dict:
        bad = {k: v for k, v in self.by_status.items() if k not in ("ok", "error")}
        return {"seed": seed, "executions": self.executions, "seconds": round(elapsed, 1),
                "ok": self.by_status.get("ok", 0), "errors": self.by_status.get("error", 0),
                "distinct_errors": len(self.kinds), "hangs": self.by_status.get("hang", 0),
                "tracebacks": self.by_status.get("traceback", 0), "crashes": self.by_status.get("crash", 0),
                "other_failures": sum(v for k, v in bad.items() if k not in ("hang", "traceback", "crash")),
                "peak_rss_mb": round(self.peak_rss_kb / 1024, 1), "by_command": self.by_cmd,
                "error_kinds": dict(sorted(self.kinds.items(), key=lambda kv: -kv[1])),
                "failures": self.failures[:50]}


def _save(case: dict, status: str, save_dir: Path | None) -> str | None:
    if save_dir is None:
        return None
    save_dir.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha1(case["data"]).hexdigest()[:10]
    path = save_dir / f"{status}-{digest}{case['suffix']}"
    path.write_bytes(case["data"])
    return str(path)


def fuzz(seed: int, executions: int | None, seconds: float | None, workers: int = 1, hang_seconds: float = 10.0,
         rss_limit_mb: int = 400, save_dir: Path | None = None, log=None, progress_every: float = 30.0,
         selftest: str = "") -> dict:
    """Run the fuzzer; returns the summary (also the figures in docs/internals.md)."""
    t0 = time.monotonic()
    deadline = t0 + seconds if seconds else None
    limit = executions if executions else 1 << 62
    files = seed_files()
    seeds = load_seeds(files)
    others = [d for _, d, form in seeds if form == "plain" and d]
    listing = tempfile.NamedTemporaryFile("w", suffix=".json", prefix="lagadvisor-fuzz-seeds-", delete=False)
    json.dump([(n, str(p)) for n, p in files], listing)
    listing.close()
    stats = Stats()
    batch = 2000  # executions per worker process before a fresh one (RSS stays per-process)
    next_start = 0
    env = dict(os.environ)
    env.pop("LAGADVISOR_PUREPYTHON", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "scripts"), env.get("PYTHONPATH", "")])

    def spawn(start: int):
        stop = min(start + batch, limit)
        p = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--worker", "--seed", str(seed),
                              "--start", str(start), "--stop", str(stop), "--selftest", selftest,
                              "--seed-list", listing.name],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
        return {"p": p, "next": start, "stop": stop, "last": time.monotonic(), "buf": b""}

    slots = []
    for _ in range(max(1, workers)):
        if next_start >= limit:
            break
        slots.append(spawn(next_start))
        next_start = min(next_start + batch, limit)
    last_progress = t0

    def fail(w, status: str, detail: str) -> None:
        case = make_case(seed, w["next"], seeds, others)
        r = {"i": w["next"], "status": status, "detail": detail, "cmd": case["argv"][0], "native": case["native"]}
        r["saved"] = _save(case, status, save_dir)
        r["argv"] = case["argv"]
        r["mutations"] = case["mutations"]
        r["seed_file"] = case["seed_file"]
        stats.add(r)
        stats.failures.append(r)
        if log:
            log.write(json.dumps(r) + "\n")

    def kill(w) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(w["p"].pid, signal.SIGKILL)
        w["p"].wait()

    while slots:
        now = time.monotonic()
        if (deadline and now >= deadline) or stats.executions >= limit:
            for w in slots:
                kill(w)
            break
        fds = {w["p"].stdout.fileno(): w for w in slots}
        ready, _, _ = select.select(list(fds), [], [], 1.0)
        for fd in ready:
            w = fds[fd]
            chunk = os.read(fd, 1 << 16)
            if not chunk:  # the worker ended: done with its range, or died
                rc = w["p"].wait()
                slots.remove(w)
                if w["next"] < w["stop"]:
                    fail(w, "crash", f"worker died (exit {rc})")
                    slots.append(spawn(w["next"] + 1))
                    slots[-1]["stop"] = w["stop"]
                elif next_start < limit:
                    slots.append(spawn(next_start))
                    next_start = min(next_start + batch, limit)
                continue
            w["buf"] += chunk
            *lines, w["buf"] = w["buf"].split(b"\n")
            for line in lines:
                r = json.loads(line)
                w["next"] = r["i"] + 1
                w["last"] = time.monotonic()
                if r["status"] not in ("ok", "error"):
                    case = make_case(seed, r["i"], seeds, others)
                    r["saved"] = _save(case, r["status"], save_dir)
                    r.update(argv=case["argv"], mutations=case["mutations"], seed_file=case["seed_file"])
                    stats.failures.append(r)
                elif r["rss_kb"] > rss_limit_mb * 1024 and stats.peak_rss_kb <= rss_limit_mb * 1024:
                    r["status"] = "memory"
                    r["detail"] = f"peak RSS {r['rss_kb'] // 1024} MB"
                    case = make_case(seed, r["i"], seeds, others)
                    r["saved"] = _save(case, "memory", save_dir)
                    stats.failures.append(r)
                stats.add(r)
                if log and r["status"] not in ("ok", "error"):
                    log.write(json.dumps(r) + "\n")
        now = time.monotonic()
        for w in list(slots):
            if now - w["last"] > hang_seconds:
                kill(w)
                slots.remove(w)
                fail(w, "hang", f"no result within {hang_seconds:.0f} s")
                if w["next"] + 1 < w["stop"]:
                    nw = spawn(w["next"] + 1)
                    nw["stop"] = w["stop"]
                    slots.append(nw)
        if now - last_progress >= progress_every:
            last_progress = now
            s = stats.summary(seed, now - t0)
            s.pop("failures")
            s.pop("error_kinds")
            print(json.dumps({"progress": s}), file=sys.stderr, flush=True)
    os.unlink(listing.name)
    return stats.summary(seed, time.monotonic() - t0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--seconds", type=float, default=None, help="stop after this long")
    ap.add_argument("--executions", type=int, default=None, help="stop after this many executions")
    ap.add_argument("--workers", type=int, default=1, help="worker processes (each uses one core)")
    ap.add_argument("--hang-seconds", type=float, default=10.0)
    ap.add_argument("--rss-limit-mb", type=int, default=400)
    ap.add_argument("--save-dir", default=str(REGRESSIONS), help="where failing inputs go ('' = nowhere)")
    ap.add_argument("--log", default=None, help="append failures (JSON lines) here")
    ap.add_argument("--replay", type=int, default=None, help="run execution I of --seed again and print it")
    ap.add_argument("--selftest", default="", help=argparse.SUPPRESS)  # "I:hang,J:raise,K:die"
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--seed-list", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--stop", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        tricks = {int(k): v for k, v in (t.split(":") for t in a.selftest.split(",") if t)}
        worker(a.seed, a.start, a.stop, tricks, a.seed_list)
        return 0
    if a.replay is not None:
        seeds = load_seeds()
        case = make_case(a.seed, a.replay, seeds, [d for _, d, form in seeds if form == "plain" and d])
        keep = Path(tempfile.mkdtemp(prefix="lagadvisor-replay-"))
        clean = keep / "clean.binlog"
        clean.write_bytes(_cut((FIXTURES / "single_full" / "binlog.000001").read_bytes()))
        res = execute(case, keep, clean)
        print(json.dumps({k: v for k, v in case.items() if k != "data"} | {"input": str(keep / f"case{case['suffix']}")}))
        print(json.dumps(res, indent=2))
        return 0
    if not a.seconds and not a.executions:
        ap.error("give --seconds or --executions")
    log = open(a.log, "a", encoding="utf-8", buffering=1) if a.log else None
    summary = fuzz(a.seed, a.executions, a.seconds, a.workers, a.hang_seconds, a.rss_limit_mb,
                   Path(a.save_dir) if a.save_dir else None, log, selftest=a.selftest)
    print(json.dumps(summary, indent=2))
    bad = summary["hangs"] + summary["tracebacks"] + summary["crashes"] + summary["other_failures"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
