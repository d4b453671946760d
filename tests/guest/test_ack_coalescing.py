"""Coalesced ACKs (kernel/ackq.c): the responder answers a burst of
messages that each ask for an ACK with one ACK for the newest, sent when
the receive batch they came in ends, and a lone message with its own ACK
in the same softirq pass.  The server of ib_write_bw and ib_send_lat
sends nothing but ACKs and its own messages, so its tx_packets count them."""
import pytest

from verbs_apps import SERVER_IP, gid_index, link_counters, run_pair

# Core: runs on every Debian release with --releases (scripts/test).
ALL_RELEASES = True
# Two vCPUs (tests/conftest.py guest_cpus): its streams' two ends each
# spin a vCPU; 1.6x as long on one beside another guest
# (docs/test-time.md).
GUEST_CPUS = 2

WRS = 5000
# WRs per ibv_post_send of the streaming client; divides WRS.
LIST = 8


@pytest.fixture(scope="module")
def gids(guest):
    return (gid_index(guest, "sroce0", "198.51.100.1"),
            gid_index(guest, "sroce1", SERVER_IP))


def server_tx_packets(guest, server, client):
    """Runs `server` on sroce1 (namespace peer) and `client` on sroce0;
    returns the packets sroce1 sent meanwhile.  Nothing may have been
    sent twice: a held ACK nobody sent would show as retries."""
    def count():
        c, s = link_counters(guest, "sroce0"), link_counters(guest, "sroce1")
        return s["tx_packets"], c["retransmits"] + s["retransmits"]
    before = count()
    rc, out = run_pair(guest, server, client, timeout=300)
    assert rc == 0, out
    after = count()
    assert after[1] == before[1], "retransmits: %d" % (after[1] - before[1])
    return after[0] - before[0]


def test_a_stream_is_acknowledged_per_burst(guest, gids):
    """5000 one-packet WRITEs, each asking for an ACK (the last packet of
    every message does): answered one by one that was 5000 ACKs, as many
    packets as the data.  The client posts them in lists of LIST (one
    producer store each), so the engine sends at least a list per run
    unless its budget (SROCE_SEND_BUDGET, 64) cuts one in two, and the
    server receives each run in one batch: at most two ACKs a list.
    Without --post_list the bursts were whatever the send-queue poller
    found when it looked, which a busy host made one WR in most runs
    (3022 ACKs in a CI run)."""
    acks = server_tx_packets(
        guest,
        "ib_write_bw -d sroce1 -x %d -F -s 64 -n %d -l %d" % (gids[1], WRS, LIST),
        "ib_write_bw -d sroce0 -x %d -F -s 64 -n %d -l %d %s" % (gids[0], WRS, LIST, SERVER_IP))
    assert 0 < acks <= 2 * WRS // LIST, acks


def test_a_lone_message_gets_its_own_ack(guest, gids):
    """Ping-pong: each SEND arrives alone, and its ACK must leave without
    waiting for company.  The server sends its n SENDs
    and at least one ACK for each of the client's n."""
    n = 500
    sent = server_tx_packets(
        guest,
        "ib_send_lat -d sroce1 -x %d -F -s 2 -n %d" % (gids[1], n),
        "ib_send_lat -d sroce0 -x %d -F -s 2 -n %d %s" % (gids[0], n, SERVER_IP))
    assert sent >= 2 * n, sent
