"""Fault injection (kernel/fault.c, README "Fault injection"): every knob
on a real verbs workload.  The rules go in /sys/kernel/debug/sroce/DEV/;
the workloads are fault_app.py's (RC and UD QPs in loopback on sroce0,
data compared at the far end), perftest and ibv_rc_pingpong across the
veth pair.  What a rule did shows in its listing (matched, injected) and
in the port's fault_* counters; each test checks both against the effect
the transport must show (retransmits, ICRC errors, duplicates, NAKs,
port events) and that the data still arrives intact.
"""
import json
import os
import re
import time

import pytest

from verbs_apps import CLIENT_IP, SERVER_IP, gid_index, link_counters, run_pair

HERE = os.path.dirname(os.path.abspath(__file__))
APP = "python3 %s" % os.path.join(HERE, "fault_app.py")
DEBUGFS = "/sys/kernel/debug/sroce"
FAULT_COUNTERS = ("fault_drop", "fault_delay", "fault_dup", "fault_corrupt",
                  "fault_rnr_nak", "fault_access_nak", "fault_link_flaps",
                  "fault_link_down_drop")
# The event watcher has its device open (events queue up from then on):
# a busy guest may take seconds to start python.
EVENTS_READY = ("for i in $(seq 600); do grep -q ready /tmp/ev.txt 2>/dev/null "
                "&& break; sleep 0.1; done; ")
LISTED = re.compile(r"^(\d+): (.*) matched=(\d+) injected=(\d+)$")


def faults_file(dev):
    return "%s/%s/faults" % (DEBUGFS, dev)


def link_file(dev):
    return "%s/%s/link" % (DEBUGFS, dev)


@pytest.fixture(scope="module")
def gids(guest):
    guest.run("mountpoint -q /sys/kernel/debug || "
              "mount -t debugfs none /sys/kernel/debug", check=True)
    return gid_index(guest, "sroce0", CLIENT_IP), gid_index(guest, "sroce1", SERVER_IP)


@pytest.fixture(autouse=True)
def _no_rules_left(guest, gids):
    """Every test starts and ends without rules, with the port up."""
    yield
    guest.run("for d in sroce0 sroce1; do echo clear > {f}; echo up > {l}; done; "
              "ip netns exec peer tc qdisc del dev veth1 clsact 2>/dev/null; true"
              .format(f=faults_file("$d"), l=link_file("$d")), check=True)


def rules(text):
    """[(id, rule text, matched, injected)] of a listing."""
    out = []
    for line in text.splitlines():
        m = LISTED.match(line)
        assert m, line
        out.append((int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4))))
    return out


def listing(guest, dev="sroce0"):
    return rules(guest.run("cat %s" % faults_file(dev), check=True).stdout)


def app(guest, *args, timeout=300):
    r = guest.run(" ".join([APP] + [_q(a) for a in args]), timeout=timeout)
    assert r.rc == 0, r
    return json.loads(r.stdout.strip().splitlines()[-1])


def _q(s):
    s = str(s)
    return "'%s'" % s.replace("'", "'\\''")


def counters_delta(guest, before, dev="sroce0"):
    after = link_counters(guest, dev)
    return {k: after[k] - before.get(k, 0) for k in after}


def rc(guest, gids, op, iters, size, rule, rnr_retry=7):
    """fault_app's RC loopback on sroce0 under `rule`: (result, the one
    rule's (id, text, matched, injected), counter deltas)."""
    before = link_counters(guest, "sroce0")
    res = app(guest, "rc", "sroce0", gids[0], op, iters, size, rule, rnr_retry)
    [listed] = rules(res["faults"])
    return res, listed, counters_delta(guest, before)


def test_off_by_default(guest, gids):
    """A new device: no rules, the port not forced, every fault counter 0."""
    r = guest.run("cat {f0} {l0} {f1} {l1}".format(
        f0=faults_file("sroce0"), l0=link_file("sroce0"),
        f1=faults_file("sroce1"), l1=link_file("sroce1")), check=True)
    assert r.stdout == "up\nup\n", r
    for c in (link_counters(guest, "sroce0"), _peer_counters(guest)):
        assert {k: c[k] for k in FAULT_COUNTERS} == dict.fromkeys(FAULT_COUNTERS, 0), c


def test_rules_are_checked_listed_and_removed(guest, gids):
    """A bad rule is refused with EINVAL and the reason in the kernel log;
    a listed rule written back reads the same; del and clear remove;
    at most 16 rules."""
    f = faults_file("sroce0")
    for bad in ("lose", "drop every=0", "delay", "rnr_nak dir=tx",
                "drop class=acks", "drop qpn=16777216"):
        r = guest.run("echo %s > %s" % (_q(bad), f))
        assert r.rc != 0 and "Invalid argument" in r.stderr, (bad, r)
    log = "\n".join(guest.new_kernel_log())
    assert "fault rule not taken: delay needs delay_us" in log, log
    assert listing(guest) == []

    guest.run("echo 'delay class=ack,cnp dir=tx qpn=0x20 prob=0.5 every=2 "
              "after=3 count=9 delay_us=700 seed=77' > %s" % f, check=True)
    [(rid, text, matched, injected)] = listing(guest)
    assert text == ("delay dir=tx class=ack,cnp qpn=32 prob=0.500000 every=2 "
                    "after=3 count=9 delay_us=700 seed=77"), text
    assert (matched, injected) == (0, 0)
    guest.run("echo %s > %s" % (_q(text), f), check=True)   # written back
    [first, second] = listing(guest)
    assert second[1] == text and second[0] == rid + 1, (first, second)
    # No seed given: one is drawn, and listed so the run can be replayed.
    guest.run("echo drop > %s" % f, check=True)
    assert re.search(r" seed=\d+$", listing(guest)[2][1]), listing(guest)

    guest.run("echo 'del %d' > %s" % (rid, f), check=True)
    assert [r[0] for r in listing(guest)] == [rid + 1, rid + 2]
    r = guest.run("echo 'del %d' > %s" % (rid, f))
    assert r.rc != 0 and "No such file" in r.stderr, r
    for _ in range(14):
        guest.run("echo 'drop every=1000' > %s" % f, check=True)
    r = guest.run("echo 'drop every=1000' > %s" % f)
    assert r.rc != 0 and "No space left" in r.stderr, r
    guest.run("echo clear > %s" % f, check=True)
    assert listing(guest) == []


def test_ack_drops_cause_retransmits_and_writes_verify(guest, gids):
    """Every 3rd ACK sroce0 receives is lost: the requester retransmits,
    every 64 KiB WRITE still arrives intact."""
    res, (_, _, matched, injected), d = rc(
        guest, gids, "write", 30, 65536, "drop dir=rx class=ack every=3")
    assert res["verified"] == 30 and not res["failed"], res
    assert injected == matched // 3 and injected > 0, res
    assert d["fault_drop"] == injected, d
    assert d["retransmits"] > 0, d


def test_every_nth_request_is_dropped_exactly(guest, gids):
    """`every=5` on outgoing requests: exactly the 5th, 10th ... packet
    the rule selects is lost (retransmissions included), and the SENDs
    all arrive intact."""
    res, (_, _, matched, injected), d = rc(
        guest, gids, "send", 30, 8192, "drop dir=tx class=request every=5")
    assert res["verified"] == 30 and not res["failed"], res
    assert injected == matched // 5 and injected > 0, res
    assert d["fault_drop"] == injected and d["retransmits"] > 0, d


def test_read_response_drops(guest, gids):
    """READ responses lost with probability 0.1: the READs are retried and
    every one returns the responder's data."""
    res, (_, _, matched, injected), d = rc(
        guest, gids, "read", 30, 65536,
        "drop dir=rx class=read_resp prob=0.1 seed=5")
    assert res["verified"] == 30 and not res["failed"], res
    assert 0 < injected < matched, res
    assert d["fault_drop"] == injected and d["retransmits"] > 0, d
    # One rewind per gap, not one per response behind it.
    assert d["retransmits"] <= d["fault_drop"] + d["timeouts"] + d["seq_err_rcvd"], d


def test_duplicates_are_recognised(guest, gids):
    """Every 4th request goes out twice: the responder sees duplicates,
    executes each request once, and the data is intact."""
    res, (_, _, matched, injected), d = rc(
        guest, gids, "write", 30, 65536, "dup dir=tx class=request every=4")
    assert res["verified"] == 30 and not res["failed"], res
    assert injected == matched // 4 and injected > 0, res
    assert d["fault_dup"] == injected, d
    assert d["dup_requests"] >= injected, d


@pytest.mark.parametrize("direction", ["tx", "rx"])
def test_corruption_is_caught_by_the_icrc(guest, gids, direction):
    """Five requests get one bit flipped after their ICRC was computed, on
    the way out or on the way in: the receiver counts five ICRC errors,
    the requester resends.  A device talking to itself sends without an
    ICRC (net.c's sroce_out: the packet never meets a wire), but not while
    it has fault rules."""
    res, (_, _, _, injected), d = rc(
        guest, gids, "write", 30, 65536,
        "corrupt dir=%s class=request every=10 count=5 seed=1" % direction)
    assert res["verified"] == 30 and not res["failed"], res
    assert injected == 5 and d["fault_corrupt"] == 5, (res, d)
    assert d["rx_icrc_errors"] == 5 and d["retransmits"] > 0, d


def test_delay_holds_packets_back(guest, gids):
    """Each request is held 50 ms: ten SENDs, one at a time, cannot take
    less than half a second, and each still arrives (the QP's ACK timeout
    is longer than the delay)."""
    t0 = time.monotonic()
    res, (_, _, matched, injected), d = rc(
        guest, gids, "send", 10, 256, "delay dir=tx class=request delay_us=50000")
    elapsed = time.monotonic() - t0
    assert res["verified"] == 10 and not res["failed"], res
    assert injected == matched >= 10 and d["fault_delay"] == injected, (res, d)
    assert elapsed >= 0.5, elapsed


def test_rnr_naks_are_retried(guest, gids):
    """Three SENDs are answered with RNR NAKs although receives are
    posted: the requester waits and retries, every SEND arrives; with
    rnr_retry 0 the first one fails with RNR_RETRY_EXC_ERR."""
    res, (_, _, _, injected), d = rc(guest, gids, "send", 20, 4096, "rnr_nak count=3")
    assert res["verified"] == 20 and not res["failed"], res
    assert injected == 3 and d["fault_rnr_nak"] == 3, (res, d)
    assert d["rnr_nak_sent"] == 3 and d["rnr_nak_rcvd"] == 3, d
    res, _, _ = rc(guest, gids, "send", 5, 4096, "rnr_nak", rnr_retry=0)
    assert res["verified"] == 0 and res["failed"] == "IBV_WC_RNR_RETRY_EXC_ERR", res


def test_a_receiver_that_falls_behind(guest, gids):
    """No fault rule: the receiver posts its receives 200 ms after 32
    four-packet SENDs, then one per millisecond.  Every SEND meets RNR
    NAKs while the ones behind it are in flight; those cost no transport
    retry (retry_cnt is 7, rnr_retry infinite), so all 32 arrive intact."""
    before = link_counters(guest, "sroce0")
    res = app(guest, "late_recv", "sroce0", gids[0], "sroce0", gids[0], 32, 4096, 200)
    d = counters_delta(guest, before)
    assert res == {"sent": 32, "received": 32, "failed": None, "data_ok": True}, (res, d)
    assert d["rnr_nak_rcvd"] >= 1, d


def test_access_naks_fail_the_request(guest, gids):
    """A remote-access NAK for the target QP's first WRITE: the requester's
    completion says REM_ACCESS_ERR, as for a bad R_Key."""
    res, (_, text, matched, injected), d = rc(
        guest, gids, "write", 5, 4096, "access_nak qpn={qpn}")
    assert res["verified"] == 0 and res["failed"] == "IBV_WC_REM_ACCESS_ERR", res
    assert (matched, injected) == (1, 1), res
    assert d["fault_access_nak"] == 1 and d["remote_access_errors"] == 1, d


def test_a_seed_replays_and_a_qpn_selects(guest, gids):
    """UD sends alternate between receivers A and B; a rule drops A's
    incoming packets with probability 0.3.  The same seed loses the same
    messages again; another seed loses others; B loses none."""
    rule = "drop dir=rx qpn={qpn} prob=0.3 seed=%d"
    runs = [app(guest, "ud", "sroce0", gids[0], 200, rule % s) for s in (11, 11, 12)]
    for r in runs:
        [(_, _, matched, injected)] = rules(r["faults"])
        assert r["received_b"] == list(range(1, 200, 2)), r
        assert matched == 100 and len(r["received_a"]) == 100 - injected, r
        assert 10 < injected < 50, r
    assert runs[0]["received_a"] == runs[1]["received_a"], runs
    assert runs[0]["received_a"] != runs[2]["received_a"], runs


def test_direction_selects(guest, gids):
    """Rules that never hit (every=2^32-1) count what they select: on
    sroce0 writing to sroce1, a tx rule for requests sees them all and an
    rx rule for requests sees none; an rx rule for ACKs sees ACKs."""
    never = "drop every=4294967295 class=%s dir=%s"
    for cls, d in (("request", "tx"), ("request", "rx"), ("ack", "rx")):
        guest.run("echo %s > %s" % (_q(never % (cls, d)), faults_file("sroce0")),
                  check=True)
    before = link_counters(guest, "sroce0")
    # -F, as everywhere else: without it perftest exits 1 when its clock
    # calibration fails (r^2 < 0.9 in a loaded TCG guest), and this test
    # needs only its traffic.
    rc_, out = run_pair(guest, "ib_write_bw -d sroce1 -x %d -F -s 4096 -n 100" % gids[1],
                        "ib_write_bw -d sroce0 -x %d -F -s 4096 -n 100 %s"
                        % (gids[0], SERVER_IP))
    assert rc_ == 0, out
    d = counters_delta(guest, before)
    tx_req, rx_req, rx_ack = [r[2] for r in listing(guest)]
    assert tx_req >= 100 * 4, (tx_req, d)       # 4 KiB at a 1024-byte MTU
    assert rx_req == 0 and 0 < rx_ack <= d["rx_packets"], (rx_req, rx_ack, d)
    assert d["fault_drop"] == 0, d


def test_cnps_can_be_dropped(guest, gids):
    """veth1 marks everything sroce1 sends CE; sroce0 answers with CNPs.
    A rule dropping sroce0's outgoing CNPs takes every one of them: none
    reaches sroce1."""
    guest.run_peer(
        "tc qdisc add dev veth1 clsact && tc filter add dev veth1 egress "
        "protocol ip prio 1 u32 match ip protocol 17 0xff match ip dport 4791 "
        "0xffff action pedit ex munge ip tos set 0x6b pipe action csum iph",
        check=True)
    guest.run("echo 'drop dir=tx class=cnp' > %s" % faults_file("sroce0"), check=True)
    before0 = link_counters(guest, "sroce0")
    before1 = _peer_counters(guest)
    rc_, out = run_pair(guest, "ib_write_bw -d sroce0 -x %d -F -s 65536 -n 200" % gids[0],
                        "ip netns exec peer ib_write_bw -d sroce1 -x %d -F -s 65536 "
                        "-n 200 %s" % (gids[1], CLIENT_IP), server_ns=None)
    assert rc_ == 0, out
    d0 = counters_delta(guest, before0)
    d1 = {k: v - before1[k] for k, v in _peer_counters(guest).items()}
    [(_, _, matched, injected)] = listing(guest)
    assert d0["ecn_marked_rcvd"] > 0 and d0["cnp_sent"] > 0, d0
    assert injected == matched == d0["cnp_sent"] == d0["fault_drop"], (matched, d0)
    assert d1["cnp_rcvd"] == 0, d1


def _peer_counters(guest):
    out = guest.run_peer("rdma statistic show link sroce1/1", check=True).stdout
    return {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", out)}


def test_link_down_and_up(guest, gids):
    """`down` holds the port DOWN (ibv_devinfo, the link file) until `up`;
    an application sees IBV_EVENT_PORT_ERR then IBV_EVENT_PORT_ACTIVE,
    and the PMA's LinkDownedCounter counts the fall."""
    before = link_counters(guest, "sroce0")
    r = guest.run(
        "rm -f /tmp/ev.txt; timeout 90 {app} events sroce0 > /tmp/ev.txt & ev=$!; {ready}"
        "echo down > {l}; cat {l}; ibv_devinfo -d sroce0 | grep -o 'PORT_[A-Z]*'; "
        "echo up > {l}; cat {l}; ibv_devinfo -d sroce0 | grep -o 'PORT_[A-Z]*'; "
        "wait $ev; echo events=$?; cat /tmp/ev.txt; "
        "cat /sys/class/infiniband/sroce0/ports/1/counters/link_downed"
        .format(app=APP, l=link_file("sroce0"), ready=EVENTS_READY), timeout=120)
    lines = r.stdout.splitlines()
    assert lines[:5] == ["down", "PORT_DOWN", "up", "PORT_ACTIVE", "events=0"], r
    assert [l for l in lines if l.startswith("IBV_EVENT_")] == [
        "IBV_EVENT_PORT_ERR", "IBV_EVENT_PORT_ACTIVE"], r
    d = counters_delta(guest, before)
    assert d["fault_link_flaps"] == 1 and d["link_downed"] == 1, d
    assert int(lines[-1]) >= 1, r


def test_link_flap_under_traffic(guest, gids):
    """`flap 150` while RC WRITEs run: the port events come, the packets
    sent meanwhile are lost and retransmitted, and every WRITE arrives
    intact; the port is back up afterwards.  The application flaps the
    port itself, just before its 150th WRITE posts: a flap timed from the
    shell once enough packets had gone could fall in the gap between two
    WRITEs (CI at 36a06ff: nothing lost, nothing retransmitted)."""
    before = link_counters(guest, "sroce0")
    r = guest.run(
        "rm -f /tmp/ev.txt; timeout 90 {app} events sroce0 > /tmp/ev.txt & ev=$!; {ready}"
        "{app} rc_flap sroce0 {g} 300 65536 150 150 > /tmp/rc.json; rc=$?; "
        "wait $ev; echo events=$?; echo rc=$rc; cat {l}; "
        "cat /tmp/ev.txt /tmp/rc.json".format(app=APP, g=gids[0], l=link_file("sroce0"),
                                              ready=EVENTS_READY),
        timeout=300)
    lines = r.stdout.splitlines()
    assert lines[:3] == ["events=0", "rc=0", "up"], r
    assert [l for l in lines if l.startswith("IBV_EVENT_")] == [
        "IBV_EVENT_PORT_ERR", "IBV_EVENT_PORT_ACTIVE"], r
    res = json.loads(lines[-1])
    assert res["verified"] == 300 and not res["failed"], res
    d = counters_delta(guest, before)
    assert d["fault_link_flaps"] == 1 and d["link_downed"] == 1, d
    assert d["fault_link_down_drop"] > 0 and d["retransmits"] > 0, d
