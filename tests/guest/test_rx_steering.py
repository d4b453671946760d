"""Receive steering (kernel/rxsteer.c): between two devices of one host,
the packets a busy send engine's CPU receives are delivered on the next
CPU, so that transmit and receive run side by side; a lone message is
received in place.  A setting of each receiving device, off by default
(/sys/class/infiniband/<dev>/rx_steer, kernel/rxsteer.c says why); these
tests turn it on.  The counter rx_steered says how many
packets took the other CPU.  Order within a flow must hold (every byte verified, with
packets lost and resent), and a device deleted while packets wait in its
queues goes cleanly (the kernel-log check runs after every test)."""
import pytest

from verbs_apps import (SERVER_IP, gid_index, link_counters, rc_pingpong, run_pair,
                        until_sent)

# Core: runs on every Debian release with --releases (scripts/test).
ALL_RELEASES = True
# Two vCPUs (tests/conftest.py guest_cpus): receive is steered to the
# other CPU; on one there is no other.
GUEST_CPUS = 2

MIB = 1 << 20
SETTING = "/sys/class/infiniband/%s/rx_steer"
DEVICES = ("sroce0", "sroce1")
FAULTS = "/sys/kernel/debug/sroce/%s/faults"


@pytest.fixture(scope="module")
def gids(guest):
    assert int(guest.run("nproc", check=True).stdout) >= 2, "needs two vCPUs"
    guest.run("mountpoint -q /sys/kernel/debug || "
              "mount -t debugfs none /sys/kernel/debug", check=True)
    return (gid_index(guest, "sroce0", "198.51.100.1"),
            gid_index(guest, "sroce1", SERVER_IP))


def steer(guest, on, devices=DEVICES):
    for d in devices:
        guest.run("echo %d > %s" % (on, SETTING % d), check=True)


def test_off_by_default(guest, gids):
    for d in DEVICES:
        assert guest.run("cat " + SETTING % d, check=True).stdout.strip() == "0", d


def test_the_setting_takes_booleans_only(guest, gids):
    r = guest.run("echo maybe > " + SETTING % "sroce0")
    assert r.rc != 0 and "Invalid argument" in r.stderr, r
    assert guest.run("cat " + SETTING % "sroce0", check=True).stdout.strip() == "0"


@pytest.fixture
def steering(guest, gids):
    """Steering on for one test; off again and no fault rules after it."""
    steer(guest, 1)
    yield
    steer(guest, 0)
    guest.run("for d in sroce0 sroce1; do echo clear > %s; done" % FAULTS % "$d",
              check=True)


def steered(guest, action, devices=DEVICES):
    """Runs action(); returns its result and rx_steered's growth on
    `devices` together."""
    def total():
        return sum(link_counters(guest, d)["rx_steered"] for d in devices)
    before = total()
    result = action()
    return result, total() - before


def write_bw(guest, gids, size, count):
    return run_pair(
        guest,
        "ib_write_bw -d sroce1 -x %d -F -s %d -n %d" % (gids[1], size, count),
        "ib_write_bw -d sroce0 -x %d -F -s %d -n %d %s" % (gids[0], size, count, SERVER_IP),
        timeout=300)


def test_bulk_is_received_on_the_other_cpu(guest, gids, steering):
    """1 MiB WRITEs leave in bursts: what they bring back is steered."""
    (rc, out), n = steered(guest, lambda: write_bw(guest, gids, MIB, 30))
    assert rc == 0, out
    assert n > 0, n


def test_lone_messages_are_received_in_place(guest, gids, steering):
    """A 2-byte ping-pong has one packet in flight at a time: no hop to
    another CPU adds to its latency."""
    (rc, out), n = steered(guest, lambda: run_pair(
        guest, "ib_send_lat -d sroce1 -x %d -F -s 2 -n 2000" % gids[1],
        "ib_send_lat -d sroce0 -x %d -F -s 2 -n 2000 %s" % (gids[0], SERVER_IP)))
    assert rc == 0, out
    assert n == 0, n


def test_off_receives_everything_in_place(guest, gids, steering):
    steer(guest, 0)
    (rc, out), n = steered(guest, lambda: write_bw(guest, gids, MIB, 30))
    assert rc == 0, out
    assert n == 0, n


def test_each_device_steers_by_its_own_setting(guest, gids, steering):
    """The WRITEs' data arrives at sroce1 in the sender's bursts: with
    steering on at sroce1 alone it is steered there; with it on at
    sroce0 alone, sroce1 receives everything in place."""
    steer(guest, 0, ["sroce0"])
    (rc, out), n = steered(guest, lambda: write_bw(guest, gids, MIB, 30), ["sroce1"])
    assert rc == 0 and n > 0, (n, out)
    steer(guest, 1, ["sroce0"])
    steer(guest, 0, ["sroce1"])
    (rc, out), n = steered(guest, lambda: write_bw(guest, gids, MIB, 30), ["sroce1"])
    assert rc == 0 and n == 0, (n, out)


def test_order_holds_with_packets_lost(guest, gids, steering):
    """1% of requests dropped at both senders (sroce's own fault rule, so
    the rest still go out and come back on the sending CPU): every 1 MiB
    message ibv_rc_pingpong -c checks arrives intact, through resends."""
    for d in ("sroce0", "sroce1"):
        guest.run("echo 'drop dir=tx class=request prob=0.01 seed=7' > %s"
                  % FAULTS % d, check=True)
    (rc, out), n = steered(guest, lambda: rc_pingpong(
        guest, gids, "-s %d -n 40 -c" % MIB, timeout=600))
    assert rc == 0 and "40 iters in" in out, out
    assert n > 0, n
    c = {d: link_counters(guest, d) for d in ("sroce0", "sroce1")}
    assert c["sroce0"]["fault_drop"] + c["sroce1"]["fault_drop"] > 0, c


def test_link_delete_with_packets_queued(guest, gids, steering):
    """sroce1 is deleted in the middle of a 1 MiB WRITE stream, while its
    queues may hold packets: the delete returns, nothing is left behind."""
    r = guest.run(
        "ip netns exec peer ib_write_bw -d sroce1 -x %d -F -s %d -D 20 "
        ">/tmp/srv.log 2>&1 & "
        "for i in $(seq 100); do ip netns exec peer ss -Hltn 'sport = :18515' "
        "| grep -q . && break; sleep 0.2; done; "
        "ib_write_bw -d sroce0 -x %d -F -s %d -D 20 %s >/tmp/cli.log 2>&1 & "
        "%s; before=$(rdma statistic show link sroce1/1 | "
        "grep -o 'rx_steered [0-9]*'); ip netns exec peer rdma link delete sroce1; "
        "echo \"delete rc=$? $before\"; wait; "
        "ip netns exec peer rdma link add sroce1 type sroce netdev veth1"
        % (gids[1], MIB, gids[0], MIB, SERVER_IP, until_sent("sroce0")), timeout=180)
    assert "delete rc=0" in r.stdout, r
    print(r.stdout)
