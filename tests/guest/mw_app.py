"""Guest-side pyverbs program for tests/guest/test_memory_windows.py.

    mw_app.py DEV GID_INDEX     runs every case, prints one JSON list

Every case gets a fresh target: a PD with one MR that grants no remote
right itself (LOCAL_WRITE | MW_BIND), so whatever a peer reaches it
reaches through a window, and fresh loopback RC QPs (isolation_app.Pair:
the requester in its own PD, the target QP in the target's PD), because
a failed access moves both QPs to the error state.  The window covers
bytes [W_OFF, W_OFF + W_LEN) of the MR.
"""
import errno
import json
import sys

import pyverbs.enums as e
from pyverbs.device import Context
from pyverbs.mr import MR, MW, MWBind, MWBindInfo
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.wr import SGE, RecvWR, SendWR

from isolation_app import (SIZE, SOURCE_FILL, STATUS, TARGET_FILL, Pair,
                           poll_status)

MR_ACCESS = e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_MW_BIND
R, W = e.IBV_ACCESS_REMOTE_READ, e.IBV_ACCESS_REMOTE_WRITE
W_OFF, W_LEN = 1024, 1024


class Target:
    def __init__(self, ctx, gid_index, mr_access=MR_ACCESS):
        self.ctx, self.gid_index = ctx, gid_index
        self.pd = PD(ctx)
        self.mr = MR(self.pd, SIZE, mr_access)
        self.mr.write(TARGET_FILL * SIZE, SIZE)
        self.windows = []

    def pair(self):
        p = Pair(self.ctx, self.gid_index, self.pd)
        p.local = MR(p.pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE)
        p.local.write(SOURCE_FILL * SIZE, SIZE)
        return p

    def window(self, mw_type):
        mw = MW(self.pd, mw_type)
        self.windows.append(mw)
        return mw

    def changed(self):
        """[first, end) of the MR bytes that no longer hold TARGET_FILL."""
        data = self.mr.read(SIZE, 0)
        diff = [i for i in range(SIZE) if data[i] != TARGET_FILL[0]]
        return [diff[0], diff[-1] + 1] if diff else None

    def close(self):
        for mw in self.windows:
            mw.close()               # unpins the MR for the pd's cleanup


def bind1(t, pair, mw, off, length, access, mr=None):
    """ibv_bind_mw on the target QP; the bind's completion status."""
    mr = mr or t.mr
    pair.tqp.bind_mw(mw, MWBind(MWBindInfo(mr, mr.buf + off, length, access),
                                e.IBV_SEND_SIGNALED))
    return poll_status(pair.tcq)


def bind2(t, pair, mw, off, length, access, mr=None):
    """IBV_WR_BIND_MW on the target QP: (status, the window's new rkey)."""
    mr = mr or t.mr
    wr = SendWR(opcode=e.IBV_WR_BIND_MW)
    wr.set_bind_wr(mw, MWBindInfo(mr, mr.buf + off, length, access))
    pair.tqp.post_send(wr)
    return poll_status(pair.tcq), wr.rkey


def access(t, pair, op, rkey, addr, n=64):
    status = pair.post(op, pair.local, n, rkey, addr)
    return {"status": status, "changed": t.changed(),
            "read": (pair.local.read(n, 0) == TARGET_FILL * n)
            if op == e.IBV_WR_RDMA_READ else None}


def inv_wr(opcode, rkey, sge=None):
    wr = SendWR(opcode=opcode, num_sge=1 if sge else 0,
                sg=[sge] if sge else None)
    wr.imm_data = rkey
    return wr


# ---- the cases: each returns a dict of what happened ----------------------

def type1_access(t, rights, op, addr_off, zero_based=False):
    p, mw = t.pair(), t.window(e.IBV_MW_TYPE_1)
    flags = rights | (e.IBV_ACCESS_ZERO_BASED if zero_based else 0)
    bind = bind1(t, p, mw, W_OFF, W_LEN, flags)
    base = 0 if zero_based else t.mr.buf + W_OFF
    return dict(bind=bind, **access(t, p, op, mw.rkey, base + addr_off))


def type1_old_key_after_rebind(t):
    p, mw = t.pair(), t.window(e.IBV_MW_TYPE_1)
    first = bind1(t, p, mw, W_OFF, W_LEN, W)
    old = mw.rkey
    second = bind1(t, p, mw, W_OFF, W_LEN, W)
    return dict(bind=[first, second], new_key=mw.rkey != old,
                **access(t, p, e.IBV_WR_RDMA_WRITE, old, t.mr.buf + W_OFF))


def type1_after_unbind(t):
    p, mw = t.pair(), t.window(e.IBV_MW_TYPE_1)
    first = bind1(t, p, mw, W_OFF, W_LEN, W)
    unbind = bind1(t, p, mw, 0, 0, 0)
    return dict(bind=[first, unbind],
                **access(t, p, e.IBV_WR_RDMA_WRITE, mw.rkey, t.mr.buf + W_OFF))


def type1_atomic(t):
    p, mw = t.pair(), t.window(e.IBV_MW_TYPE_1)
    bind = bind1(t, p, mw, W_OFF, W_LEN, e.IBV_ACCESS_REMOTE_ATOMIC)
    return dict(bind=bind, **access(t, p, e.IBV_WR_ATOMIC_CMP_AND_SWP,
                                    mw.rkey, t.mr.buf + W_OFF, n=8))


def mr_rkey_itself(t):
    return access(t, t.pair(), e.IBV_WR_RDMA_WRITE, t.mr.rkey, t.mr.buf)


def type2_write(t):
    p, mw = t.pair(), t.window(e.IBV_MW_TYPE_2)
    bind, rkey = bind2(t, p, mw, W_OFF, W_LEN, W)
    return dict(bind=bind, **access(t, p, e.IBV_WR_RDMA_WRITE, rkey,
                                    t.mr.buf + W_OFF))


def type2_through_another_qp(t):
    bound_to, other = t.pair(), t.pair()
    mw = t.window(e.IBV_MW_TYPE_2)
    bind, rkey = bind2(t, bound_to, mw, W_OFF, W_LEN, W)
    return dict(bind=bind, **access(t, other, e.IBV_WR_RDMA_WRITE, rkey,
                                    t.mr.buf + W_OFF))


def type2_after_local_inv(t):
    p, mw = t.pair(), t.window(e.IBV_MW_TYPE_2)
    bind, rkey = bind2(t, p, mw, W_OFF, W_LEN, W)
    p.tqp.post_send(inv_wr(e.IBV_WR_LOCAL_INV, rkey))
    inv = poll_status(p.tcq)
    return dict(bind=bind, inv=inv, **access(t, p, e.IBV_WR_RDMA_WRITE, rkey,
                                             t.mr.buf + W_OFF))


def type2_after_send_with_inv(t):
    p, mw = t.pair(), t.window(e.IBV_MW_TYPE_2)
    bind, rkey = bind2(t, p, mw, W_OFF, W_LEN, W)
    rbuf = MR(t.pd, 64, e.IBV_ACCESS_LOCAL_WRITE)
    p.tqp.post_recv(RecvWR(num_sge=1, sg=[SGE(rbuf.buf, 64, rbuf.lkey)]))
    p.qp.post_send(inv_wr(e.IBV_WR_SEND_WITH_INV, rkey,
                          SGE(p.local.buf, 16, p.local.lkey)))
    send = poll_status(p.cq)
    n, wcs = p.tcq.poll(1)
    recv = {"status": STATUS.get(wcs[0].status), "with_inv":
            bool(wcs[0].wc_flags & e.IBV_WC_WITH_INV),
            "rkey": wcs[0].imm_data == rkey} if n else None
    return dict(bind=bind, send=send, recv=recv,
                **access(t, p, e.IBV_WR_RDMA_WRITE, rkey, t.mr.buf + W_OFF))


def type2_after_dealloc(t):
    p, mw = t.pair(), MW(t.pd, e.IBV_MW_TYPE_2)
    bind, rkey = bind2(t, p, mw, W_OFF, W_LEN, W)
    mw.close()
    return dict(bind=bind, **access(t, p, e.IBV_WR_RDMA_WRITE, rkey,
                                    t.mr.buf + W_OFF))


def type2_bind_while_bound(t):
    p, mw = t.pair(), t.window(e.IBV_MW_TYPE_2)
    first, _ = bind2(t, p, mw, W_OFF, W_LEN, W)
    second, _ = bind2(t, p, mw, W_OFF, W_LEN, W)
    return {"bind": [first, second]}


def bind_error(t, mw_type, off, length, rights, mr=None):
    p, mw = t.pair(), t.window(mw_type)
    if mw_type == e.IBV_MW_TYPE_1:
        return {"bind": bind1(t, p, mw, off, length, rights, mr)}
    return {"bind": bind2(t, p, mw, off, length, rights, mr)[0]}


def dereg_bound_mr(t):
    p, mw = t.pair(), MW(t.pd, e.IBV_MW_TYPE_1)
    bind = bind1(t, p, mw, W_OFF, W_LEN, W)
    try:
        t.mr.close()
        first = "ok"
    except PyverbsRDMAError as ex:
        first = errno.errorcode.get(ex.error_code, str(ex.error_code))
    mw.close()
    t.mr.close()                     # now it must go
    return {"bind": bind, "dereg_while_bound": first}


def alloc_bad_type(t):
    try:
        MW(t.pd, 3)
        return {"alloc": "ok"}
    except PyverbsRDMAError as ex:
        return {"alloc": errno.errorcode.get(ex.error_code, str(ex.error_code))}


def caps(t):
    a = t.ctx.query_device()
    return {"mem_window": bool(a.device_cap_flags & e.IBV_DEVICE_MEM_WINDOW),
            "type_2b": bool(a.device_cap_flags &
                            e.IBV_DEVICE_MEM_WINDOW_TYPE_2B),
            "max_mw": a.max_mw}


WR, RD = e.IBV_WR_RDMA_WRITE, e.IBV_WR_RDMA_READ
CASES = {
    "type1 write inside": lambda t: type1_access(t, W, WR, 64),
    "type1 read inside": lambda t: type1_access(t, R | W, RD, W_LEN - 64),
    "type1 write past the end": lambda t: type1_access(t, W, WR, W_LEN - 32),
    "type1 write before the start": lambda t: type1_access(t, W, WR, -8),
    "type1 write without the right": lambda t: type1_access(t, R, WR, 0),
    "type1 zero based write": lambda t: type1_access(t, W, WR, 64, True),
    "type1 atomic": type1_atomic,
    "type1 old key after rebind": type1_old_key_after_rebind,
    "type1 after zero-length unbind": type1_after_unbind,
    "mr rkey without remote rights": mr_rkey_itself,
    "type2 write inside": type2_write,
    "type2 through another qp": type2_through_another_qp,
    "type2 after local invalidate": type2_after_local_inv,
    "type2 after send with invalidate": type2_after_send_with_inv,
    "type2 after dealloc": type2_after_dealloc,
    "type2 bind while bound": type2_bind_while_bound,
    "bind mr without mw_bind right": lambda t: bind_error(
        t, e.IBV_MW_TYPE_1, W_OFF, W_LEN, W,
        MR(t.pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE)),
    "bind beyond the mr": lambda t: bind_error(
        t, e.IBV_MW_TYPE_2, SIZE - 64, 128, W),
    "bind write window on read-only mr": lambda t: bind_error(
        t, e.IBV_MW_TYPE_1, W_OFF, W_LEN, W,
        MR(t.pd, SIZE, e.IBV_ACCESS_MW_BIND)),
    "bind type2 zero length": lambda t: bind_error(
        t, e.IBV_MW_TYPE_2, W_OFF, 0, W),
    "dereg mr with bound window": dereg_bound_mr,
    "alloc type 3": alloc_bad_type,
    "device caps": caps,
}


def main(dev, gid_index):
    ctx = Context(name=dev)
    results = []
    for name, run in CASES.items():
        t = Target(ctx, gid_index)
        try:
            res = run(t)
        except PyverbsRDMAError as ex:
            res = {"exception": str(ex)}
        t.close()
        results.append(dict(case=name, **res))
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
