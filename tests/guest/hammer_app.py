"""Create/destroy hammer for tests/guest/test_faults.py.

    hammer_app.py DEV GID_INDEX ROUNDS

Each round builds a loopback pair of RC QPs (isolation_app.Pair), posts
RDMA WRITEs that are still in flight, and a third QP whose peer QP was
destroyed (so its retransmission timer is running), then destroys
everything at once: QP teardown races the send work, the receive path
and the timers.  Prints JSON counts.
"""
import json
import sys

import pyverbs.enums as e
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.wr import SGE, SendWR

from isolation_app import REMOTE_ALL, Pair

SIZE = 1 << 16


def main(dev, gid_index, rounds):
    ctx = Context(name=dev)
    posted = 0
    for i in range(rounds):
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
        for obj in (lost.qp, lost.tqp, pair.qp, pair.tqp, local, target,
                    lost.cq, lost.tcq, pair.cq, pair.tcq, lost.pd, pair.pd, tpd):
            obj.close()
    ctx.close()
    print(json.dumps({"rounds": rounds, "posted": posted}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
