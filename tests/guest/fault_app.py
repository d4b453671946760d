"""Verbs workloads for tests/guest/test_fault_injection.py, each on QPs in
loopback on one device, with the fault rule installed once the QPs exist
(so it can name their QP numbers) and removed afterwards.

    fault_app.py rc DEV GID OP ITERS SIZE [RULE [RNR_RETRY]]
        OP is write, read or send; each iteration moves SIZE bytes of a
        fresh pattern and compares them at the far end.  -> JSON: verified
        iterations, the first failed completion, the rule's listing
    fault_app.py rc_flap DEV GID ITERS SIZE FLAP_MS AT
        RDMA WRITEs as rc does, with `flap FLAP_MS` written to the port's
        link file just before iteration AT posts: that WRITE's first
        packets meet the downed port whatever the machine's speed.
    fault_app.py ud DEV GID COUNT [RULE]
        COUNT numbered UD sends alternately to receivers A and B.  -> JSON:
        the numbers each received, the rule's listing
    fault_app.py late_recv REQ_DEV REQ_GID RESP_DEV RESP_GID COUNT SIZE LATE_MS [RULE]
        a receiver that falls behind: COUNT SENDs of SIZE bytes posted at
        once, the receives only LATE_MS later and then one per millisecond,
        RNR retries infinite; RULE, if given, on REQ_DEV ({qpn}: the
        requester's QP).  -> JSON: sends and receives that completed
        successfully, the first failed completion, whether all data matched
        (and, with RULE, the rule's listing)
    fault_app.py events DEV
        prints the device's async events as they come, until a port that
        went down is back up (run it under timeout(1))

In RULE, {qpn} stands for the target QP's number (the RC target, UD
receiver A).
"""
import json
import sys
import time

try:
    import pyverbs.enums as e
except ImportError:
    # rdma-core 65 (sid) has only libibverbs_enums, whose names live in
    # one enum class each (ibv_access_flags.IBV_ACCESS_LOCAL_WRITE): the
    # same flat names as before, from there.
    import enum
    import types
    import pyverbs.libibverbs_enums as _enums
    e = types.SimpleNamespace(**{
        m.name: m for cls in vars(_enums).values()
        if isinstance(cls, type) and issubclass(cls, enum.Enum) for m in cls})
from pyverbs.addr import AH, AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import RecvWR, SGE, SendWR

FAULTS = "/sys/kernel/debug/sroce/%s/faults"
LINK = "/sys/kernel/debug/sroce/%s/link"
REMOTE_ALL = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_READ |
              e.IBV_ACCESS_REMOTE_WRITE)
STATUS = {getattr(e, n): n for n in dir(e) if n.startswith("IBV_WC_") and
          n.endswith(("_ERR", "SUCCESS"))}
EVENTS = {getattr(e, n): n for n in dir(e) if n.startswith("IBV_EVENT_")}
QKEY = 0x11111111
GRH = 40


def install(dev, rule, qpn):
    if rule:
        with open(FAULTS % dev, "w") as f:
            f.write(rule.replace("{qpn}", str(qpn)) + "\n")


def listing_and_clear(dev, rule, *qps):
    """The rule's listing, read once QPS (every source of traffic the rule
    can match) are destroyed: a retransmitted request's duplicate ACK can
    still be on its way after the last completion, and a drop counted
    after the listing was read would make listing and port counters
    disagree by one (CI at d711ed0: fault_drop 238, injected 237)."""
    for qp in qps:
        qp.close()
    if not rule:
        return ""
    with open(FAULTS % dev) as f:
        text = f.read()
    with open(FAULTS % dev, "w") as f:
        f.write("clear\n")
    return text


def wait_wc(cq, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        n, wcs = cq.poll(1)
        if n:
            return wcs[0]
        time.sleep(0.0005)
    return None


def status_of(wc):
    return "no completion" if wc is None else STATUS.get(wc.status, str(wc.status))


# Byte j of message i is (i * 7 + j * 13 + 1) mod 256.  Built from one
# 256-byte period with bytes.translate, not byte by byte: a generator over
# 64 KiB took ~0.1 s under TCG, most of a 300-message verified run.
PERIOD = bytes((j * 13) & 0xff for j in range(256))


def pattern(i, size):
    shift = (i * 7 + 1) & 0xff
    add = bytes((k + shift) & 0xff for k in range(256))
    return (PERIOD * (size // 256 + 1))[:size].translate(add)


def rc_qp(pd, cq, depth):
    cap = QPCap(max_send_wr=depth, max_recv_wr=depth, max_send_sge=1,
                max_recv_sge=1)
    attr = QPAttr(port_num=1)
    attr.qp_access_flags = REMOTE_ALL
    return QP(pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap), attr)


def rc_connect(ctx, qp, remote_qpn, gid_index, rnr_retry, dgid=None):
    attr = QPAttr(port_num=1)
    attr.path_mtu = e.IBV_MTU_1024
    attr.dest_qp_num = remote_qpn
    attr.rq_psn = 0
    attr.sq_psn = 0
    attr.max_dest_rd_atomic = 4
    attr.max_rd_atomic = 4
    attr.min_rnr_timer = 1          # 0.01 ms: RNR retries come quickly
    attr.timeout = 14               # ~67 ms
    attr.retry_cnt = 7
    attr.rnr_retry = rnr_retry
    gr = GlobalRoute(dgid=dgid or ctx.query_gid(1, gid_index),
                     sgid_index=gid_index)
    attr.ah_attr = AHAttr(port_num=1, is_global=1, gr=gr)
    qp.to_rts(attr)


def cmd_rc(dev, gid_index, op, iters, size, rule="", rnr_retry=7, flap=None):
    ctx = Context(name=dev)
    pd = PD(ctx)
    cq, tcq = CQ(ctx, 8), CQ(ctx, 8)
    qp, tqp = rc_qp(pd, cq, 4), rc_qp(pd, tcq, 4)
    rc_connect(ctx, qp, tqp.qp_num, gid_index, rnr_retry)
    rc_connect(ctx, tqp, qp.qp_num, gid_index, rnr_retry)
    local = MR(pd, size, REMOTE_ALL)
    remote = MR(pd, size, REMOTE_ALL)
    install(dev, rule, tqp.qp_num)
    verified, failed = 0, None
    for i in range(iters):
        data = pattern(i, size)
        # The side the data starts on gets the pattern, the other zeros.
        src, dst = (remote, local) if op == "read" else (local, remote)
        src.write(data, size)
        dst.write(bytes(size), size)
        wr = SendWR(opcode={"write": e.IBV_WR_RDMA_WRITE,
                            "read": e.IBV_WR_RDMA_READ,
                            "send": e.IBV_WR_SEND}[op],
                    num_sge=1, sg=[SGE(local.buf, size, local.lkey)])
        if op == "send":
            tqp.post_recv(RecvWR(num_sge=1, sg=[SGE(remote.buf, size, remote.lkey)]))
        else:
            wr.set_wr_rdma(remote.rkey, remote.buf)
        if flap and i == flap[1]:
            # A flap timed from outside can fall between two WRITEs,
            # while this loop makes and checks patterns, and lose nothing.
            with open(LINK % dev, "w") as f:
                f.write("flap %d\n" % flap[0])
        qp.post_send(wr)
        wc = wait_wc(cq)
        if wc is None or wc.status != e.IBV_WC_SUCCESS:
            failed = status_of(wc)
            break
        if op == "send" and status_of(wait_wc(tcq)) != "IBV_WC_SUCCESS":
            failed = "receive did not complete"
            break
        if dst.read(size, 0) != data:
            failed = "data differs in iteration %d" % i
            break
        verified += 1
    print(json.dumps({"verified": verified, "failed": failed,
                      "faults": listing_and_clear(dev, rule, qp, tqp)}))


def poll_all(cq, count, seconds=60):
    """Up to COUNT completions within SECONDS."""
    wcs, deadline = [], time.monotonic() + seconds
    while len(wcs) < count and time.monotonic() < deadline:
        n, got = cq.poll(count - len(wcs))
        wcs.extend(got[:n])
        if not n:
            time.sleep(0.0005)
    return wcs


def cmd_late_recv(req_dev, req_gid, resp_dev, resp_gid, count, size, late_ms,
                  rule=""):
    """Each SEND that finds no receive is answered with an RNR NAK while the
    SENDs behind it are already on the wire; with rnr_retry 7 the
    requester waits as long as it takes, so every SEND must arrive."""
    ctx, tctx = Context(name=req_dev), Context(name=resp_dev)
    pd, tpd = PD(ctx), PD(tctx)
    cq, tcq = CQ(ctx, count), CQ(tctx, count)
    qp, tqp = rc_qp(pd, cq, count), rc_qp(tpd, tcq, count)
    rc_connect(ctx, qp, tqp.qp_num, req_gid, 7, tctx.query_gid(1, resp_gid))
    rc_connect(tctx, tqp, qp.qp_num, resp_gid, 7, ctx.query_gid(1, req_gid))
    src = MR(pd, count * size, REMOTE_ALL)
    dst = MR(tpd, count * size, REMOTE_ALL)
    data = b"".join(pattern(i, size) for i in range(count))
    src.write(data, len(data))
    dst.write(bytes(len(data)), len(data))
    install(req_dev, rule, qp.qp_num)
    for i in range(count):
        qp.post_send(SendWR(opcode=e.IBV_WR_SEND, num_sge=1,
                            sg=[SGE(src.buf + i * size, size, src.lkey)]))
    time.sleep(late_ms / 1000.0)
    for i in range(count):
        tqp.post_recv(RecvWR(num_sge=1, sg=[SGE(dst.buf + i * size, size, dst.lkey)]))
        time.sleep(0.001)
    sent, received = poll_all(cq, count), poll_all(tcq, count)
    bad = [wc for wc in sent + received if wc.status != e.IBV_WC_SUCCESS]
    res = {
        "sent": len(sent) - sum(wc.status != e.IBV_WC_SUCCESS for wc in sent),
        "received": len(received) - sum(wc.status != e.IBV_WC_SUCCESS for wc in received),
        "failed": status_of(bad[0]) if bad else None,
        "data_ok": dst.read(len(data), 0) == data}
    if rule:
        res["listing"] = listing_and_clear(req_dev, rule, qp)
    print(json.dumps(res))


def ud_qp(pd, cq, depth):
    cap = QPCap(max_send_wr=depth, max_recv_wr=depth, max_send_sge=1,
                max_recv_sge=1)
    attr = QPAttr(port_num=1)
    attr.qkey = QKEY
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq, cap=cap))
    qp.to_rts(attr)     # through INIT (with the Q_Key) and RTR
    return qp


def cmd_ud(dev, gid_index, count, rule=""):
    ctx = Context(name=dev)
    pd = PD(ctx)
    scq, rcq_a, rcq_b = CQ(ctx, 8), CQ(ctx, count), CQ(ctx, count)
    sender = ud_qp(pd, scq, 4)
    recv_a, recv_b = ud_qp(pd, rcq_a, count), ud_qp(pd, rcq_b, count)
    slot = GRH + 64
    rbuf = MR(pd, slot * count * 2, e.IBV_ACCESS_LOCAL_WRITE)
    for i in range(count):
        for k, qp in enumerate((recv_a, recv_b)):
            off = (2 * i + k) * slot
            qp.post_recv(RecvWR(num_sge=1, sg=[SGE(rbuf.buf + off, slot, rbuf.lkey)]))
    sbuf = MR(pd, 64, e.IBV_ACCESS_LOCAL_WRITE)
    gr = GlobalRoute(dgid=ctx.query_gid(1, gid_index), sgid_index=gid_index)
    ah = AH(pd, attr=AHAttr(port_num=1, is_global=1, gr=gr))
    install(dev, rule, recv_a.qp_num)
    for i in range(count):
        target = recv_a if i % 2 == 0 else recv_b
        wr = SendWR(opcode=e.IBV_WR_SEND_WITH_IMM, num_sge=1,
                    sg=[SGE(sbuf.buf, 64, sbuf.lkey)])
        wr.imm_data = i
        wr.set_wr_ud(ah, target.qp_num, QKEY)
        sender.post_send(wr)
        if status_of(wait_wc(scq)) != "IBV_WC_SUCCESS":
            raise SystemExit("UD send %d did not complete" % i)
    got = {"a": [], "b": []}
    for name, cq in (("a", rcq_a), ("b", rcq_b)):
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            n, wcs = cq.poll(count)
            for wc in wcs[:n]:
                if wc.status == e.IBV_WC_SUCCESS:
                    got[name].append(wc.imm_data)  # raw both ways
            if len(got[name]) == count // 2:
                break
            time.sleep(0.001)
    print(json.dumps({"received_a": sorted(got["a"]),
                      "received_b": sorted(got["b"]),
                      "qpn_a": recv_a.qp_num,
                      "faults": listing_and_clear(dev, rule, sender,
                                                  recv_a, recv_b)}))


def cmd_events(dev):
    """Blocks in ibv_get_async_event, which holds pyverbs' GIL: no thread
    can time it out, so the caller bounds it (timeout(1))."""
    ctx = Context(name=dev)
    print("ready", flush=True)      # events queue up from the open on
    seen = []
    while not ("IBV_EVENT_PORT_ERR" in seen and seen[-1] == "IBV_EVENT_PORT_ACTIVE"):
        ev = ctx.get_async_event()
        seen.append(EVENTS.get(ev.event_type, str(ev.event_type)))
        ev.ack()
        print(seen[-1], flush=True)


def main(argv):
    cmd = argv[1]
    if cmd == "rc":
        cmd_rc(argv[2], int(argv[3]), argv[4], int(argv[5]), int(argv[6]),
               *(argv[7:8]), *(int(a) for a in argv[8:9]))
    elif cmd == "rc_flap":
        cmd_rc(argv[2], int(argv[3]), "write", int(argv[4]), int(argv[5]),
               flap=(int(argv[6]), int(argv[7])))
    elif cmd == "ud":
        cmd_ud(argv[2], int(argv[3]), int(argv[4]), *argv[5:6])
    elif cmd == "late_recv":
        cmd_late_recv(argv[2], int(argv[3]), argv[4], int(argv[5]),
                      *(int(a) for a in argv[6:9]), *argv[9:10])
    elif cmd == "events":
        cmd_events(argv[2])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
