"""Guest-side pyverbs program for tests/guest/test_isolation.py.

    isolation_app.py access DEV GID_INDEX      remote access checks -> JSON
    isolation_app.py rkeys DEV N                N registrations' rkeys -> JSON
    isolation_app.py holder DEV STOPFILE        owns a QP/CQ/MR, prints them,
                                                waits for STOPFILE
    isolation_app.py intruder DEV PID LKEY ADDR GID_INDEX
                                                tries to reach PID's objects -> JSON
    isolation_app.py memlock DEV LIMIT_KIB      CQ rings under RLIMIT_MEMLOCK -> JSON

Every remote access case runs on a fresh pair of RC QPs in loopback on
one device: the requester in its own PD, the target QP in another, so
that a failed access (which moves both QPs to the error state) cannot
spoil the next case.
"""
import errno
import json
import mmap
import os
import resource
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, SendWR

SIZE = 4096
TARGET_FILL = b"\x5a"
SOURCE_FILL = b"\xa5"
REMOTE_ALL = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ |
              e.IBV_ACCESS_REMOTE_WRITE | e.IBV_ACCESS_REMOTE_ATOMIC)

STATUS = {getattr(e, n): n for n in dir(e) if n.startswith("IBV_WC_") and
          n.endswith(("_ERR", "SUCCESS"))}


class Pair:
    """Requester QP (its own PD) connected in loopback to a target QP."""

    def __init__(self, ctx, gid_index, target_pd, target_access=REMOTE_ALL):
        self.ctx = ctx
        self.pd = PD(ctx)
        self.cq = CQ(ctx, 16)
        self.tcq = CQ(ctx, 16)
        self.qp = self._qp(self.pd, self.cq, 0)
        self.tqp = self._qp(target_pd, self.tcq, target_access)
        self._connect(self.qp, self.tqp.qp_num, gid_index)
        self._connect(self.tqp, self.qp.qp_num, gid_index)

    @staticmethod
    def _qp(pd, cq, access):
        """An RC QP in INIT; the access flags are set on that transition."""
        cap = QPCap(max_send_wr=4, max_recv_wr=4, max_send_sge=1,
                    max_recv_sge=1)
        init = QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap)
        attr = QPAttr(port_num=1)
        attr.qp_access_flags = access
        return QP(pd, init, attr)

    def _connect(self, qp, remote_qpn, gid_index):
        gr = GlobalRoute(dgid=self.ctx.query_gid(1, gid_index),
                         sgid_index=gid_index)
        attr = QPAttr(port_num=1)
        attr.path_mtu = e.IBV_MTU_1024
        attr.dest_qp_num = remote_qpn
        attr.rq_psn = 0
        attr.sq_psn = 0
        attr.max_dest_rd_atomic = 4
        attr.max_rd_atomic = 4
        attr.min_rnr_timer = 1
        attr.timeout = 12           # ~16 ms: a silent drop shows up fast
        attr.retry_cnt = 2
        attr.rnr_retry = 2
        attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr)
        qp.to_rts(attr)

    def post(self, opcode, local_mr, length, rkey, addr):
        sge = SGE(local_mr.buf, length, local_mr.lkey)
        wr = SendWR(opcode=opcode, num_sge=1, sg=[sge])
        if opcode in (e.IBV_WR_ATOMIC_CMP_AND_SWP, e.IBV_WR_ATOMIC_FETCH_AND_ADD):
            wr.set_wr_atomic(rkey=rkey, addr=addr, compare_add=0x5a5a5a5a5a5a5a5a,
                             swap=0x1111111111111111)
        else:
            wr.set_wr_rdma(rkey, addr)
        self.qp.post_send(wr)
        return poll_status(self.cq)


def poll_status(cq, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        n, wcs = cq.poll(1)
        if n:
            return STATUS.get(wcs[0].status, str(wcs[0].status))
        time.sleep(0.001)
    return "no completion"


def access_cases(mr, other_pd_mr, no_remote_mr, read_only_mr):
    """(name, opcode, length, rkey, addr) of every case; the first three
    are controls that must succeed."""
    W, R = e.IBV_WR_RDMA_WRITE, e.IBV_WR_RDMA_READ
    CAS, FAA = e.IBV_WR_ATOMIC_CMP_AND_SWP, e.IBV_WR_ATOMIC_FETCH_AND_ADD
    base, rkey = mr.buf, mr.rkey
    cases = [("ok write", W, 64, rkey, base), ("ok read", R, 64, rkey, base),
             ("ok atomic", CAS, 8, rkey, base),
             # A zero-length READ or WRITE accesses no memory, so IBTA has
             # the responder skip the R_Key check (proto/access.h).
             ("ok zero-length write, no key", W, 0, 0, 1 << 40),
             ("ok zero-length read, no key", R, 0, rkey ^ 0x100, base - 8)]
    for name, op, n in (("write", W, 64), ("read", R, 64), ("cmp_swap", CAS, 8),
                        ("fetch_add", FAA, 8)):
        cases += [
            (name + " wrong rkey variant", op, n, rkey ^ 0x01, base),
            (name + " wrong rkey index", op, n, rkey ^ 0x100, base),
            (name + " zero rkey", op, n, 0, base),
            (name + " before start", op, n, rkey, base - 8),
            (name + " past end", op, n, rkey, base + SIZE - n + 8),
            (name + " far past end", op, n, rkey, base + (1 << 40)),
            (name + " 64-bit wrap", op, n, rkey, (1 << 64) - 8),
            (name + " MR of another PD", op, n, other_pd_mr.rkey, other_pd_mr.buf),
            (name + " MR without remote rights", op, n, no_remote_mr.rkey,
             no_remote_mr.buf),
        ]
        if op != R:
            cases.append((name + " read-only MR", op, n, read_only_mr.rkey,
                          read_only_mr.buf))
    cases.append(("write read-only MR at its end", W, 64, read_only_mr.rkey,
                  read_only_mr.buf + SIZE - 64))
    cases.append(("cmp_swap misaligned", CAS, 8, rkey, base + 4))
    return cases


def cmd_access(dev, gid_index):
    ctx = Context(name=dev)
    tpd = PD(ctx)                    # the target QP's PD
    mr = MR(tpd, SIZE, REMOTE_ALL)
    other_pd_mr = MR(PD(ctx), SIZE, REMOTE_ALL)
    no_remote_mr = MR(tpd, SIZE, e.IBV_ACCESS_LOCAL_WRITE)
    read_only_mr = MR(tpd, SIZE, e.IBV_ACCESS_REMOTE_READ)
    targets = (mr, other_pd_mr, no_remote_mr, read_only_mr)
    results = []
    for name, op, n, rkey, addr in access_cases(*targets):
        for t in targets:
            t.write(TARGET_FILL * SIZE, SIZE)
        pair = Pair(ctx, gid_index, tpd)
        local = MR(pair.pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE)
        local.write(SOURCE_FILL * SIZE, SIZE)
        status = pair.post(op, local, n, rkey & 0xffffffff, addr % (1 << 64))
        touched = [i for i, t in enumerate(targets)
                   if t.read(SIZE, 0) != TARGET_FILL * SIZE]
        results.append({"case": name, "status": status, "touched": touched,
                        "target_wcs": pair.tcq.poll(4)[0]})
    # Also a QP that grants no remote access at all, on a good MR.
    pair = Pair(ctx, gid_index, tpd, target_access=e.IBV_ACCESS_LOCAL_WRITE)
    for t in targets:
        t.write(TARGET_FILL * SIZE, SIZE)
    local = MR(pair.pd, SIZE, e.IBV_ACCESS_LOCAL_WRITE)
    status = pair.post(e.IBV_WR_RDMA_WRITE, local, 64, mr.rkey, mr.buf)
    results.append({"case": "write to a QP without remote write",
                    "status": status,
                    "touched": [0] if mr.read(SIZE, 0) != TARGET_FILL * SIZE else [],
                    "target_wcs": 0})
    print(json.dumps(results))


def cmd_rkeys(dev, n):
    ctx = Context(name=dev)
    pd = PD(ctx)
    keep, keys = [], []
    for i in range(n):
        mr = MR(pd, SIZE, REMOTE_ALL)
        keys.append(mr.rkey)
        if i % 2:
            mr.close()               # re-registration after a free slot too
        else:
            keep.append(mr)
    print(json.dumps(keys))


def cmd_holder(dev, stopfile):
    ctx = Context(name=dev)
    pd = PD(ctx)
    cq = CQ(ctx, 16)
    qp = Pair._qp(pd, cq, REMOTE_ALL)
    mr = MR(pd, SIZE, REMOTE_ALL)
    mr.write(TARGET_FILL * SIZE, SIZE)
    print(json.dumps({"pid": os.getpid(), "qpn": qp.qp_num, "lkey": mr.lkey,
                      "addr": mr.buf}), flush=True)
    while not os.path.exists(stopfile):
        time.sleep(0.05)
    ok = mr.read(SIZE, 0) == TARGET_FILL * SIZE
    print(json.dumps({"untouched": ok}), flush=True)


def uverbs_maps(pid):
    """(offset, length) of every uverbs mapping of process PID."""
    out = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and fields[5].startswith("/dev/infiniband/uverbs"):
                lo, hi = (int(x, 16) for x in fields[0].split("-"))
                out.append((int(fields[2], 16), hi - lo))
    return out


def open_files():
    """(fd, path) of this process's open files."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            out.append((int(fd), os.readlink("/proc/self/fd/" + fd)))
        except OSError:
            pass                     # the directory listing's own fd
    return out


def cmd_intruder(dev, pid, lkey, addr, gid_index):
    ctx = Context(name=dev)
    # mmap offsets name objects of the caller's own context: an offset the
    # victim and we both map (each context's SQ mark page is its first)
    # names our own page here, so it says nothing about isolation.
    own = {offset for offset, _ in uverbs_maps(os.getpid())}
    victim_maps = [(o, n) for o, n in uverbs_maps(pid) if o not in own]
    cmd_fd = [fd for fd, path in open_files()
              if path.startswith("/dev/infiniband/uverbs")]
    refused, mapped = [], []
    for fd in cmd_fd:
        for offset, length in victim_maps:
            try:
                m = mmap.mmap(fd, length, offset=offset)
                m.close()
                mapped.append(offset)
            except OSError as ex:
                refused.append(errno.errorcode.get(ex.errno, str(ex.errno)))
    # The victim's lkey in our own send: the MR is not in our PD.
    tpd = PD(ctx)
    pair = Pair(ctx, gid_index, tpd)
    sink = MR(tpd, SIZE, REMOTE_ALL)
    wr = SendWR(opcode=e.IBV_WR_RDMA_WRITE, num_sge=1, sg=[SGE(addr, 64, lkey)])
    wr.set_wr_rdma(sink.rkey, sink.buf)
    try:
        pair.qp.post_send(wr)
        status = poll_status(pair.cq)
    except PyverbsRDMAError as ex:
        status = "post refused: %s" % ex
    print(json.dumps({"victim_maps": len(victim_maps), "cmd_fds": len(cmd_fd),
                      "mapped": mapped, "refused": refused,
                      "foreign_lkey_status": status}))


def vm_pin_kib():
    """The process's pinned pages (mm->pinned_vm) as /proc shows them."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmPin:"):
                return int(line.split()[1])
    raise RuntimeError("no VmPin in /proc/self/status")


def try_cq(ctx, cqe):
    """(CQ, None) or (None, errno name)."""
    try:
        return CQ(ctx, cqe), None
    except PyverbsRDMAError as err:
        return None, errno.errorcode.get(err.error_code, str(err.error_code))


def cmd_memlock(dev, limit_kib):
    """Creates CQs under RLIMIT_MEMLOCK = limit_kib until one is refused,
    gives one back and tries again; reports what the rings were charged."""
    resource.setrlimit(resource.RLIMIT_MEMLOCK, (limit_kib << 10, limit_kib << 10))
    ctx = Context(name=dev)
    base = vm_pin_kib()
    small, _ = try_cq(ctx, 4095)
    one = vm_pin_kib() - base
    big, big_err = try_cq(ctx, 65535)          # 16 times the small one's ring
    if big:
        big.close()
    cqs, refused = [small], None
    for _ in range(256):                       # bounded: the limit ends it far sooner
        cq, refused = try_cq(ctx, 4095)
        if not cq:
            break
        cqs.append(cq)
    at_refusal = vm_pin_kib() - base
    cqs.pop().close()
    again, again_err = try_cq(ctx, 4095)
    if again:
        cqs.append(again)
    for cq in cqs:
        cq.close()
    print(json.dumps({"one_kib": one, "big": big_err or "created",
                      "created": len(cqs), "refused": refused,
                      "pinned_at_refusal_kib": at_refusal,
                      "again": again_err or "created",
                      "pinned_after_close_kib": vm_pin_kib() - base}))


def main(argv):
    cmd, dev = argv[1], argv[2]
    if cmd == "access":
        cmd_access(dev, int(argv[3]))
    elif cmd == "rkeys":
        cmd_rkeys(dev, int(argv[3]))
    elif cmd == "holder":
        cmd_holder(dev, argv[3])
    elif cmd == "memlock":
        cmd_memlock(dev, int(argv[3]))
    elif cmd == "intruder":
        cmd_intruder(dev, int(argv[3]), int(argv[4]), int(argv[5]), int(argv[6]))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
