"""Guest-side pyverbs program for the per-QP rate limit checks in
tests/guest/test_congestion.py.

    rate_limit_app.py DEV GID_INDEX     prints one JSON object: the packet
                                        pacing caps and, per case, the
                                        errno ibv_modify_qp returned (0: ok)

IBV_QP_RATE_LIMIT goes through ibv_modify_qp (the provider sends it with
the extended command); ibv_modify_qp_rate_limit is exercised by perftest.
"""
import json
import sys

import pyverbs.enums as e
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.pd import PD
from pyverbs.pyverbs_error import PyverbsRDMAError
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr

from isolation_app import Pair


def modify_errno(qp, attr, mask):
    try:
        qp.modify(attr, mask)
        return 0
    except PyverbsRDMAError as err:
        return err.error_code


def limit(qp, kbps, extra_mask=0, attr=None):
    attr = attr or QPAttr()
    attr.rate_limit = kbps
    return modify_errno(qp, attr, e.IBV_QP_RATE_LIMIT | extra_mask)


def ud_cases(ctx, pd):
    """A UD QP takes the limit on RTR->RTS and in RTS."""
    cq = CQ(ctx, 4)
    cap = QPCap(max_send_wr=1, max_recv_wr=1, max_send_sge=1, max_recv_sge=1)
    qp = QP(pd, QPInitAttr(qp_type=e.IBV_QPT_UD, scq=cq, rcq=cq, cap=cap))
    init = QPAttr(port_num=1)
    init.qkey = 0x1234
    init.qp_state = e.IBV_QPS_INIT
    init.pkey_index = 0
    qp.modify(init, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
              e.IBV_QP_QKEY)
    out = {"ud init->init": limit(qp, 1000)}
    rtr = QPAttr()
    rtr.qp_state = e.IBV_QPS_RTR
    qp.modify(rtr, e.IBV_QP_STATE)
    rts = QPAttr()
    rts.qp_state = e.IBV_QPS_RTS
    rts.sq_psn = 0
    out["ud rtr->rts"] = limit(qp, 2000, e.IBV_QP_STATE | e.IBV_QP_SQ_PSN, rts)
    out["ud rts->rts"] = limit(qp, 0)
    return out


def main(dev, gid_index):
    ctx = Context(name=dev)
    caps = ctx.query_device_ex().packet_pacing_caps
    out = {"caps": {"min": caps.qp_rate_limit_min, "max": caps.qp_rate_limit_max,
                    "qpts": caps.supported_qpts}}
    pair = Pair(ctx, gid_index, PD(ctx))          # both RC QPs in RTS
    cases = {
        "rc rts->rts": limit(pair.qp, 5000),
        "rc rts->rts unlimited": limit(pair.qp, 0),
        "rc at min": limit(pair.qp, caps.qp_rate_limit_min),
        "rc at max": limit(pair.qp, caps.qp_rate_limit_max),
        "rc below min": limit(pair.qp, caps.qp_rate_limit_min - 1),
        "rc above max": limit(pair.qp, caps.qp_rate_limit_max + 1),
    }
    # Not on the way to RTR: a QP that cannot send yet has no pacer to set.
    cq = CQ(ctx, 4)
    cap = QPCap(max_send_wr=1, max_recv_wr=1, max_send_sge=1, max_recv_sge=1)
    fresh = QP(pair.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=cq, rcq=cq, cap=cap))
    reset_init = QPAttr(port_num=1)
    reset_init.qp_state = e.IBV_QPS_INIT
    reset_init.pkey_index = 0
    reset_init.qp_access_flags = 0
    cases["rc reset->init"] = limit(
        fresh, 1000, e.IBV_QP_STATE | e.IBV_QP_PKEY_INDEX | e.IBV_QP_PORT |
        e.IBV_QP_ACCESS_FLAGS, reset_init)
    cases.update(ud_cases(ctx, pair.pd))
    out["cases"] = cases
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
