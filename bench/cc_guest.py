#!/usr/bin/python3
"""Runs inside a scripts/vm-run guest: does DCQCN fill a slow bottleneck?

Four RC QPs (ib_write_bw -q 4, 64 KiB WRITEs) from sroce1 in namespace
peer into sroce0, through veth1's egress shaped by htb to RATE with an
ECN-marking leaf qdisc, with DCQCN at its defaults; then four TCP
streams (iperf3 -P 4) through the same qdisc, the ceiling to compare
with.  Per leaf qdisc it records each QP's goodput over a window after
a warm-up, Jain's index, the qdisc's marks and drops, the CNPs, and the
sroce:rate_change trace of the window (every cut and increase of every
QP), as one JSON object per line on stdout.

    cc_guest.py [--kbit N] [--seconds S] [--warmup S] [--set NAME=VALUE]... [LEAF ...]
LEAF: fq_codel, red (default both).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "tests", "guest"), os.path.join(HERE, "..", "soak")]
from cc_sampler import counter, qp_bytes, root_drops, wait_sending  # noqa: E402
from traffic import ADDRESSES, v2_gid_index  # noqa: E402

TRACE = "/sys/kernel/tracing"
SERVER_IP, CLIENT_IP = ADDRESSES
RATE_EVENT = re.compile(
    r"\s(\d+\.\d+): rate_change: dev=(\S+) qpn=(\d+) old_kbps=(\d+) "
    r"new_kbps=(\d+) reason=(\S+) stage=(\S+) alpha=(\d+)")


def sh(cmd, check=True, timeout=None):
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True,
                       timeout=timeout)
    if check and r.returncode:
        sys.exit("failed (%d): %s\n%s%s" % (r.returncode, cmd, r.stdout, r.stderr))
    return r.stdout


def leaf_qdisc(leaf, kbit):
    """The marking queue under htb: fq_codel with a 1 ms target, or RED
    with thresholds of about 6 and 18 ms at the bottleneck's rate."""
    if leaf == "fq_codel":
        return "fq_codel ecn target 1ms"
    bytes_per_ms = kbit // 8
    return ("red limit {l} min {mn} max {mx} avpkt 4200 burst {b} ecn "
            "bandwidth {k}kbit probability 0.1").format(
                l=60 * bytes_per_ms, mn=6 * bytes_per_ms, mx=18 * bytes_per_ms,
                b=max(2, 8 * bytes_per_ms // 4200), k=kbit)


def shape(leaf, kbit):
    sh("ip netns exec peer tc qdisc del dev veth1 root 2>/dev/null", check=False)
    sh("ip netns exec peer tc qdisc add dev veth1 root handle 1: htb default 1 && "
       "ip netns exec peer tc class add dev veth1 parent 1: classid 1:1 htb "
       "rate {k}kbit ceil {k}kbit && "
       "ip netns exec peer tc qdisc add dev veth1 parent 1:1 handle 10: {q}"
       .format(k=kbit, q=leaf_qdisc(leaf, kbit)))


def qdisc_counts():
    out = sh("ip netns exec peer tc -s qdisc show dev veth1")
    marked = sum(int(x) for x in re.findall(r"(?:marked|ecn_mark) (\d+)", out))
    return {"drops": root_drops(out), "marks": marked}


def counters():
    names = ("cnp_sent", "cnp_rcvd", "retransmits", "timeouts", "tx_packets")
    return {d: {n: counter(d, n) for n in names} for d in ("sroce0", "sroce1")}


def jain(xs):
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs)) if any(xs) else 0.0


def trace_on():
    sh("mountpoint -q {t} || mount -t tracefs nodev {t}; "
       "echo 65536 > {t}/buffer_size_kb; echo > {t}/trace; "
       "echo 1 > {t}/events/sroce/rate_change/enable".format(t=TRACE))


def trace_off():
    sh("echo 0 > {t}/events/sroce/rate_change/enable".format(t=TRACE))
    text = sh("cat %s/trace" % TRACE)
    sh("echo > %s/trace" % TRACE)
    return text


def rate_events(text, qpns, t0, t1):
    """The window's rate changes of our QPs: (s from t0, qpn, new kbps,
    reason, stage, alpha)."""
    out = []
    for m in RATE_EVENT.finditer(text):
        t, dev, qpn = float(m.group(1)), m.group(2), int(m.group(3))
        if dev == "sroce1" and qpn in qpns and t0 <= t <= t1:
            out.append((round(t - t0, 6), qpn, int(m.group(5)), m.group(6),
                        m.group(7), int(m.group(8))))
    return out


def uptime():
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


def roce_run(args):
    g0, g1 = v2_gid_index("sroce0", SERVER_IP), v2_gid_index("sroce1", CLIENT_IP)
    dur = int(args.warmup + args.seconds + 10)
    perf = "ib_write_bw -F -s 65536 -q 4 -u 19 -D %d" % dur
    srv = subprocess.Popen("exec %s -d sroce0 -x %d" % (perf, g0), shell=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for _ in range(100):
        if sh("ss -Hltn 'sport = :18515'", check=False).strip():
            break
        time.sleep(0.2)
    c0, q0 = counters(), qdisc_counts()
    trace_on()
    cli = subprocess.Popen("exec ip netns exec peer %s -d sroce1 -x %d %s" %
                           (perf, g1, SERVER_IP), shell=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wait_sending("sroce1")
    time.sleep(args.warmup)
    t0, b0, qa = uptime(), qp_bytes("sroce1"), qdisc_counts()
    time.sleep(args.seconds)
    t1, b1, qb = uptime(), qp_bytes("sroce1"), qdisc_counts()
    text = trace_off()
    cli_out, _ = cli.communicate(timeout=dur + 120)
    srv_out, _ = srv.communicate(timeout=60)
    c1 = counters()
    shares = [b1[q] - b0[q] for q in b0 if q in b1]
    secs = t1 - t0
    events = rate_events(text, set(b0), t0, t1)
    return {
        "qps": len(shares), "seconds": round(secs, 2),
        "mbit": [round(x * 8 / secs / 1e6, 3) for x in shares],
        "total_mbit": round(sum(shares) * 8 / secs / 1e6, 3),
        "jain": round(jain(shares), 4),
        "window_marks": qb["marks"] - qa["marks"], "window_drops": qb["drops"] - qa["drops"],
        "run_marks": qdisc_counts()["marks"] - q0["marks"],
        "run_drops": qdisc_counts()["drops"] - q0["drops"],
        "counters": {d: {k: c1[d][k] - c0[d][k] for k in c1[d]} for d in c1},
        "cuts": sum(1 for e in events if e[3] == "cnp_cut"),
        "pushback_cuts": sum(1 for e in events if e[3] == "local_pushback"),
        "events": events,
        "perftest_ok": cli.returncode == 0 and srv.returncode == 0,
        "perftest_tail": cli_out[-400:],
    }


def tcp_run(args):
    srv = subprocess.Popen("exec iperf3 -s -1 -B %s" % SERVER_IP, shell=True,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(1)
    q0 = qdisc_counts()
    out = sh("ip netns exec peer iperf3 -J -c %s -P 4 -t %d -O %d" %
             (SERVER_IP, int(args.seconds), int(args.warmup)),
             timeout=args.seconds + args.warmup + 60)
    srv.communicate(timeout=30)
    q1 = qdisc_counts()
    j = json.loads(out)
    streams = [s["receiver"]["bits_per_second"] / 1e6 for s in j["end"]["streams"]]
    return {"mbit": [round(x, 3) for x in streams], "total_mbit": round(sum(streams), 3),
            "jain": round(jain(streams), 4),
            "marks": q1["marks"] - q0["marks"], "drops": q1["drops"] - q0["drops"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kbit", type=int, default=40000)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--warmup", type=float, default=5)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                    help="a DCQCN setting (/sys/class/infiniband/DEV/cc/NAME) "
                         "for both devices, e.g. rate_period_ns=100000000")
    ap.add_argument("leaves", nargs="*", default=["fq_codel", "red"])
    args = ap.parse_args()
    settings = dict(kv.split("=", 1) for kv in args.set)
    for name, value in settings.items():
        for dev in ("sroce0", "sroce1"):
            with open("/sys/class/infiniband/%s/cc/%s" % (dev, name), "w") as f:
                f.write(value)
    for leaf in args.leaves:
        shape(leaf, args.kbit)
        rec = {"leaf": leaf, "qdisc": leaf_qdisc(leaf, args.kbit), "kbit": args.kbit,
               "dcqcn": settings or "defaults"}
        rec["roce"] = roce_run(args)
        rec["tcp"] = tcp_run(args)
        print(json.dumps(rec), flush=True)
    sh("ip netns exec peer tc qdisc del dev veth1 root", check=False)


if __name__ == "__main__":
    main()
