#!/usr/bin/python3
"""Runs inside the guest next to a transfer and measures it there, so no
host round trip or process start lands inside the measured interval.

    cc_sampler.py qp-bytes DEV WARMUP SECONDS
        waits until DEV has RC QPs sending, waits WARMUP s, then prints
        each QP's bytes sent over up to SECONDS (from `rdma res show qp
        -dd`, driver field tx_bytes) and the packets veth1's qdisc in
        namespace peer dropped meanwhile, as JSON {"qps": {lqpn: bytes},
        "drops": n, "seconds": s}.  It looks about once a second and
        keeps the last look at which every QP of the first still existed:
        on a guest slowed down by its host the window may not fit in the
        transfer, and a look after the application destroyed its QPs
        would measure nothing.
    cc_sampler.py dev-rate DEV WARMUP SECONDS
        the same for the whole device (any QP type: it waits for the
        device's packet counter to move) from its hw_counters (IP bytes:
        RoCE bytes + 28 per packet of UDP/IPv4), as JSON
        {"bits_per_second": ...}.
"""
import json
import re
import subprocess
import sys
import time

QP_LINE = re.compile(r"link (\S+)/1 lqpn (\d+) .*type RC .*drv_tx_bytes (\d+)")
UDP_IPV4_LEN = 28


def qp_bytes(dev):
    out = subprocess.run(["rdma", "res", "show", "qp", "-dd"], check=True,
                         capture_output=True, text=True).stdout
    return {int(m.group(2)): int(m.group(3))
            for m in QP_LINE.finditer(out) if m.group(1) == dev}


def wait_sending(dev, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(qp_bytes(dev).values()):
            return
        time.sleep(0.2)
    sys.exit("no QP of %s started sending" % dev)


def wait_device_sending(dev, timeout=60):
    deadline, start = time.monotonic() + timeout, counter(dev, "tx_packets")
    while time.monotonic() < deadline:
        if counter(dev, "tx_packets") != start:
            return
        time.sleep(0.2)
    sys.exit("%s sent nothing" % dev)


def root_drops(tc_s_output):
    """Packets dropped, from `tc -s qdisc show`: the root qdisc's count,
    which includes its children's."""
    m = re.search(r"dropped (\d+)", tc_s_output.split("\nqdisc")[0])
    return int(m.group(1)) if m else 0


def qdisc_drops():
    return root_drops(subprocess.run(
        ["tc", "-n", "peer", "-s", "qdisc", "show", "dev", "veth1"],
        check=True, capture_output=True, text=True).stdout)


def counter(dev, name):
    with open("/sys/class/infiniband/%s/ports/1/hw_counters/%s" % (dev, name)) as f:
        return int(f.read())


def ip_bytes(dev):
    return counter(dev, "tx_bytes") + UDP_IPV4_LEN * counter(dev, "tx_packets")


def sample_qps(dev, seconds):
    t0, before, drops0 = time.monotonic(), qp_bytes(dev), qdisc_drops()
    last = (t0, before, drops0)
    while last[0] - t0 < seconds:
        time.sleep(min(1.0, seconds - (last[0] - t0)))
        look = (time.monotonic(), qp_bytes(dev), qdisc_drops())
        if not set(before) <= set(look[1]):
            break           # the transfer is over: keep the look before
        last = look
    t1, after, drops1 = last
    return {"qps": {q: after[q] - before[q] for q in before},
            "drops": drops1 - drops0, "seconds": round(t1 - t0, 2)}


def main():
    mode, dev, warmup, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    if mode == "qp-bytes":
        wait_sending(dev)
        time.sleep(warmup)
        print(json.dumps(sample_qps(dev, seconds)))
    else:
        wait_device_sending(dev)
        time.sleep(warmup)
        t0, b0 = time.monotonic(), ip_bytes(dev)
        time.sleep(seconds)
        t1, b1 = time.monotonic(), ip_bytes(dev)
        print(json.dumps({"bits_per_second": (b1 - b0) * 8 / (t1 - t0),
                          "seconds": t1 - t0}))


if __name__ == "__main__":
    main()
