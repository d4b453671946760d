"""The soak inside the guest (started by scripts/soak through vm-run).

    guest_runner.py MINUTES [traffic.py options]

Puts netem (IMPAIRMENT) on the data packets leaving both veth ends,
runs soak/traffic.py for MINUTES and, once before it starts, once a
minute while it runs and twice after it ends, records a sample of kernel
memory and RDMA state.  Everything goes into $SROCE_OUT: samples.jsonl
(raw text: the host parses it, soak/report.py), traffic.json (the
traffic app's verdict), traffic.err, netem.txt, retrans_timeout.txt
(the last retries of any QP, from sroce's tracepoint), and on a kernel with
kmemleak (the debug kernel) the reports of one scan after the traffic
has settled: kmemleak.

For the traffic's on-demand (ODP) flows, memory is kept moving while it
runs (MEMORY_CHURN: compaction migrates their pages, a hog squeezes the
page cache), and with $SROCE_ODP_TOOL (tests/guest/tools/odp, which
scripts/soak passes) its race runs beside the traffic on sroce0: fresh
memory mapped over the target of each WRITE and READ while it runs.
Its output: odp_race.txt.
"""
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "guest"))
from verbs_apps import impair_command  # noqa: E402

OUT = os.environ["SROCE_OUT"]
# 0.5% of data packets lost; 2% held back 10 ms, so they arrive after
# the ones sent behind them.
IMPAIRMENT = "loss 0.5% delay 10ms reorder 98%"
PEER = "ip netns exec peer "
# Every 2 s: compact memory (each page moved under an ODP MR is an
# invalidation; migration keeps the data), then touch a quarter of the
# available memory and let it go.
MEMORY_CHURN = (
    "while :; do echo 1 > /proc/sys/vm/compact_memory; "
    "python3 -c 'import sys; b = bytearray(int(sys.argv[1])); "
    "b[::4096] = bytes(len(b[::4096]))' "
    "$(awk '/MemAvailable/ {print $2 * 256}' /proc/meminfo); sleep 2; done")


def sh(cmd):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout


def sample(phase, t0):
    with open("/proc/meminfo") as f:
        meminfo = f.read()
    with open("/proc/slabinfo") as f:
        slabinfo = f.read()
    return {"phase": phase, "t": round(time.monotonic() - t0, 1),
            "meminfo": meminfo, "slabinfo": slabinfo,
            "resources": sh("rdma resource show; %srdma resource show" % PEER),
            "statistics": sh("rdma statistic show link sroce0/1; "
                             "rdma statistic show link sroce1/1")}


def scan_kmemleak():
    """Leaves OUT/kmemleak with every report of a scan, where the kernel
    has kmemleak; the host decides which count (soak/report.py).  Objects
    younger than 5 s are never reported, hence the wait."""
    knob = "/sys/kernel/debug/kmemleak"
    if not os.path.exists(knob):
        return
    time.sleep(6)
    with open(knob, "w") as f:
        f.write("scan")
    with open(knob) as f, open(os.path.join(OUT, "kmemleak"), "w") as out:
        out.write(f.read())


def start_odp_race(minutes):
    """The ODP tool's race on sroce0 for the traffic's time, or None."""
    tool = os.environ.get("SROCE_ODP_TOOL")
    if not tool:
        return None
    sys.path.insert(0, HERE)
    from traffic import ADDRESSES, v2_gid_index
    out = open(os.path.join(OUT, "odp_race.txt"), "w")
    return subprocess.Popen([tool, "sroce0", str(v2_gid_index("sroce0", ADDRESSES[0])),
                             "--race", str(minutes * 60)],
                            stdout=out, stderr=subprocess.STDOUT)


def trace_last_retries():
    """Records every local ACK timeout that leaves a QP two retries or
    fewer (sroce:retrans_timeout), so a QP that exhausts its retries
    shows which PSN it was stuck on and how the back-off grew."""
    tracing = "/sys/kernel/tracing"
    if not os.path.isdir(os.path.join(tracing, "events")):
        sh("mount -t tracefs nodev %s" % tracing)
    event = os.path.join(tracing, "events", "sroce", "retrans_timeout")
    if not os.path.isdir(event):
        return None
    with open(os.path.join(event, "filter"), "w") as f:
        f.write("retry_left <= 2")
    with open(os.path.join(event, "enable"), "w") as f:
        f.write("1")
    return tracing


def save_trace(tracing):
    if tracing:
        with open(os.path.join(tracing, "trace")) as src, \
                open(os.path.join(OUT, "retrans_timeout.txt"), "w") as dst:
            dst.write(src.read())


def main():
    minutes = float(sys.argv[1])
    tracing = trace_last_retries()
    for dev, ns in (("veth0", ""), ("veth1", PEER)):
        subprocess.run(impair_command(dev, IMPAIRMENT, ns), shell=True, check=True)
    t0 = time.monotonic()
    samples = open(os.path.join(OUT, "samples.jsonl"), "w")

    def record(phase):
        samples.write(json.dumps(sample(phase, t0)) + "\n")
        samples.flush()

    record("before")
    churn = subprocess.Popen(MEMORY_CHURN, shell=True, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    race = start_odp_race(minutes)
    with open(os.path.join(OUT, "traffic.json"), "w") as out, \
            open(os.path.join(OUT, "traffic.err"), "w") as err:
        app = subprocess.Popen([sys.executable, os.path.join(HERE, "traffic.py"),
                                str(minutes * 60)] + sys.argv[2:], stdout=out, stderr=err)
        minute = 1
        while app.poll() is None:
            if time.monotonic() - t0 >= minute * 60:
                record("minute %d" % minute)
                minute += 1
            time.sleep(0.5)
    churn.kill()
    churn.wait()
    if race:
        race.wait()
    record("ended")
    save_trace(tracing)
    time.sleep(10)       # destroyed objects are freed by RCU and workqueues
    record("settled")
    samples.close()
    scan_kmemleak()
    with open(os.path.join(OUT, "netem.txt"), "w") as f:
        f.write(IMPAIRMENT + "\n" + sh("tc -s qdisc show dev veth0; "
                                       "%stc -s qdisc show dev veth1" % PEER))
    return app.returncode


if __name__ == "__main__":
    sys.exit(main())
