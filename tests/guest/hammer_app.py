"""Create/destroy hammer for tests/guest/test_faults.py.

    hammer_app.py DEV GID_INDEX ROUNDS [WHILE_PID]

With WHILE_PID, no round starts once that process has ended: the
hammer runs under the traffic it was given, and says how many rounds
that was.

Each round builds a loopback pair of RC QPs (isolation_app.Pair), posts
RDMA WRITEs that are still in flight, a third QP whose peer QP was
destroyed (so its retransmission timer is running), a fourth whose
SEND was refused for want of a receive (so its RNR timer is running)
and a fifth paced at the device's lowest rate in the middle of a WRITE
(so its pacer's kick timer is running), then destroys everything at
once: QP teardown races the send work, the receive path and the timers.
Prints JSON counts.
"""
import json
import os
import sys
import time

import pyverbs.enums as e
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QPAttr
from pyverbs.wr import SGE, SendWR

from cc_sampler import counter
from isolation_app import REMOTE_ALL, Pair

SIZE = 1 << 16


def rnr_waiting(ctx, gid_index, tpd, dev):
    """A pair whose requester is in its RNR wait: the target has no
    receive and asks for the longest wait (min_rnr_timer 31, ~491 ms).
    Returns it and its SEND's MR once the RNR NAK came back (at most 2 s),
    and whether it did."""
    pair = Pair(ctx, gid_index, tpd)
    local = MR(pair.pd, 64, e.IBV_ACCESS_LOCAL_WRITE)
    attr = QPAttr()
    attr.min_rnr_timer = 31
    pair.tqp.modify(attr, e.IBV_QP_MIN_RNR_TIMER)
    before = counter(dev, "rnr_nak_rcvd")
    pair.qp.post_send(SendWR(opcode=e.IBV_WR_SEND, num_sge=1,
                             sg=[SGE(local.buf, 64, local.lkey)]))
    deadline = time.monotonic() + 2
    while counter(dev, "rnr_nak_rcvd") == before and time.monotonic() < deadline:
        time.sleep(0.001)
    return pair, local, counter(dev, "rnr_nak_rcvd") != before


def paced_mid_write(ctx, gid_index, tpd, target, kbps):
    """A pair paced at @kbps with a 64 KiB WRITE posted: the pacer holds
    most of it back on its kick timer.  Returns the pair, its MR, and
    whether the WRITE was unfinished when it returned."""
    pair = Pair(ctx, gid_index, tpd)
    attr = QPAttr()
    attr.rate_limit = kbps
    pair.qp.modify(attr, e.IBV_QP_RATE_LIMIT)
    local = MR(pair.pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE)
    wr = SendWR(opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                sg=[SGE(local.buf, SIZE, local.lkey)])
    wr.set_wr_rdma(target.rkey, target.buf)
    pair.qp.post_send(wr)
    return pair, local, pair.cq.poll(1)[0] == 0


def running(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def main(dev, gid_index, rounds, while_pid=None):
    ctx = Context(name=dev)
    slowest = ctx.query_device_ex().packet_pacing_caps.qp_rate_limit_min
    posted = rnr_armed = paced = done = 0
    while done < rounds and (while_pid is None or running(while_pid)):
        tpd = PD(ctx)
        target = MR(tpd, SIZE, REMOTE_ALL)
        pair = Pair(ctx, gid_index, tpd)
        local = MR(pair.pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE)
        for _ in range(3):
            wr = SendWR(opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                        sg=[SGE(local.buf, SIZE, local.lkey)])
            wr.set_wr_rdma(target.rkey, target.buf)
            pair.qp.post_send(wr)
            posted += 1
        # A QP whose peer is gone: its timer is armed when it is destroyed.
        lost = Pair(ctx, gid_index, tpd)
        lost.tqp.close()
        wr = SendWR(opcode=e.IBV_WR_RDMA_WRITE, num_sge=1,
                    sg=[SGE(local.buf, 4096, local.lkey)])
        wr.set_wr_rdma(target.rkey, target.buf)
        try:
            lost.qp.post_send(wr)
            posted += 1
        except Exception:
            pass        # already in error: fine, it is torn down anyway
        rnr, rnr_local, armed = rnr_waiting(ctx, gid_index, tpd, dev)
        rnr_armed += armed
        slow, slow_local, pending = paced_mid_write(ctx, gid_index, tpd, target, slowest)
        paced += pending
        for obj in (lost.qp, lost.tqp, pair.qp, pair.tqp, rnr.qp, rnr.tqp, slow.qp, slow.tqp,
                    local, rnr_local, slow_local, target,
                    lost.cq, lost.tcq, pair.cq, pair.tcq, rnr.cq, rnr.tcq,
                    slow.cq, slow.tcq, lost.pd, pair.pd, rnr.pd, slow.pd, tpd):
            obj.close()
        done += 1
    ctx.close()
    print(json.dumps({"rounds": done, "posted": posted, "rnr_armed": rnr_armed,
                      "paced_mid_write": paced}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
         *(int(a) for a in sys.argv[4:5]))
