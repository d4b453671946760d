"""Parsers for what the libraries' own benchmark programs print:
libfabric's fi_pingpong, UCX's ucx_perftest, librdmacm's rstream and
riostream (rsockets) and cmtime (rdma_cm connection set-up).  Pure
functions on text, run (and unit-tested) on the host as in the guest;
each raises ParseError with the text's tail when the report is missing,
so a program that failed is a failure, never a zero."""
import json
import re

from parsers import ParseError, _tail

# fi_pingpong: "bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec",
# then one row per size, e.g. "64  2000  =2000  250k  0.05s  5.02  25.49  0.04".
# From 1,000 on, fabtests prints counts truncated to thousands ("2k":
# cnt_str() in its common/shared.c).
_FI_ROW = re.compile(r"^(\d[\d.]*[kmg]?)\s+(\d+[kmb]?)\s+=(\d+[kmb]?)\s+\S+\s+([\d.]+)s\s+"
                     r"([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", re.M)
_FI_COUNT_UNIT = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9}


def _fi_count(text):
    digits = text.rstrip("kmb")
    return int(digits) * _FI_COUNT_UNIT[text[len(digits):]]


def fi_pingpong(text):
    """The last row fi_pingpong printed: {'iterations', 'us_per_rt'
    (its usec/xfer: one message each way), 'mbps' (its MB/sec)}."""
    rows = _FI_ROW.findall(text)
    if not rows:
        raise ParseError("no fi_pingpong report in:\n" + _tail(text))
    _, sent, acked, _, mbps, usec, _ = rows[-1]
    if sent != acked:
        raise ParseError("fi_pingpong: %s sent, %s acknowledged" % (sent, acked))
    return {"iterations": _fi_count(sent), "us_per_rt": float(usec), "mbps": float(mbps)}


# ucx_perftest's last line: "Final: iterations, overhead (usec) 50%ile
# average overall, bandwidth (MB/s) average overall, message rate
# (msg/s) average overall".  Its MB is 2^20 bytes (UCS_MBYTE).
_UCX_FINAL = re.compile(r"^Final:\s+(\d+)((?:\s+[\d.]+){7})\s*$", re.M)


def ucx_perftest(text):
    """{'iterations', 'typical_us' (50th percentile), 'avg_us', 'gbps'
    (overall), 'msg_rate' (overall)}.  Latency tests' overhead is UCX's
    one-way latency, half a round trip."""
    m = _UCX_FINAL.search(text)
    if not m:
        raise ParseError("no ucx_perftest Final line in:\n" + _tail(text))
    typical, avg, _, _, bw_overall, _, rate_overall = (float(v) for v in m.group(2).split())
    return {"iterations": int(m.group(1)), "typical_us": typical, "avg_us": avg,
            "gbps": bw_overall * 2**20 * 8 / 1e9, "msg_rate": rate_overall}


def rsocket_stream(text):
    """rstream's or riostream's result table ("name bytes xfers iters
    total time Gb/sec usec/xfer"): its last row, {'gbps', 'us_per_xfer',
    'name'}."""
    lines = text.splitlines()
    header = max((i for i, l in enumerate(lines)
                  if "Gb/sec" in l and "usec/xfer" in l), default=None)
    if header is None:
        raise ParseError("no rstream report in:\n" + _tail(text))
    names = lines[header].split()
    rows = [l.split() for l in lines[header + 1:] if len(l.split()) == len(names)]
    if not rows:
        raise ParseError("rstream printed a header but no result:\n" + _tail(text))
    row = dict(zip(names, rows[-1]))
    try:
        gbps, usec = float(row["Gb/sec"]), float(row["usec/xfer"])
    except (KeyError, ValueError):
        raise ParseError("unreadable rstream row: %s" % " ".join(rows[-1])) from None
    if gbps <= 0:
        raise ParseError("rstream moved nothing:\n" + _tail(text))
    return {"gbps": gbps, "us_per_xfer": usec, "name": row.get("name", "")}


# cmtime: "step  total ms  max ms  min us  us / conn", then a row per step,
# e.g. "resolve addr :  1.56  0.09  8.00  15.61".
_CM_ROW = re.compile(r"^(\w[\w ]*?)\s*:\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", re.M)
CM_SETUP_STEPS = ("create id", "bind addr", "resolve addr", "resolve route",
                  "create qp", "connect")


def cmtime(text):
    """{'setup_us_per_conn': microseconds per connection over the set-up
    steps (create id to connect), 'steps': {step: us per connection}}."""
    steps = {name.strip(): float(per) for name, _, _, _, per in _CM_ROW.findall(text)}
    missing = [s for s in CM_SETUP_STEPS if s not in steps and s != "bind addr"]
    if missing:
        raise ParseError("cmtime printed no %s step in:\n%s" % (missing, _tail(text, 12)))
    return {"setup_us_per_conn": sum(steps.get(s, 0.0) for s in CM_SETUP_STEPS),
            "steps": steps}


def fio_json(text):
    """fio --output-format=json --lat_percentiles=1, one job that read:
    {'kiops', 'gbps', 'p99_us'}.  p99_us is of the whole latency
    (submission and completion, fio's lat_ns), not of clat alone: a
    device that does the I/O inside io_submit(), as sroce does on one
    device, leaves almost nothing to clat, one that defers it (rxe) leaves
    it all.  fio prints its notes before the JSON, so the report is the
    text from its first '{'."""
    start = text.find("{")
    try:
        report = json.loads(text[start:]) if start >= 0 else None
    except ValueError:
        report = None
    if not report or not report.get("jobs"):
        raise ParseError("no fio JSON report in:\n" + _tail(text))
    job = report["jobs"][0]
    if job.get("error"):
        raise ParseError("fio: job error %s" % job["error"])
    read = job["read"]
    if not read.get("io_bytes"):
        raise ParseError("fio: nothing read")
    p99 = read.get("lat_ns", {}).get("percentile", {}).get("99.000000")
    if p99 is None:
        raise ParseError("fio: no total latency percentiles (run it with --lat_percentiles=1)")
    return {"kiops": read["iops"] / 1000.0, "gbps": read["bw_bytes"] * 8 / 1e9,
            "p99_us": p99 / 1000.0}
