"""NVMe over Fabrics over sroce: the kernel's own target (nvmet-rdma) and
host (nvme-rdma), as a storage developer runs them on an RDMA NIC.  Both
ends are on sroce0 (loopback to 198.51.100.1 / 2001:db8:5100::1): kernel
consumers open their rdma_cm IDs in the initial network namespace, where
sroce1's netdev is not.  The namespace is a memory-backed null_blk, so
what fio verifies is what went over the fabric and came back.

Checked: data with fio --verify at queue depth 16 and block sizes 4 KiB
to 1 MiB over IPv4 and IPv6; a controller reset under I/O; a connected
host and target surviving `rdma link delete` and `rmmod sroce` (the
consumers see their device go, as on a hardware hot-unplug) and working
again once the device is back; unloading the consumers.  The kernel log
is checked after every test (conftest)."""
import re

import pytest

from blockio import (assert_verified, completed_writes, fio, io_in_flight_while,
                     writes_under_way)
from nvmet import NVMET, namespace_script, target_script, teardown_script
from test_faults import assert_consumer_left_nothing, consumer_baseline
from verbs_apps import ADD_SROCE0, CLIENT_IP, CLIENT_IP6, RELOAD_SROCE

# Allocation sites of kmalloc objects, for the memory check (test_faults).
GUEST_OPTIONS = {"cmdline": "slub_debug=U,kmalloc-*"}
# Two vCPUs (tests/conftest.py guest_cpus): test_one_io_queue_per_cpu
# would pass with one queue on one CPU and prove nothing.
GUEST_CPUS = 2

NQN = "nqn.2026-11.org.sroce:nvmeof-test"
PORTS = {"ipv4": (1, CLIENT_IP), "ipv6": (2, CLIENT_IP6)}


@pytest.fixture(scope="module")
def baseline(guest):
    return consumer_baseline(guest)


@pytest.fixture(scope="module")
def target(guest, baseline):
    guest.run(target_script(NQN, PORTS), timeout=120, check=True)
    yield
    unload(guest)


def unload(guest):
    """Disconnects, dismantles the target and unloads the consumers."""
    r = guest.run(teardown_script(NQN, PORTS), timeout=120)
    assert guest.run("lsmod | grep -E '^(nvmet|nvme_rdma) '").rc != 0, r


@pytest.fixture(autouse=True)
def _disconnected(guest, target):
    """Every test starts and ends with no controller of ours connected."""
    yield
    guest.run("nvme disconnect -n %s" % NQN, timeout=120)


def connect(guest, family="ipv4", tries=1):
    """nvme connect over sroce0; returns the namespace's block device.
    `tries` (a second apart): after a device came back, the target's
    port takes a few seconds to listen again (nvmet-rdma re-enables it
    from a timer)."""
    _, addr = PORTS[family]
    r = guest.run(
        "for i in $(seq %d); do nvme connect -t rdma -a %s -s 4420 -n %s && break; "
        "sleep 1; done" % (tries, addr, NQN), timeout=60 + 2 * tries, check=True)
    return wait_namespace(guest) or pytest.fail("no namespace after connect: %r" % r)


def controllers(guest):
    """Our subsystem's controllers: sysfs name -> transport."""
    out = guest.run("for c in /sys/class/nvme/nvme*; do [ -e $c/subsysnqn ] || continue; "
                    "echo $(basename $c) $(cat $c/subsysnqn) $(cat $c/transport); done").stdout
    return {name: tr for name, nqn, tr in re.findall(r"^(\S+) (\S+) (\S+)$", out, re.M)
            if nqn == NQN}


def wait_namespace(guest):
    """The block device of namespace 1 of our subsystem (nvmet.py says
    how it is found)."""
    # 30 s for the host's namespace scan (90 s on the debug kernel).
    r = guest.run(namespace_script(NQN, 30 * guest.slowdown), timeout=120)
    if r.rc:
        print(r.output)     # what /sys/block had, in the failure report
    return r.stdout.strip() if r.rc == 0 else None


def test_io_verified_ipv4(guest):
    io_verified(guest, "ipv4")


def test_io_verified_ipv6(guest):
    io_verified(guest, "ipv6")


def test_one_io_queue_per_cpu(guest):
    """nvme-rdma opens an I/O queue (a QP and a CQ on its own completion
    vector) per CPU, up to the device's completion vectors, as it does
    over rxe and a NIC: with one vector every CPU's I/O went through one
    queue, and 4 KiB random reads ran at half of rxe's rate (bench)."""
    connect(guest)
    cpus = int(guest.run("nproc", check=True).stdout)
    # Its own words: the path's queues have no sysfs entry of their own
    # under native multipath.
    said = re.findall(r"creating (\d+) I/O queues",
                      guest.run("dmesg | grep 'I/O queues' | tail -1").stdout)
    assert said == [str(cpus)], (said, cpus)


def io_verified(guest, family):
    dev = connect(guest, family)
    assert set(controllers(guest).values()) == {"rdma"}, controllers(guest)
    assert_verified(guest, dev)
    guest.run("nvme disconnect -n %s" % NQN, timeout=120, check=True)
    assert controllers(guest) == {}


def test_reset_under_io(guest):
    """`nvme reset` while writes are in flight: nvme-rdma tears its queues
    (QPs, MRs) down, reconnects and requeues what was in flight; every
    block still verifies."""
    dev = connect(guest)
    ctrl = sorted(controllers(guest))[0]
    # Reset once the writes are under way: more than 50 done, as asserted.
    r = guest.run(
        "%s; kill -0 $fio && echo writes-in-flight=$((%s - w0)); "
        "nvme reset /dev/%s; echo reset=$?; wait; cat /tmp/fio-reset.log; "
        "echo state=$(cat /sys/class/nvme/%s/state)"
        % (writes_under_way(dev, "--name=reset --rw=randwrite --bs=64k --size=64M",
                            "/tmp/fio-reset.log", 51), completed_writes(dev), ctrl, ctrl),
        timeout=300)
    print(r.output[-3000:])
    assert "reset=0" in r.stdout and "rc=0" in r.stdout, r
    # The reset came while fio was writing, after its first writes.
    m = re.search(r"^writes-in-flight=(\d+)$", r.stdout, re.M)
    assert m and int(m.group(1)) > 50, r
    assert "err= 0" in r.stdout and "state=live" in r.stdout, r


def assert_consumers_let_go(guest, action, back):
    """`action` (removing sroce0 under a connected host with I/O in flight)
    returns, the host's controller goes away and the I/O ends (with
    errors: its device is gone); `back` brings sroce back, and a new
    connection moves verified data again."""
    dev = connect(guest)
    r = io_in_flight_while(guest, dev, action)
    assert "action=0" in r.stdout, r
    assert "fio-still-running" not in r.stdout, r
    r = guest.run("for i in $(seq 300); do [ -z \"$(ls /sys/class/nvme 2>/dev/null)\" ] && "
                  "exit 0; sleep 0.2; done; ls -l /sys/class/nvme; exit 1", timeout=120)
    assert r.rc == 0, ("controller left behind", r)
    guest.run(back, timeout=120, check=True)
    dev = connect(guest, tries=30)
    r = fio(guest, dev, "--name=back --rw=randwrite --bs=64k --size=16M")
    assert r.rc == 0 and "err= 0" in r.stdout, r


def relisten():
    """The target's ports listen again, as an administrator makes them
    after the port's device came back: nvmet-rdma drops a listener whose
    device went away (its cm_id's DEVICE_REMOVAL) and, unlike after an
    address change, does not listen again by itself (Linux 6.1: hosts
    get "Connect rejected: status 8 (invalid service ID)").  Unlinking
    the subsystem disables the port, linking it enables it."""
    return "; ".join("rm %s/ports/%d/subsystems/%s && ln -s %s/subsystems/%s %s/ports/%d/subsystems/"
                     % (NVMET, port, NQN, NVMET, NQN, NVMET, port)
                     for port, _ in PORTS.values())


def test_link_delete_while_connected(guest):
    assert_consumers_let_go(guest, "rdma link delete sroce0", ADD_SROCE0 + " && " + relisten())


def test_rmmod_sroce_while_connected(guest):
    assert_consumers_let_go(guest, "rmmod sroce", RELOAD_SROCE + " && " + relisten())


def test_zzz_unload_and_memory_back_to_baseline(guest, target, baseline):
    """The consumers unload and leave nothing behind in sroce or the RDMA
    core (test_faults.assert_consumer_left_nothing)."""
    unload(guest)
    assert_consumer_left_nothing(guest, baseline)
