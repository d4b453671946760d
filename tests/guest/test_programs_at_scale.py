"""Programs people run over RDMA, unchanged, at the scale that shows what a
short run hides: fio's rdma ioengine with every verb, rdma_cm with
fifty connections of a hundred messages each, DAPL's dtest, qperf, and
tgt's iSCSI target over iSER (user space, through sroce's provider) with
the kernel's iSER initiator.  Each runs on one device
(both ends on sroce0, every packet looped back) and across the veth pair
(server on sroce1 in namespace peer).  The counters show the data went
through sroce.

Debian 12's fio (3.33) connects with rdma_cm and leaves the connection's
rnr_retry_count at 0: a SEND that finds no receive posted fails at once
("RNR retry counter exceeded", on rxe as on sroce), and fio then waits
for a completion event that never comes (fio_rdmaio_getevents() goes back
to waiting after a failed completion), so the run hangs.  Its source says
the receiving side must be deeper than the sending one; here the server
posts a receive for every message of the run before the client starts
(the client sleeps 500 ms after connecting for that), so no SEND can meet
an empty receive queue, however the two processes are scheduled."""
import re

import pytest

import lio
from blockio import assert_verified
from verbs_apps import CLIENT_IP, SERVER_IP, link_counters, q, run_pair

# Two vCPUs (tests/conftest.py guest_cpus): on one beside another guest
# the unit took 1.8x as long, and qperf's rc_rdma_write_bw connect came back
# rejected once (not investigated: docs/test-time.md).
GUEST_CPUS = 2

FIO_PORT = 19000
FIO_BS = 4096
FIO_IOS = 512                 # per run: the server's depth for SEND
FIO_CLIENT_DEPTH = 4
# (server IP, namespace of the server, devices the data crosses)
TOPOLOGIES = {
    "one_device": (CLIENT_IP, None, ("sroce0",)),
    "across_namespaces": (SERVER_IP, "peer", ("sroce0", "sroce1")),
}


def fio_rdma(guest, verb, topology):
    """fio's rdma engine, @verb from a client in the initial namespace to
    a server on @topology; asserts both ends did every I/O and the bytes
    went through the devices."""
    ip, ns, devices = TOPOLOGIES[topology]
    size = FIO_BS * FIO_IOS
    # SEND: a receive for every message (see above); WRITE and READ: fio
    # asks the server for as many buffers as the client keeps in flight.
    depth = FIO_IOS if verb == "send" else FIO_CLIENT_DEPTH
    common = "fio --ioengine=rdma --port=%d --bs=%d --size=%d" % (FIO_PORT, FIO_BS, size)
    before = {d: link_counters(guest, d) for d in devices}
    rc, out = run_pair(
        guest,
        "%s --name=server --rw=read --iodepth=%d" % (common, depth),
        "%s --name=client --rw=write --verb=%s --iodepth=%d --hostname=%s"
        % (common, verb, FIO_CLIENT_DEPTH, ip),
        timeout=120, server_ns=ns, port=None)
    assert rc == 0, out
    assert out.count("err= 0:") == 2, out
    # "issued rwts: total=R,W,...": the client counts every I/O; with
    # SEND the server does too (a receive each), with WRITE and READ it
    # only waits for the client's last message.
    assert "issued rwts: total=0,%d," % FIO_IOS in out, out
    if verb == "send":
        assert "issued rwts: total=%d,0," % FIO_IOS in out, out
    for d in devices:
        after = link_counters(guest, d)
        moved = (after["tx_bytes"] - before[d]["tx_bytes"] +
                 after["rx_bytes"] - before[d]["rx_bytes"])
        assert moved >= size, (d, moved, size)


@pytest.mark.parametrize("topology", TOPOLOGIES)
@pytest.mark.parametrize("verb", ["write", "read", "send"])
def test_fio_rdma_engine(guest, verb, topology):
    fio_rdma(guest, verb, topology)


@pytest.mark.parametrize("topology", TOPOLOGIES)
def test_ucmatose_fifty_connections(guest, topology):
    """50 rdma_cm connections, 100 messages each way on every one."""
    ip, ns, devices = TOPOLOGIES[topology]
    before = link_counters(guest, devices[0])
    rc, out = run_pair(guest, "ucmatose -c 50 -C 100",
                       "ucmatose -s %s -c 50 -C 100" % ip,
                       timeout=120, server_ns=ns, port=None)
    assert rc == 0, out
    assert out.count("return status 0") == 2, out
    sent = link_counters(guest, devices[0])["tx_packets"] - before["tx_packets"]
    assert sent >= 50 * 100, (sent, out)


# dtest (dapl2-utils) over DAPL's ofa-v2 provider, which connects with
# rdma_cm from the address of the netdev its dat.conf line names.  The
# client learns the provider's name from the server and opens it too, so
# each side's DAT_OVERRIDE gives that one name its own side's netdev.
# The client asks the server for its address once, over TCP (port 15828,
# no retry): it starts once the server listens there.
DTEST_PROVIDER = "ofa-v2-cma"
DTEST_PORT = 15828
DTEST_BUF = 65536
DTEST_BURST = 500             # RDMA WRITEs each way; 100 SEND ping-pongs
DAT_LINE = '%s u2.0 nonthreadsafe default libdaplofa.so.2 dapl.2.0 "%s 0" ""'
DTEST_NETDEV = {"one_device": "veth0", "across_namespaces": "veth1"}


@pytest.mark.parametrize("topology", TOPOLOGIES)
def test_dapl_dtest(guest, topology):
    """dtest's whole run: SEND ping-pongs, RDMA WRITEs both ways and RDMA
    READs, each side checking the data the other wrote or read."""
    ip, ns, devices = TOPOLOGIES[topology]
    for name, netdev in (("client", "veth0"), ("server", DTEST_NETDEV[topology])):
        guest.run("echo %s > /tmp/dat-%s.conf" % (q(DAT_LINE % (DTEST_PROVIDER, netdev)), name),
                  check=True)
    common = "dtest -P %s -b %d -B %d" % (DTEST_PROVIDER, DTEST_BUF, DTEST_BURST)
    before = link_counters(guest, devices[0])
    rc, out = run_pair(guest, "env DAT_OVERRIDE=/tmp/dat-server.conf %s -s" % common,
                       "env DAT_OVERRIDE=/tmp/dat-client.conf %s -h %s" % (common, ip),
                       timeout=120, server_ns=ns, port=DTEST_PORT)
    assert rc == 0, out
    assert out.count("DAPL Test Complete. PASSED") == 2, out
    # Each side's check of what its peer wrote into and read from it.
    for side, peer in (("CLIENT", "server"), ("SERVER", "client")):
        assert "%s: RDMA write buffer contains: %s RDMA write data" % (side, peer) in out, out
        assert "%s: RCV RDMA read buffer contains: %s RDMA read data" % (side, peer) in out, out
    assert out.count("RDMA write (bi-direction)") == 2, out
    sent = link_counters(guest, devices[0])["tx_bytes"] - before["tx_bytes"]
    assert sent >= DTEST_BURST * DTEST_BUF, (sent, out)


# qperf's RDMA tests that can run on RoCE: with -cm1 (rdma_cm) the RC
# ones.  Without rdma_cm, qperf 0.4.11 addresses its peer by LID alone
# (ib_prep() in its rdma.c: no GRH), which ib_core refuses on any RoCE
# port before a driver sees it (EINVAL from rdma_check_ah_attr, as on rxe
# and ConnectX), and its UC and UD tests have no rdma_cm mode.  After
# each -cm1 test the server's child segfaults in ibv_destroy_qp() called
# from rdma_destroy_qp() in qperf's cm_close(), after its results went
# out, on rxe as on sroce (12 of 12 on both): qperf's own, and the
# server's exit status is its parent's.
QPERF_TESTS = ("rc_bi_bw rc_bw rc_lat rc_rdma_read_bw rc_rdma_read_lat "
               "rc_rdma_write_bw rc_rdma_write_lat rc_rdma_write_poll_lat "
               "rc_compare_swap_mr rc_fetch_add_mr ver_rc_compare_swap "
               "ver_rc_fetch_add").split()
QPERF_PORT = 19765


# On one device only: across namespaces rc_bi_bw reported "bw = 0" in
# 3 of 8 and 5 of 6 runs.  qperf's rc_bi_bw posts 1024 sends before it
# first polls and stops both loops at its 1 s mark; a sroce doorbell
# sends its message in the caller, so across namespaces under TCG the
# posting loop outlasts the second and nothing is ever polled (traced:
# every receive completion was in the CQ; docs/peers.md).  The other 11
# tests passed there.  On one device 1024 posts of qperf's default 64 KiB
# fit the second on a quiet host but not on a busy one (a second guest
# and a build beside it: "bw = 0" again), so rc_bi_bw sends 4 KiB
# messages (-m 4K): 1024 of them fit the second with room to spare.
QPERF_OPTIONS = {"rc_bi_bw": "-m 4K"}


@pytest.mark.parametrize("topology", ["one_device"])
def test_qperf_rc_tests(guest, topology):
    """Every RC test of qperf over rdma_cm, one second each, against one
    server; the ver_ tests check the atomics' results."""
    ip, ns, devices = TOPOLOGIES[topology]
    before = link_counters(guest, devices[0])
    runs = "; ".join("qperf -cm1 -t 1 -uu %s %s %s || exit 1" % (QPERF_OPTIONS.get(t, ""), ip, t)
                     for t in QPERF_TESTS)
    client = "sh -c %s" % q("%s; qperf %s quit" % (runs, ip))
    rc, out = run_pair(guest, "qperf", client, timeout=180, server_ns=ns, port=QPERF_PORT)
    assert rc == 0, out
    for t in QPERF_TESTS:
        assert re.search(r"^%s:\n\s+(bw|latency|msg_rate)\s+=\s+[1-9]" % t, out, re.M), (t, out)
    sent = link_counters(guest, devices[0])["tx_packets"] - before["tx_packets"]
    assert sent >= 1000 * len(QPERF_TESTS), (sent, out)


# tgt (tgtd), the user-space SCSI target, exporting a file over iSER
# (its "iser" driver: librdmacm and libibverbs, so sroce's provider),
# and open-iscsi with ib_iser logging in to it.  tgt 1.0.85 lets an iSER
# login in only if the initiator passes both the address ACL and the
# initiator-name ACL (iser_text.c), where over TCP either is enough
# (iscsid.c): so the target binds both, ALL and this initiator's name.
TGT_IQN = "iqn.2026-11.org.sroce:tgt-iser"
TGT_IMAGE = "/tmp/tgt-iser.img"
TGT_MODEL = "VIRTUAL-DISK"     # the SCSI model tgt reports for a disk LUN
INITIATOR_NAME = "$(sed -n 's/^InitiatorName=//p' /etc/iscsi/initiatorname.iscsi)"


def tgt_script(ns):
    prefix = "ip netns exec %s " % ns if ns else ""
    adm = "tgtadm --lld iser --mode target --tid 1"
    return "\n".join([
        "set -e",
        "truncate -s 128M %s" % TGT_IMAGE,
        "mkdir -p /run/lock/iscsi",
        "%stgtd -f >/tmp/tgtd.log 2>&1 &" % prefix,
        "for i in $(seq 100); do tgtadm --mode sys --op show >/dev/null 2>&1 && break; sleep 0.2; done",
        "%s --op new -T %s" % (adm, TGT_IQN),
        "tgtadm --lld iser --mode logicalunit --op new --tid 1 --lun 1 -b %s" % TGT_IMAGE,
        "%s --op bind -I ALL" % adm,
        "%s --op bind -Q %s" % (adm, INITIATOR_NAME),
        "modprobe sd_mod && modprobe ib_iser && iscsid",
    ])


def tgt_gone_script():
    return "; ".join([
        "iscsiadm -m node -T %s -u >/dev/null 2>&1" % TGT_IQN,
        "iscsiadm -m node -T %s -o delete >/dev/null 2>&1" % TGT_IQN,
        # tgtd keeps running on TERM while it has a target, and its own
        # shutdown (tgtadm --mode system --op delete) calls a NULL
        # function with the iser driver loaded (a segfault at ip 0, on rxe
        # as on sroce): its target goes, then tgtd is killed.
        "tgtadm --mode target --op delete --force --tid 1 >/dev/null 2>&1",
        "pkill -KILL -x tgtd; pkill -x iscsid",
        "for i in $(seq 100); do pgrep -x 'tgtd|iscsid' >/dev/null || break; sleep 0.2; done",
        "rmmod ib_iser libiscsi scsi_transport_iscsi sd_mod 2>/dev/null",
        "rm -f %s; true" % TGT_IMAGE,
    ])


@pytest.mark.parametrize("topology", TOPOLOGIES)
def test_tgt_iser_target(guest, topology):
    """Log in over iSER, verified I/O at three block sizes, log out."""
    ip, ns, devices = TOPOLOGIES[topology]
    try:
        guest.run(tgt_script(ns), timeout=60, check=True)
        before = link_counters(guest, devices[0])
        dev = lio.iser_login(guest, TGT_IQN, "%s:3260" % ip, TGT_MODEL,
                             log_cmd="cat /tmp/tgtd.log")
        assert_verified(guest, dev)
        moved = link_counters(guest, devices[0])["rx_bytes"] - before["rx_bytes"]
        assert moved >= 3 * 16 << 20, moved
    finally:
        guest.run(tgt_gone_script(), timeout=60)
