"""Memory windows on sroce0, through pyverbs (tests/guest/mw_app.py).

rdma-core's pyverbs suite checks that a bound window can be written and
that invalidation stops it.  These cases add what a window promises
beyond that: its own bounds and rights (the MR grants no remote right at
all), zero-based addressing, a type 1 rkey that changes with every bind,
a type 2 window usable only through the QP it is bound to, invalidation
by LOCAL_INV, SEND_WITH_INV and deallocation, bind errors completing
with IBV_WC_MW_BIND_ERR, the errno of bad verbs calls, and the caps.
"""
import json
import os

import pytest

from verbs_apps import CLIENT_IP, NOBODY, gid_index, guest_tool

APP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mw_app.py")
OK, DENIED, BIND_ERR = "IBV_WC_SUCCESS", "IBV_WC_REM_ACCESS_ERR", "IBV_WC_MW_BIND_ERR"
W_OFF = 1024                         # mw_app.W_OFF: where the window starts

EXPECTED = {
    "type1 write inside": dict(bind=OK, status=OK, changed=[W_OFF + 64, W_OFF + 128]),
    "type1 read inside": dict(bind=OK, status=OK, read=True, changed=None),
    "type1 write past the end": dict(bind=OK, status=DENIED, changed=None),
    "type1 write before the start": dict(bind=OK, status=DENIED, changed=None),
    "type1 write without the right": dict(bind=OK, status=DENIED, changed=None),
    "type1 zero based write": dict(bind=OK, status=OK, changed=[W_OFF + 64, W_OFF + 128]),
    "type1 atomic": dict(bind=OK, status=OK, changed=[W_OFF, W_OFF + 8]),
    "type1 old key after rebind": dict(bind=[OK, OK], new_key=True, status=DENIED,
                                       changed=None),
    "type1 after zero-length unbind": dict(bind=[OK, OK], status=DENIED, changed=None),
    "mr rkey without remote rights": dict(status=DENIED, changed=None),
    "type2 write inside": dict(bind=OK, status=OK, changed=[W_OFF, W_OFF + 64]),
    "type2 through another qp": dict(bind=OK, status=DENIED, changed=None),
    "type2 after local invalidate": dict(bind=OK, inv=OK, status=DENIED, changed=None),
    "type2 after send with invalidate": dict(
        bind=OK, send=OK, recv={"status": OK, "with_inv": True, "rkey": True},
        status=DENIED, changed=None),
    "type2 after dealloc": dict(bind=OK, status=DENIED, changed=None),
    "type2 bind while bound": dict(bind=[OK, BIND_ERR]),
    "bind mr without mw_bind right": dict(bind=BIND_ERR),
    "bind beyond the mr": dict(bind=BIND_ERR),
    "bind write window on read-only mr": dict(bind=BIND_ERR),
    "bind type2 zero length": dict(bind=BIND_ERR),
    "dereg mr with bound window": dict(bind=OK, dereg_while_bound="EBUSY"),
    "alloc type 3": dict(alloc="EINVAL"),
    "device caps": dict(mem_window=True, type_2b=True),
}


@pytest.fixture(scope="module")
def results(guest):
    g = gid_index(guest, "sroce0", CLIENT_IP)
    r = guest.run("python3 %s sroce0 %d" % (APP, g), timeout=600)
    assert r.rc == 0, r
    out = json.loads(r.stdout.strip().splitlines()[-1])
    print("\n".join(json.dumps(c) for c in out))
    return {c.pop("case"): c for c in out}


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_window_case(results, case):
    got = results[case]
    want = EXPECTED[case]
    assert {k: got.get(k) for k in want} == want, got


def test_every_case_is_checked(results):
    assert sorted(results) == sorted(EXPECTED)
    assert results["device caps"]["max_mw"] > 0


def test_windows_at_the_top_of_the_address_space(guest):
    """A type 2 window over the last 4 KiB of an MR that ends at 2^64
    (tools/mw_top.cpp; rxe's 7.2 fixes of sums that wrap,
    docs/bug-classes-2026.md class 4, as qp_edges' iova-top tries MRs):
    WRITE, READ and FETCH_AND_ADD ending at 2^64 through it succeed, by
    iova and zero based; accesses past its end or below its start, and
    zero-based offsets whose sum with the length wraps, fail with a remote
    access error; binds past 2^64 or below the MR fail with a bind error;
    nothing refused changes a byte."""
    g = gid_index(guest, "sroce0", CLIENT_IP)
    r = guest.run("%s%s sroce0 %d" % (NOBODY, guest_tool(guest, "mw_top"), g), timeout=120)
    print(r.output)
    assert not r.timed_out, r
    assert r.rc == 0 and "\n0 checks failed" in r.stdout, r
