"""Interop with the kernel's own Soft-RoCE: rxe0 on veth0 (initial
namespace) <-> sroce1 on veth1 (namespace peer).  rxe and sroce share no
code, so a passing run proves our packets are real RoCE v2."""
import json
import os
import re

import pytest

from verbs_apps import (CLIENT_IP, SERVER_IP, gid_index, guest_tool, link_counters,
                        run_pair)

# Core: runs on every Debian release with --releases (scripts/test).
ALL_RELEASES = True

GUEST_OPTIONS = {"rxe": True}

APPS = [
    ("ibv_rc_pingpong", "-s 4096 -n 100 -c", "-g"),
    ("ibv_ud_pingpong", "-s 1024 -n 100 -c", "-g"),
    ("ib_write_bw", "-s 65536 -D 2 -F", "-x"),
    ("ib_read_bw", "-s 65536 -D 2 -F", "-x"),
    ("ib_atomic_bw", "-D 2 -F", "-x"),
]


@pytest.fixture(scope="module")
def gids(guest):
    return {"rxe0": gid_index(guest, "rxe0", CLIENT_IP),
            "sroce1": gid_index(guest, "sroce1", SERVER_IP)}


@pytest.mark.parametrize("app,args,gflag", APPS, ids=[a[0] for a in APPS])
def test_sroce_server_rxe_client(guest, gids, app, args, gflag):
    rc, out = run_pair(
        guest,
        "%s -d sroce1 %s %d %s" % (app, gflag, gids["sroce1"], args),
        "%s -d rxe0 %s %d %s %s" % (app, gflag, gids["rxe0"], args, SERVER_IP))
    assert rc == 0, out


@pytest.mark.parametrize("app,args,gflag", APPS, ids=[a[0] for a in APPS])
def test_rxe_server_sroce_client(guest, gids, app, args, gflag):
    # rxe serves in the initial namespace; sroce1 connects from `peer`.
    rc, out = run_pair(
        guest,
        "%s -d rxe0 %s %d %s" % (app, gflag, gids["rxe0"], args),
        "ip netns exec peer %s -d sroce1 %s %d %s %s"
        % (app, gflag, gids["sroce1"], args, CLIENT_IP),
        server_ns=None)
    assert rc == 0, out


def pair_under_sroce1_fault(guest, rule, server, client, server_ns="peer"):
    """run_pair(server, client) with fault @rule on sroce1 for its length:
    (status, output, sroce1's counter deltas)."""
    debugfs = "/sys/kernel/debug/sroce/sroce1"
    guest.run("mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug; "
              "echo '%s' > %s/faults" % (rule, debugfs), check=True)
    try:
        before = link_counters(guest, "sroce1")
        rc, out = run_pair(guest, server, client, server_ns=server_ns)
        listed = guest.run("cat %s/faults" % debugfs, check=True).stdout
    finally:
        guest.run("echo clear > %s/faults" % debugfs)
    after = link_counters(guest, "sroce1")
    delta = {k: after[k] - before[k] for k in after}
    print(out, listed, delta)
    return rc, out, delta


def test_reads_from_rxe_with_responses_lost(guest, gids):
    """sroce1 READs 64 KiB at a time from rxe0 while its fault rules drop
    3 % of the READ responses it receives: each READ that lost one asks
    rxe for the rest only, from the first missing PSN with its RETH moved
    on (b3f3e63), and every kernel's rxe must answer such a READ that
    starts inside the one it already answered, or the READs would run out
    of retries.  Asked once per gap: before, the responses in flight
    behind a lost one each asked again (300 READs: 20,271 rewinds for
    10,702 losses, 18 times the READs' bytes received, on Debian 12)."""
    rc, out, delta = pair_under_sroce1_fault(
        guest, "drop dir=rx class=read_resp prob=0.03 seed=9",
        "ib_read_bw -d rxe0 -x %d -s 65536 -n 100 -F" % gids["rxe0"],
        "ip netns exec peer ib_read_bw -d sroce1 -x %d -s 65536 -n 100 -F %s"
        % (gids["sroce1"], CLIENT_IP),
        server_ns=None)
    assert rc == 0, out
    assert delta["fault_drop"] > 0 and delta["retransmits"] > 0, delta
    assert delta["completion_errors"] == 0, delta
    # One rewind per gap: the responses still in flight behind a lost one
    # do not ask again (each rewind needs a loss, a timeout or a NAK).
    assert delta["retransmits"] <= (delta["fault_drop"] + delta["timeouts"] +
                                    delta["seq_err_rcvd"]), delta


@pytest.mark.parametrize("writer", ["sroce1", "rxe0"])
def test_writes_with_rxe_with_requests_lost(guest, gids, writer):
    """64 KiB WRITEs each way while sroce1's fault rules drop 3 % of the
    requests it sends (sroce1 writing) or receives (rxe0 writing): every
    WRITE completes, and a loss costs at most one sequence NAK and one
    rewind (several in one window share them).  rxe's requester keeps far
    more than sroce's 128-PSN window in flight, so the packets behind a
    gap must not each be NAKed again, nor the NAKs of one gap rewind
    sroce's requester more than once."""
    args = "-s 65536 -n 50 -F"
    rule = "drop dir=%s class=request prob=0.03 seed=11"
    if writer == "sroce1":
        rc, out, d = pair_under_sroce1_fault(
            guest, rule % "tx", "ib_write_bw -d rxe0 -x %d %s" % (gids["rxe0"], args),
            "ip netns exec peer ib_write_bw -d sroce1 -x %d %s %s"
            % (gids["sroce1"], args, CLIENT_IP),
            server_ns=None)
    else:
        rc, out, d = pair_under_sroce1_fault(
            guest, rule % "rx", "ib_write_bw -d sroce1 -x %d %s" % (gids["sroce1"], args),
            "ib_write_bw -d rxe0 -x %d %s %s" % (gids["rxe0"], args, SERVER_IP))
    assert rc == 0, out
    assert d["fault_drop"] > 0 and d["completion_errors"] == 0, d
    if writer == "sroce1":
        assert d["seq_err_rcvd"] <= d["fault_drop"], d
        assert 0 < d["retransmits"] <= d["seq_err_rcvd"] + d["timeouts"], d
    else:
        assert 0 < d["seq_err_sent"] <= d["fault_drop"], d


@pytest.mark.parametrize("requester,responder", [("sroce1", "rxe0"), ("rxe0", "sroce1")])
def test_atomic_write_with_rxe(guest, gids, requester, responder):
    """RDMA ATOMIC WRITE each way (tools/atomic_write.cpp: values byte for
    byte, ordering behind a WRITE, the NAKs), one process driving both
    devices from the initial namespace."""
    if guest.distro in (None, "bookworm"):
        pytest.skip("Debian 12's rxe (Linux 6.1) has no ATOMIC WRITE (6.2)")
    tool = guest_tool(guest, "atomic_write")
    r = guest.run("%s %s %d %s %d" % (tool, requester, gids[requester],
                                      responder, gids[responder]), timeout=120)
    print(r.output)
    assert not r.timed_out, r
    assert r.rc == 0 and "0 checks failed" in r.stdout, r


@pytest.mark.parametrize("requester,responder", [("sroce1", "rxe0"), ("rxe0", "sroce1")])
def test_receiver_that_falls_behind_with_rxe(guest, gids, requester, responder):
    """tests/guest/fault_app.py late_recv each way: the receiver posts late,
    so SENDs meet RNR NAKs with more of them in flight.  rxe's responder
    also NAKs those with a PSN sequence error, once per RNR wait: the
    requester must not spend a transport retry on a rewind the RNR wait
    already owes, or a slow receiver fails the QP."""
    app = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fault_app.py")
    r = guest.run("python3 %s late_recv %s %d %s %d 32 4096 200" % (
        app, requester, gids[requester], responder, gids[responder]), timeout=180)
    assert r.rc == 0, r
    res = json.loads(r.stdout.strip().splitlines()[-1])
    assert res == {"sent": 32, "received": 32, "failed": None, "data_ok": True}, res


def test_rxe_nak_echo_that_comes_after_the_rnr_wait(guest, gids):
    """The race CI hit at dd36ba4 under load (RETRY_EXC_ERR with 30 of 32
    SENDs done), made certain: rxe answers each SEND that finds no receive
    with an RNR NAK and the request behind it with a PSN sequence NAK
    naming the same PSN.  Here sroce1 holds every sequence NAK back
    (every second ACK-class packet, from the second: the RNR NAKs pass)
    until well after the 10 us RNR wait, when sroce1 has already rewound
    and resent.  The late NAK says only what the RNR NAK said, so it must
    not cost a transport retry either; eight of them used to fail the QP.
    Twelve are held, all while no receive is posted: the first 200 ms
    bring an RNR NAK every round trip (plus 10 us), and twelve of them
    take longer only if a round trip takes 16 ms, a quarter of the 67 ms
    ACK timeout.  Once receives come, ACKs break the RNR/sequence
    alternation, and a held RNR NAK overtaken by its own sequence NAK
    would be a reordering the requester rightly pays a retry for."""
    app = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fault_app.py")
    rule = "delay dir=rx class=ack qpn={qpn} after=1 every=2 count=12 delay_us=300"
    before = link_counters(guest, "sroce1")
    r = guest.run("python3 %s late_recv sroce1 %d rxe0 %d 32 4096 200 '%s'" % (
        app, gids["sroce1"], gids["rxe0"], rule), timeout=180)
    assert r.rc == 0, r
    res = json.loads(r.stdout.strip().splitlines()[-1])
    listing = res.pop("listing")
    injected = int(re.search(r"injected=(\d+)", listing).group(1))
    after = link_counters(guest, "sroce1")
    d = {k: v - before.get(k, 0) for k, v in after.items() if v != before.get(k, 0)}
    assert res == {"sent": 32, "received": 32, "failed": None, "data_ok": True}, (res, listing, d)
    assert injected == 12, listing    # more late NAKs than retry_cnt's 7 retries


def test_flush_from_rxe(guest, gids):
    """RDMA FLUSH from rxe to sroce (tools/flush.cpp: global visibility of
    a range and of the whole MR, the refusals), one process driving both
    devices.  Only this way: rxe's FLUSH carries an ICRC that is not
    IBTA's (its opcode table has no payload offset for FLUSH, so the ICRC
    covers the headers twice; proto/icrc.h), which sroce accepts on
    receive, while rxe drops the IBTA ICRC sroce sends."""
    requester, responder = "rxe0", "sroce1"
    if guest.userspace == "bookworm":
        pytest.skip("Debian 12's rdma-core 44 has no FLUSH verb (45; rxe: Linux 6.2)")
    tool = guest_tool(guest, "flush")
    r = guest.run("%s %s %d %s %d" % (tool, requester, gids[requester],
                                      responder, gids[responder]), timeout=120)
    print(r.output)
    assert not r.timed_out, r
    assert r.rc == 0 and "0 checks failed" in r.stdout, r


@pytest.mark.parametrize("engine", ["table", "pclmul", "kernel"])
def test_icrc_engines_agree_with_rxe(guest, gids, engine):
    """Each of sroce's CRC engines (crc_engine) computes the ICRC rxe
    computes with the kernel's own crc32: 64 KiB ping-pongs, checked by
    the application, sroce's zero-copy fragments included, both ways.
    "kernel" is crc32_le() itself, which sroce takes where the kernel
    accelerates it (from 6.14, crc32_optimizations(); with PCLMULQDQ on
    x86)."""
    param = "/sys/module/sroce/parameters/crc_engine"
    flags = guest.run("grep -m1 '^flags' /proc/cpuinfo", check=True).stdout.split()
    if engine != "table" and "pclmulqdq" not in flags:
        pytest.skip("the guest CPU model has no PCLMULQDQ")
    release = guest.run("uname -r", check=True).stdout.strip()
    major_minor = tuple(int(x) for x in re.match(r"(\d+)\.(\d+)", release).groups())
    if engine == "kernel" and major_minor < (6, 14):
        pytest.skip("Linux %s: crc32_le() is the generic one before 6.14" % release)
    guest.run("echo %s > %s" % (engine, param), check=True)
    try:
        assert guest.run("cat " + param, check=True).stdout.strip() == engine
        for server, client in (("sroce1", "rxe0"), ("rxe0", "sroce1")):
            s_ns, c_ns = ("peer", "") if server == "sroce1" else (None, "ip netns exec peer ")
            rc, out = run_pair(
                guest,
                "ibv_rc_pingpong -d %s -g %d -s 65536 -n 50 -c" % (server, gids[server]),
                "%sibv_rc_pingpong -d %s -g %d -s 65536 -n 50 -c %s"
                % (c_ns, client, gids[client],
                   SERVER_IP if server == "sroce1" else CLIENT_IP),
                server_ns=s_ns)
            assert rc == 0, out
    finally:
        guest.run("echo kernel > " + param, check=True)


ODP_APPS = [
    ("ibv_rc_pingpong", "-o -s 16384 -n 100 -c", "-g"),
    ("ib_write_bw", "--odp -s 65536 -n 200 -F", "-x"),
    ("ib_read_bw", "--odp -s 65536 -n 200 -F", "-x"),
]


@pytest.mark.parametrize("app,args,gflag", ODP_APPS, ids=[a[0] for a in ODP_APPS])
def test_odp_with_rxe(guest, gids, app, args, gflag):
    """On-demand paging on both ends, each way: rxe's ODP (Linux 6.15)
    faults on its side, sroce's RNR NAKs and retries on its own."""
    caps = guest.run("ibv_devinfo -v -d rxe0", check=True).stdout
    if "ODP_SUPPORT" not in caps:
        pytest.skip("this release's rxe has no on-demand paging (Linux 6.15)")
    for server, client in (("sroce1", "rxe0"), ("rxe0", "sroce1")):
        s_ns, c_ns = ("peer", "") if server == "sroce1" else (None, "ip netns exec peer ")
        rc, out = run_pair(
            guest,
            "%s -d %s %s %d %s" % (app, server, gflag, gids[server], args),
            "%s%s -d %s %s %d %s %s" % (c_ns, app, client, gflag, gids[client], args,
                                        SERVER_IP if server == "sroce1" else CLIENT_IP),
            server_ns=s_ns)
        assert rc == 0, "%s serving:\n%s" % (server, out)
