"""Mixed, fully verified verbs traffic for the soak (scripts/soak).

    traffic.py SECONDS [--rc N] [--uc N] [--ud N] [--odp-rc N] [--seed S]

Runs in the guest, in one process that opens both sroce0 and sroce1 (the
RDMA namespace mode is `shared`), so the checker sees both ends' memory
and needs no side channel.  Each flow is one QP on each device (RC, UC
or UD; the requester alternates between the devices), one operation in
flight at a time, each operation a random opcode the QP type allows and
a random size.  Every byte is checked:

* RC: every message must arrive, in order, exactly; WRITE data is read
  back from the target at the requester's completion, READ data against
  the source, atomics against a model of the remote counter.
* UC/UD: a message may be lost (counted only by its absence after
  LOST_AFTER seconds), never corrupted: every message that completes
  must carry exactly its bytes and immediate data.  UC plain WRITEs are
  one packet long, so their target is either untouched or exactly right.

The first --odp-rc RC flows register all their memory on demand
(IBV_ACCESS_ON_DEMAND): nothing pinned, every page faulted in by the
device and taken away again whenever the kernel moves or reclaims it
(guest_runner.py keeps it busy doing so).

Prints one JSON object: per-opcode counts, bytes verified, data errors
(each described), completion errors by status, losses.
"""
import argparse
import collections
import json
import os
import random
import struct
import subprocess
import sys
import time

import pyverbs.enums as e
from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR, MW, MWBindInfo
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import RecvWR, SGE, SendWR

# The devices' addresses: veth0 and veth1 (see README, "The guest runner").
ADDRESSES = ("198.51.100.1", "198.51.100.2")
MAXLEN = 16384        # largest message: 16 packets at path MTU 1024
DATA_SLOTS = 4        # target areas per flow, so an unresolved UC/UD op
RECV_SLOTS = 4        # ...never shares memory with a newer one
GRH = 40
QKEY = 0x11111111
LOST_AFTER = 5.0      # an unconfirmed UC/UD message is lost after this
WRITE_SETTLE = 1.0    # a UC WRITE's target is checked after this
DRAIN_SECONDS = 60
MAGIC = 0x50A4C0DE
PATTERN = random.Random(7).randbytes(MAXLEN + 4096)
REMOTE = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
          e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC |
          e.IBV_ACCESS_MW_BIND)

SEND, SEND_IMM, SEND_INV = "SEND", "SEND_WITH_IMM", "SEND_WITH_INV"
WRITE, WRITE_IMM, READ = "WRITE", "WRITE_WITH_IMM", "READ"
CAS, FAA = "CMP_AND_SWP", "FETCH_AND_ADD"
WR_OPCODE = {SEND: e.IBV_WR_SEND, SEND_IMM: e.IBV_WR_SEND_WITH_IMM,
             SEND_INV: e.IBV_WR_SEND_WITH_INV, WRITE: e.IBV_WR_RDMA_WRITE,
             WRITE_IMM: e.IBV_WR_RDMA_WRITE_WITH_IMM, READ: e.IBV_WR_RDMA_READ,
             CAS: e.IBV_WR_ATOMIC_CMP_AND_SWP, FAA: e.IBV_WR_ATOMIC_FETCH_AND_ADD}
# What each transport may carry, and the sizes it is given.
ANY = [1, 7, 64, 1000, 1024, 1025, 4096, 9000, MAXLEN]
OPS = {
    "RC": {SEND: ANY, SEND_IMM: ANY, SEND_INV: ANY, WRITE: ANY, WRITE_IMM: ANY,
           READ: ANY, CAS: [8], FAA: [8]},
    # Unreliable messages carry a 16-byte header that names them.
    "UC": {SEND: ANY[2:], SEND_IMM: ANY[2:], WRITE: [16, 64, 512, 1024],
           WRITE_IMM: ANY[2:]},
    "UD": {SEND: [16, 64, 512, 1024], SEND_IMM: [16, 64, 512, 1024]},
}
QPT = {"RC": e.IBV_QPT_RC, "UC": e.IBV_QPT_UC, "UD": e.IBV_QPT_UD}
STATUS = {getattr(e, n): n[7:] for n in dir(e)
          if n.startswith("IBV_WC_") and (n.endswith("_ERR") or n == "IBV_WC_SUCCESS")}
KIND_SEND, KIND_BIND, KIND_RECV = 0, 1, 2     # low bits of wr_id


def message(flow, seq, length):
    """The exact bytes of message `seq` of `flow`: a header naming it,
    then a window of a fixed random pattern that depends on both."""
    head = struct.pack("<IIII", flow, seq, length, MAGIC)
    off = (flow * 257 + seq * 31) % 4096
    return (head + PATTERN[off:off + max(0, length - 16)])[:length]


def v2_gid_index(dev, ip):
    want = "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(
        int(x) for x in ip.split("."))
    port = "/sys/class/infiniband/%s/ports/1" % dev
    for name in sorted(os.listdir(port + "/gids"), key=int):
        try:
            with open("%s/gids/%s" % (port, name)) as f:
                gid = f.read().strip()
            with open("%s/gid_attrs/types/%s" % (port, name)) as f:
                kind = f.read()
        except OSError:
            continue
        if gid == want and "v2" in kind:
            return int(name)
    raise SystemExit("no RoCE v2 GID for %s on %s" % (ip, dev))


class Side:
    """One device: its context, PD, one CQ for everything, its GID."""

    def __init__(self, dev, ip):
        self.name = dev
        self.ctx = Context(name=dev)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 4096)
        self.gid_index = v2_gid_index(dev, ip)
        self.gid = self.ctx.query_gid(1, self.gid_index)


class Op:
    __slots__ = ("seq", "name", "length", "slot", "t", "compare", "swap", "expect_old")

    def __init__(self, seq, name, length, slot):
        self.seq, self.name, self.length, self.slot = seq, name, length, slot
        self.t = None


class Flow:
    """A QP on each side; `req` posts, `resp` is the target."""

    def __init__(self, index, kind, req, resp, rng, odp=False):
        self.index, self.kind, self.req, self.resp, self.rng = index, kind, req, resp, rng
        self.odp = odp
        on_demand = e.IBV_ACCESS_ON_DEMAND if odp else 0
        self.seq = 0
        self.inflight = None          # the one posted send-queue op
        self.pending = {}             # seq -> Op awaiting the target's side
        self.free_slots = list(range(DATA_SLOTS))
        self.dead = False
        self.mw, self.mw_rkey, self.want_inv = None, None, False
        self.declared_lost = set()
        self.src = MR(req.pd, MAXLEN, e.IBV_ACCESS_LOCAL_WRITE | on_demand)
        self.dst = MR(resp.pd, DATA_SLOTS * MAXLEN + MAXLEN + 8, REMOTE | on_demand)
        self.rbuf = MR(resp.pd, RECV_SLOTS * (MAXLEN + GRH),
                       e.IBV_ACCESS_LOCAL_WRITE | on_demand)
        self.read_src_off = DATA_SLOTS * MAXLEN
        self.atomic_off = self.read_src_off + MAXLEN
        self.dst.write(message(index, 0xFFFFFFFF, MAXLEN), MAXLEN, self.read_src_off)
        self.counter = rng.getrandbits(64)
        self.dst.write(struct.pack("<Q", self.counter), 8, self.atomic_off)
        self.sqp = self._qp(req)
        self.rqp = self._qp(resp)
        if kind == "UD":
            gr = GlobalRoute(dgid=resp.gid, sgid_index=req.gid_index)
            self.ah = AH(req.pd, attr=AHAttr(port_num=1, is_global=1, gr=gr))
        else:
            self._connect(self.sqp, req, resp, self.rqp.qp_num)
            self._connect(self.rqp, resp, req, self.sqp.qp_num)
        if kind == "RC":
            self.mw = MW(resp.pd, e.IBV_MW_TYPE_2)
        for r in range(RECV_SLOTS):
            self._post_recv(r)

    def _qp(self, side):
        cap = QPCap(max_send_wr=8, max_recv_wr=RECV_SLOTS, max_send_sge=1, max_recv_sge=1)
        init = QPInitAttr(qp_type=QPT[self.kind], scq=side.cq, rcq=side.cq, cap=cap)
        attr = QPAttr(port_num=1)
        if self.kind == "UD":
            attr.qkey = QKEY
        else:
            attr.qp_access_flags = REMOTE & ~e.IBV_ACCESS_MW_BIND \
                if self.kind == "RC" else e.IBV_ACCESS_REMOTE_WRITE
        qp = QP(side.pd, init, attr)
        if self.kind == "UD" and qp.qp_state != e.IBV_QPS_RTS:
            qp.to_rts(attr)
        return qp

    def _connect(self, qp, side, other, remote_qpn):
        attr = QPAttr(port_num=1)
        attr.path_mtu = e.IBV_MTU_1024
        attr.dest_qp_num = remote_qpn
        attr.rq_psn = attr.sq_psn = 0
        attr.max_dest_rd_atomic = attr.max_rd_atomic = 4
        attr.min_rnr_timer = 1
        attr.timeout = 14           # ~67 ms
        attr.retry_cnt = 7
        attr.rnr_retry = 7          # RNR: retry for ever
        gr = GlobalRoute(dgid=other.gid, sgid_index=side.gid_index)
        attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr)
        qp.to_rts(attr)

    def wr_id(self, kind, extra=0):
        return (self.index << 8) | (extra << 2) | kind

    def _post_recv(self, r):
        size = MAXLEN + GRH
        sge = SGE(self.rbuf.buf + r * size, size, self.rbuf.lkey)
        self.rqp.post_recv(RecvWR(wr_id=self.wr_id(KIND_RECV, r), num_sge=1, sg=[sge]))


class Soak:
    def __init__(self, args):
        self.rng = random.Random(args.seed)
        self.sides = [Side(dev, ip) for dev, ip in zip(args.devices.split(","), ADDRESSES)]
        kinds = ["RC"] * args.rc + ["UC"] * args.uc + ["UD"] * args.ud
        self.flows = []
        for i, kind in enumerate(kinds):
            req, resp = self.sides[i % 2], self.sides[1 - i % 2]
            self.flows.append(Flow(i, kind, req, resp, self.rng,
                                   odp=kind == "RC" and i < args.odp_rc))
        self.ops = collections.Counter()          # "RC SEND" -> posted
        self.done = collections.Counter()         # ... -> verified complete
        self.lost = collections.Counter()
        self.late = collections.Counter()
        self.bytes_verified = 0
        self.errors = []                          # data errors, described
        self.data_errors = 0
        self.wc_errors = collections.Counter()    # "RC RETRY_EXC" -> n
        self.wc_error_samples = []                # which flow, what op, when
        self.start = time.monotonic()

    # -- checks ------------------------------------------------------------
    def data_error(self, flow, what):
        self.data_errors += 1
        if len(self.errors) < 50:
            self.errors.append("flow %d (%s): %s" % (flow.index, flow.kind, what))

    def verified(self, flow, op, nbytes):
        self.done["%s %s" % (flow.kind, op.name)] += 1
        self.bytes_verified += nbytes

    def check_bytes(self, flow, op, got, want):
        if got == want:
            self.verified(flow, op, len(want))
            return True
        first = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]),
                     min(len(got), len(want)))
        self.data_error(flow, "%s seq %d len %d: wrong data from byte %d"
                        % (op.name, op.seq, op.length, first))
        return False

    # -- posting -----------------------------------------------------------
    def post(self, flow, now):
        if flow.want_inv and flow.mw_rkey is None:
            return self.bind(flow)
        if len(flow.pending) >= RECV_SLOTS:
            return
        if flow.want_inv:
            name = SEND_INV
        else:
            name = self.rng.choice(list(OPS[flow.kind]))
            if name == SEND_INV:
                flow.want_inv = True
                return self.bind(flow)
        slot = None
        if name in (WRITE, WRITE_IMM):
            if not flow.free_slots:
                return
            slot = flow.free_slots.pop()
        op = Op(flow.seq, name, self.rng.choice(OPS[flow.kind][name]), slot)
        flow.seq += 1
        if self.settled_by_target(flow, name):
            # Before posting: the target's completion may be polled first.
            flow.pending[op.seq] = op
        src = flow.src
        if name in (CAS, FAA, READ):
            src.write(bytes(op.length), op.length, 0)   # a no-op would show
        else:
            src.write(message(flow.index, op.seq, op.length), op.length, 0)
        wr = SendWR(wr_id=flow.wr_id(KIND_SEND), opcode=WR_OPCODE[name], num_sge=1,
                    sg=[SGE(src.buf, op.length, src.lkey)],
                    send_flags=e.IBV_SEND_SIGNALED)
        if name in (WRITE, WRITE_IMM):
            wr.set_wr_rdma(flow.dst.rkey, flow.dst.buf + op.slot * MAXLEN)
        elif name == READ:
            wr.set_wr_rdma(flow.dst.rkey, flow.dst.buf + flow.read_src_off)
        elif name == CAS:
            op.compare = flow.counter if self.rng.random() < 0.5 else flow.counter ^ 1
            op.swap = self.rng.getrandbits(64)
            wr.set_wr_atomic(flow.dst.rkey, flow.dst.buf + flow.atomic_off,
                             op.compare, op.swap)
        elif name == FAA:
            op.compare = self.rng.getrandbits(64)
            wr.set_wr_atomic(flow.dst.rkey, flow.dst.buf + flow.atomic_off,
                             op.compare, 0)
        if name in (SEND_IMM, WRITE_IMM):
            wr.imm_data = op.seq ^ 0xA5A5A5A5
        elif name == SEND_INV:
            # The rkey to invalidate; the window is spent from here on.
            wr.imm_data = op.compare = flow.mw_rkey
            flow.mw_rkey, flow.want_inv = None, False
        if flow.kind == "UD":
            wr.set_wr_ud(flow.ah, flow.rqp.qp_num, QKEY)
        flow.sqp.post_send(wr)
        flow.inflight = op
        self.ops["%s %s" % (flow.kind, name)] += 1

    def bind(self, flow):
        wr = SendWR(wr_id=flow.wr_id(KIND_BIND), opcode=e.IBV_WR_BIND_MW,
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_bind_wr(flow.mw, MWBindInfo(flow.dst, flow.dst.buf, MAXLEN,
                                           e.IBV_ACCESS_REMOTE_WRITE))
        flow.rqp.post_send(wr)
        flow.inflight = Op(-1, "BIND_MW", 0, None)
        flow.inflight.compare = wr.rkey
        self.ops["RC BIND_MW"] += 1

    # -- completions -------------------------------------------------------
    def on_completion(self, wc, now):
        flow = self.flows[wc.wr_id >> 8]
        kind, extra = wc.wr_id & 3, (wc.wr_id >> 2) & 0x3F
        if wc.status != e.IBV_WC_SUCCESS:
            # Name ODP flows apart: their failures have causes of their own.
            kind = flow.kind + (" ODP" if flow.odp else "")
            status = STATUS.get(wc.status, wc.status)
            self.wc_errors["%s %s" % (kind, status)] += 1
            op = flow.inflight
            self.wc_error_samples.append(
                "%.1f s: flow %d (%s, QP %d) %s: %s %d bytes" % (
                    now - self.start, flow.index, kind, flow.sqp.qp_num, status,
                    op.name if op else "?", op.length if op else 0))
            flow.dead = True        # its QP is in error; the flow stops
            return
        if kind == KIND_RECV:
            return self.on_recv(flow, wc, extra)
        op, flow.inflight = flow.inflight, None
        if kind == KIND_BIND:
            flow.mw_rkey = op.compare
            self.done["RC BIND_MW"] += 1
            return
        op.t = now                      # UC/UD: from now it may be lost
        name = op.name
        if self.settled_by_target(flow, name):
            return
        if name == WRITE:   # RC: placed before it was acknowledged
            self.check_bytes(flow, op, flow.dst.read(op.length, op.slot * MAXLEN),
                             message(flow.index, op.seq, op.length))
            flow.dst.write(bytes(op.length), op.length, op.slot * MAXLEN)
        elif name == READ:
            self.check_bytes(flow, op, flow.src.read(op.length, 0),
                             message(flow.index, 0xFFFFFFFF, MAXLEN)[:op.length])
        else:
            self.on_atomic(flow, op)
        if op.slot is not None:
            flow.free_slots.append(op.slot)

    @staticmethod
    def settled_by_target(flow, name):
        return name in (SEND, SEND_IMM, SEND_INV, WRITE_IMM) or (
            name == WRITE and flow.kind == "UC")

    def on_atomic(self, flow, op):
        old = struct.unpack("<Q", flow.src.read(8, 0))[0]
        if old != flow.counter:
            self.data_error(flow, "%s seq %d returned %#x, model %#x"
                            % (op.name, op.seq, old, flow.counter))
            flow.counter = old          # resync, so one error counts once
        if op.name == FAA:
            flow.counter = (flow.counter + op.compare) & (2**64 - 1)
        elif op.compare == flow.counter:
            flow.counter = op.swap
        now = struct.unpack("<Q", flow.dst.read(8, flow.atomic_off))[0]
        if now != flow.counter:
            self.data_error(flow, "%s seq %d left %#x, model %#x"
                            % (op.name, op.seq, now, flow.counter))
            flow.counter = now
        else:
            self.verified(flow, op, 8)

    def on_recv(self, flow, wc, r):
        base = r * (MAXLEN + GRH) + (GRH if flow.kind == "UD" else 0)
        n = wc.byte_len - (GRH if flow.kind == "UD" else 0)
        is_write_imm = wc.opcode == e.IBV_WC_RECV_RDMA_WITH_IMM
        if is_write_imm:
            seq = wc.imm_data ^ 0xA5A5A5A5
        elif flow.kind == "RC":     # in order: the oldest pending one
            seq = min(flow.pending) if flow.pending else -1
        else:                       # named by its header
            head = flow.rbuf.read(min(n, 16), base)
            seq = struct.unpack("<I", head[4:8])[0] if n >= 16 else -1
        op = flow.pending.pop(seq, None)
        if op is None:
            if seq in flow.declared_lost:
                self.late["%s" % flow.kind] += 1
            else:
                self.data_error(flow, "unexpected message (seq %d, %d bytes, opcode %s)"
                                % (seq, n, wc.opcode))
        elif flow.kind == "RC" and seq != min([seq] + list(flow.pending)):
            self.data_error(flow, "RC message seq %d arrived out of order" % seq)
        else:
            self.settle_recv(flow, op, wc, base, n)
        flow.rbuf.write(bytes(max(n, 0)), max(n, 0), base)
        if op is not None and op.slot is not None:
            flow.free_slots.append(op.slot)
        flow._post_recv(r)

    def settle_recv(self, flow, op, wc, base, n):
        imm = wc.imm_data if wc.wc_flags & e.IBV_WC_WITH_IMM else None
        inv = wc.wc_flags & e.IBV_WC_WITH_INV
        want_imm = op.seq ^ 0xA5A5A5A5 if op.name in (SEND_IMM, WRITE_IMM) else None
        if op.name == WRITE_IMM:
            ok = wc.opcode == e.IBV_WC_RECV_RDMA_WITH_IMM and imm == want_imm
            got = flow.dst.read(op.length, op.slot * MAXLEN)
            flow.dst.write(bytes(op.length), op.length, op.slot * MAXLEN)
        else:
            ok = wc.opcode == e.IBV_WC_RECV and n == op.length and imm == want_imm
            got = flow.rbuf.read(max(n, 0), base)
            if op.name == SEND_INV:
                ok = ok and inv and wc.imm_data == op.compare
            elif inv:
                ok = False
        if not ok:
            self.data_error(flow, "%s seq %d: wrong completion (opcode %s, %d bytes, "
                            "flags %#x, imm %s)" % (op.name, op.seq, wc.opcode, n,
                                                     wc.wc_flags, wc.imm_data))
        else:
            self.check_bytes(flow, op, got, message(flow.index, op.seq, op.length))

    def expire(self, flow, now, force=False):
        """UC/UD messages unconfirmed for LOST_AFTER seconds are lost; a
        UC WRITE's target must then be untouched or exactly right."""
        for seq, op in list(flow.pending.items()):
            if flow.kind == "RC" or op.t is None and not force:
                continue
            wait = WRITE_SETTLE if op.name == WRITE else LOST_AFTER
            if not force and now - op.t < wait:
                continue
            del flow.pending[seq]
            flow.declared_lost.add(seq)
            if op.name == WRITE:
                got = flow.dst.read(op.length, op.slot * MAXLEN)
                if got == bytes(op.length):
                    self.lost["UC WRITE"] += 1
                elif self.check_bytes(flow, op, got, message(flow.index, op.seq, op.length)):
                    flow.declared_lost.discard(seq)
                flow.dst.write(bytes(op.length), op.length, op.slot * MAXLEN)
            else:
                self.lost["%s %s" % (flow.kind, op.name)] += 1
                if op.name == WRITE_IMM:
                    flow.dst.write(bytes(op.length), op.length, op.slot * MAXLEN)
            if op.slot is not None:
                flow.free_slots.append(op.slot)

    # -- the loop ------------------------------------------------------------
    def poll(self, now):
        got = 0
        for side in self.sides:
            n, wcs = side.cq.poll(256)
            got += n
            for wc in wcs:
                self.on_completion(wc, now)
        return got

    def run(self, seconds):
        start = self.start = time.monotonic()
        end = start + seconds
        next_expire = start + 1
        while True:
            now = time.monotonic()
            if now < end:
                for flow in self.flows:
                    if flow.inflight is None and not flow.dead:
                        self.post(flow, now)
            if now >= next_expire:
                for flow in self.flows:
                    self.expire(flow, now)
                next_expire = now + 1
            got = self.poll(now)
            if now >= end:
                busy = [f for f in self.flows if not f.dead and (f.inflight or f.pending)]
                if not busy or now > end + DRAIN_SECONDS:
                    break
            if not got:
                time.sleep(0.0005)
        for flow in self.flows:
            self.expire(flow, time.monotonic(), force=True)
        stuck = {"flow %d %s %s seq %d len %d, QP %d on %s" % (
            f.index, f.kind, f.inflight.name, f.inflight.seq, f.inflight.length,
            f.sqp.qp_num, f.req.name): "in flight"
            for f in self.flows if f.inflight and not f.dead}
        if stuck:   # what the kernel thinks of them, while they still exist
            sys.stderr.write(subprocess.run(
                "rdma resource show qp -dd; rdma statistic show", shell=True,
                capture_output=True, text=True).stdout)
        rc_unreceived = sum(len(f.pending) for f in self.flows if f.kind == "RC")
        return {
            "seconds": round(time.monotonic() - start, 1),
            "flows": collections.Counter(f.kind for f in self.flows),
            "qps": 2 * len(self.flows),
            "odp_flows": sum(f.odp for f in self.flows),
            "posted": dict(sorted(self.ops.items())),
            "verified": dict(sorted(self.done.items())),
            "lost": dict(sorted(self.lost.items())),
            "late": dict(self.late),
            "bytes_verified": self.bytes_verified,
            "data_errors": self.data_errors + rc_unreceived,
            "rc_unreceived": rc_unreceived,
            "error_samples": self.errors,
            "completion_errors": dict(self.wc_errors),
            "completion_error_samples": self.wc_error_samples,
            "dead_flows": sum(f.dead for f in self.flows),
            "stuck": stuck,
        }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("seconds", type=float)
    p.add_argument("--rc", type=int, default=12)
    p.add_argument("--uc", type=int, default=10)
    p.add_argument("--ud", type=int, default=10)
    p.add_argument("--odp-rc", type=int, default=4,
                   help="of the RC flows, how many use on-demand paging (0 for rxe)")
    p.add_argument("--seed", type=int, default=int(time.time()))
    p.add_argument("--devices", default="sroce0,sroce1",
                   help="the devices on veth0 and veth1 (e.g. rxe0,sroce1)")
    args = p.parse_args()
    soak = Soak(args)
    result = soak.run(args.seconds)
    result["seed"] = args.seed
    json.dump(result, sys.stdout)
    print()
    return 1 if result["data_errors"] or result["stuck"] else 0


if __name__ == "__main__":
    sys.exit(main())
