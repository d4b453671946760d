#!/usr/bin/python3
"""Kernel memory per QP: create COUNT RC QPs (128 send and 128 receive
WRs, one SGE each: the same caps on every device) on DEVICE with
pyverbs, and print one JSON line with the /proc/meminfo deltas per QP.
The QPs stay in RESET: this is the cost of having a QP, before traffic.
usage: qp_memory.py DEVICE COUNT"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parsers  # noqa: E402
import pyverbs.enums as e  # noqa: E402
from pyverbs.cq import CQ  # noqa: E402
from pyverbs.device import Context  # noqa: E402
from pyverbs.pd import PD  # noqa: E402
from pyverbs.qp import QP, QPCap, QPInitAttr  # noqa: E402


def meminfo():
    with open("/proc/meminfo") as f:
        return parsers.meminfo_kib(f.read())


def main():
    dev, count = sys.argv[1], int(sys.argv[2])
    ctx = Context(name=dev)
    pd = PD(ctx)
    cq = CQ(ctx, 256)
    attr = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq,
                      cap=QPCap(max_send_wr=128, max_recv_wr=128,
                                max_send_sge=1, max_recv_sge=1))
    before = meminfo()
    qps = [QP(pd, attr) for _ in range(count)]
    after = meminfo()
    fields = ("Slab", "SUnreclaim", "VmallocUsed", "PageTables", "MemFree")
    per = {f: (after.get(f, 0) - before.get(f, 0)) / count for f in fields}
    per["MemFree"] = -per["MemFree"]       # memory taken, positive
    print(json.dumps({"kib_per_qp": per["Slab"] + per["VmallocUsed"],
                      "kib_per_qp_by_field": per, "count": len(qps)}))


if __name__ == "__main__":
    main()
