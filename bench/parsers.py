"""Parsers for what the benchmark tools print: perftest bandwidth and
latency reports, `perf stat -x,` counts, `perf report` rows, iperf3 JSON,
/proc/stat and /proc/meminfo.  Pure functions on text, so they run (and
are unit-tested) on the host as well as in the guest.  Each raises
ParseError with the text's tail when the expected report is missing, so
a tool that failed is recorded as a failure, never as a zero."""
import json
import math
import re


class ParseError(ValueError):
    pass


def _tail(text, lines=8):
    return "\n".join(text.strip().splitlines()[-lines:])


# perftest's bandwidth report: a header line naming the unit, then
#  "#bytes #iterations BW-peak BW-average MsgRate" numbers.
_BW_HEADER = re.compile(r"#bytes\s+#iterations\s+BW peak\[([^\]]+)\]\s+"
                        r"BW average\[([^\]]+)\]\s+MsgRate\[Mpps\]")
_NUMBER_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$")
# perftest's "MB" is MiB (its --help: "MiB=2^20 byte, while Gb=10^9 bits").
_GBPS_PER_UNIT = {"Gb/sec": 1.0, "MB/sec": 8 * 2**20 / 1e9}


# perftest samples its cycle counter against gettimeofday() and refuses a
# fit with r^2 under 0.9 (a preemption mid-sample in a busy TCG guest does
# it); with -F it then reports with a frequency of 0: every bandwidth 0.00,
# every latency inf.  Such a report measures nothing, device or not.
_CLOCK_FAILED = re.compile(r"Correlation coefficient r\^2: (\S+) < 0\.9")


def _check_clock(text):
    m = _CLOCK_FAILED.search(text)
    if m:
        raise ParseError("perftest could not calibrate its clock (r^2 %s), "
                         "so its report is void:\n%s" % (m.group(1), _tail(text)))


def perftest_bw(text):
    """The last bandwidth report in `text`: {'bytes', 'iterations',
    'gbps' (average, Gb/s), 'mpps'}."""
    _check_clock(text)
    found = None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _BW_HEADER.search(line)
        if not m:
            continue
        unit = m.group(2)
        for row in lines[i + 1:i + 3]:
            r = _NUMBER_ROW.match(row)
            if r:
                if unit not in _GBPS_PER_UNIT:
                    raise ParseError("unknown perftest unit %r" % unit)
                size, mpps = int(r.group(1)), float(r.group(5))
                gbps = float(r.group(4)) * _GBPS_PER_UNIT[unit]
                # Both columns come from one measurement, but perftest
                # prints Gb/s with two decimals (0.00 for small messages
                # in a TCG guest) and Mpps with six: take the finer one.
                if mpps >= 0.001:
                    gbps = mpps * 1e6 * size * 8 / 1e9
                found = {"bytes": size, "iterations": int(r.group(2)),
                         "gbps": gbps, "mpps": mpps}
                break
    if found is None:
        raise ParseError("no perftest bandwidth report in:\n" + _tail(text))
    if found["iterations"] == 0 or found["gbps"] == 0:
        raise ParseError("perftest reported nothing moved:\n" + _tail(text))
    return found


_LAT_HEADER = re.compile(r"#bytes\s+#iterations\s+t_min\[usec\]")


def perftest_lat(text):
    """The latency report: {'bytes', 'iterations', 'min_us', 'max_us',
    'typical_us', 'avg_us', 'p99_us', 'p999_us'} (perftest's t_typical is
    its median)."""
    _check_clock(text)
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not _LAT_HEADER.search(line):
            continue
        names = re.findall(r"(#bytes|#iterations|t_\w+|99(?:\.9)?% percentile)",
                           line)
        for row in lines[i + 1:i + 3]:
            vals = row.split()
            if len(vals) != len(names) or not re.fullmatch(r"\d+", vals[0]):
                continue
            got = dict(zip(names, (float(v) for v in vals)))
            r = {"bytes": int(got["#bytes"]),
                 "iterations": int(got["#iterations"]),
                 "min_us": got["t_min"], "max_us": got["t_max"],
                 "typical_us": got["t_typical"], "avg_us": got["t_avg"],
                 "p99_us": got["99% percentile"],
                 "p999_us": got["99.9% percentile"]}
            # perftest prints inf when its cycle clock failed it
            if not all(math.isfinite(v) for v in r.values()):
                raise ParseError("perftest latency not finite:\n" + row)
            return r
    raise ParseError("no perftest latency report in:\n" + _tail(text))


_PINGPONG = re.compile(r"(\d+) iters in [\d.]+ seconds = ([\d.]+) usec/iter")


def rc_pingpong(text):
    """ibv_rc_pingpong's summary line: {'us_per_rt', 'iterations'} (each
    iteration is one message each way, a round trip)."""
    found = _PINGPONG.findall(text)
    if not found:
        raise ParseError("no ibv_rc_pingpong summary in:\n" + _tail(text))
    iters, us = found[-1]
    return {"us_per_rt": float(us), "iterations": int(iters)}


def perf_stat_counts(text):
    """`perf stat -x,` output -> [(event, count)] in the order the events
    were given (perf prints them so; the same tracepoint twice with
    different filters keeps two rows).  An event perf could not count is
    an error, never a zero."""
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split(",")
        if len(cols) < 3:
            continue
        if not re.fullmatch(r"\d+", cols[0]):
            raise ParseError("perf stat could not count %s: %s" % (cols[2], cols[0]))
        rows.append((cols[2], int(cols[0])))
    if not rows:
        raise ParseError("no perf stat counts in:\n" + _tail(text))
    return rows


def iperf3_gbps(text):
    """Receiver-side goodput of an `iperf3 -J` client run, Gb/s."""
    try:
        doc = json.loads(text)
    except ValueError:
        raise ParseError("iperf3 printed no JSON:\n" + _tail(text)) from None
    if "error" in doc:
        raise ParseError("iperf3: " + doc["error"])
    try:
        return doc["end"]["sum_received"]["bits_per_second"] / 1e9
    except KeyError:
        raise ParseError("iperf3 JSON without end.sum_received") from None


# /proc/stat cpu columns: user nice system idle iowait irq softirq steal ...
_USER_COLUMNS = (0, 1)
_KERNEL_COLUMNS = (2, 5, 6, 7)
_IDLE_COLUMNS = (3, 4)


def proc_stat_ticks(text):
    """(user, kernel, idle) clock ticks (USER_HZ) of all CPUs together from
    /proc/stat; kernel counts system, irq, softirq and steal time, idle
    counts idle and iowait."""
    for line in text.splitlines():
        if line.startswith("cpu "):
            cols = [int(v) for v in line.split()[1:]]
            return tuple(sum(cols[i] for i in group if i < len(cols))
                         for group in (_USER_COLUMNS, _KERNEL_COLUMNS, _IDLE_COLUMNS))
    raise ParseError("no aggregate cpu line in /proc/stat")


# `perf report --stdio -n --sort comm,dso,sym -t '|'`: one row per
# (command, object, symbol) with its sample count; "[k] "/"[.] " marks
# kernel and user symbols.
def perf_report_rows(text):
    """-> [(samples, comm, dso, symbol)]."""
    rows = []
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        cols = [c.strip() for c in line.split("|", 4)]    # a symbol may hold "|"
        if len(cols) != 5 or not cols[1].isdigit():
            raise ParseError("not a perf report row: %r" % line)
        sym = cols[4]
        if sym[:4] in ("[k] ", "[.] "):
            sym = sym[4:]
        rows.append((int(cols[1]), cols[2], cols[3], sym))
    if not rows:
        raise ParseError("perf report has no samples:\n" + _tail(text))
    return rows


def meminfo_kib(text):
    """/proc/meminfo -> {field: KiB}."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(\w[\w()]*):\s+(\d+)(?: kB)?$", line)
        if m:
            out[m.group(1)] = int(m.group(2))
    if "MemFree" not in out:
        raise ParseError("not a /proc/meminfo")
    return out


_FANOUT = re.compile(r"^qps (\d+) depth (\d+) size (\d+) writes (\d+) "
                     r"seconds ([\d.]+) gbps ([\d.]+)$", re.M)


def qp_fanout(text):
    """bench/tools/qp_fanout's line: {'qps', 'depth', 'bytes', 'writes'
    (counted in the steady state), 'seconds', 'gbps'}."""
    m = _FANOUT.search(text)
    if not m:
        raise ParseError("no qp_fanout result in: " + _tail(text))
    qps, depth, size, writes = (int(m.group(i)) for i in range(1, 5))
    return {"qps": qps, "depth": depth, "bytes": size, "writes": writes,
            "seconds": float(m.group(5)), "gbps": float(m.group(6))}
