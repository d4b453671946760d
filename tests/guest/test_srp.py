"""SRP over sroce: the kernel's SRP target (ib_srpt, under LIO) and its
SRP initiator (ib_srp), logging in through the RDMA CM as on RoCE NICs.
Both are on sroce0 (loopback to 198.51.100.1 / 2001:db8:5100::1): both
open their rdma_cm IDs in the initial network namespace.  The LUN is a
LIO RAM disk (lio.py).

Checked: data with fio --verify at queue depth 16 and block sizes 4 KiB
to 1 MiB over IPv4 and IPv6; a logout (the remote port deleted) under
I/O ends the I/O with errors, not a hang, and a new login moves verified
data; `rdma link delete` and `rmmod sroce` under I/O return, the SCSI
host goes as on a hardware hot-unplug, and once sroce is back (and the
target port made again: ib_srpt forgets a port whose device went) a new
login works.  The kernel log is checked after every test (conftest), the
memory at the end."""
import pytest

import lio
from blockio import assert_verified, fio, io_in_flight_while
from test_faults import assert_consumer_left_nothing, consumer_baseline
from verbs_apps import ADD_SROCE0, CLIENT_IP, CLIENT_IP6, RELOAD_SROCE

# Allocation sites of kmalloc objects, for the memory check (test_faults).
GUEST_OPTIONS = {"cmdline": "slub_debug=U,kmalloc-*"}

SRPT = lio.TARGET + "/srpt"
CM_PORT = 5555  # ib_srpt's RDMA CM port (blktests' choice; no IANA port)
DESTS = {"ipv4": "%s:%d" % (CLIENT_IP, CM_PORT), "ipv6": "[%s]:%d" % (CLIENT_IP6, CM_PORT)}
# ib_srpt names an RDMA CM session after the target's own address as
# "%pIS" prints it (IPv6 in full), and LIO admits it by an ACL of that name.
ACLS = (CLIENT_IP, "2001:0db8:5100:0000:0000:0000:0000:0001")


def target_port_script():
    """sroce0's SRP target port: named by the port GUID (the low half of
    GID 0), one portal group exporting LUN 0 to the two ACLs."""
    tpg = "%s/$tp/$tp" % SRPT
    lines = [
        "set -e",
        "gid=$(cat /sys/class/infiniband/sroce0/ports/1/gids/0); tp=${gid#fe80:0000:0000:0000:}",
        "mkdir %s/$tp %s" % (SRPT, tpg),
        lio.export_lun_script(tpg),
    ]
    for acl in ACLS:
        lines.append("mkdir -p %s/acls/%s/lun_0 && ln -s %s/lun/lun_0 %s/acls/%s/lun_0/lun_0"
                     % (tpg, acl, tpg, tpg, acl))
    lines.append("echo 1 > %s/enable" % tpg)
    return "\n".join(lines)


def target_script():
    return "\n".join([
        lio.backstore_script(),
        "modprobe ib_srpt && modprobe sd_mod && modprobe ib_srp",
        # Linux 6.1 takes the RDMA CM port here (newer ones also as a
        # module parameter); 0 means no RDMA CM listener.
        "mkdir %s && echo %d > %s/discovery_auth/rdma_cm_port" % (SRPT, CM_PORT, SRPT),
        target_port_script(),
    ])


def stale_port_script():
    """Removes sroce0's old target port (its portal group, LUN and ACLs):
    after its device went, ib_srpt keeps the configfs folders but no
    longer serves them."""
    tpg = "%s/*/*" % SRPT
    return "; ".join([
        "echo 0 > %s/enable" % tpg,
        "rm -f %s/acls/*/lun_0/lun_0 %s/lun/lun_0/ram0" % (tpg, tpg),
        "rmdir %s/acls/*/lun_0 %s/acls/* %s/lun/lun_0 %s" % (tpg, tpg, tpg, tpg),
        "rmdir $(ls -d %s/* | grep -v -e discovery_auth -e version)" % SRPT,
    ]) + " 2>/dev/null; true"


def logout_script():
    return "for p in /sys/class/srp_remote_ports/port-*; do [ -e $p ] && echo 1 > $p/delete; done; true"


def unload(guest):
    lio.unload(guest, "srpt", logout_script(), ("ib_srp", "ib_srpt", "scsi_transport_srp"))


@pytest.fixture(scope="module")
def baseline(guest):
    return consumer_baseline(guest)


@pytest.fixture(scope="module")
def target(guest, baseline):
    guest.run(target_script(), timeout=120, check=True)
    yield
    unload(guest)


@pytest.fixture(autouse=True)
def _logged_out(guest, target):
    """Every test starts and ends with no SRP login."""
    yield
    guest.run(logout_script() + "; sleep 1", timeout=120)


def login(guest, family="ipv4", tries=1):
    """Logs ib_srp in to the target over sroce0; returns the LUN's disk.
    `tries`, a second apart: a port made anew takes a moment to serve."""
    r = guest.run(
        "guid=$(cat /sys/module/ib_srpt/parameters/srpt_service_guid); "
        "for i in $(seq %d); do echo id_ext=$guid,ioc_guid=$guid,dest=%s "
        "> /sys/class/infiniband_srp/srp-sroce0-1/add_target && exit 0; sleep 1; done; exit 1"
        % (tries, DESTS[family]), timeout=60 + 2 * tries)
    assert r.rc == 0, ("login failed", r)
    return lio.wait_disk(guest, "ib_srp") or pytest.fail("no disk after login: %r" % r)


@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
def test_io_verified(guest, family):
    dev = login(guest, family)
    assert_verified(guest, dev)


def test_logout_and_login_under_io(guest):
    """Deleting the remote port while writes are in flight: the writes end
    with errors (the disk is gone), nothing hangs; a new login verifies."""
    dev = login(guest)
    r = io_in_flight_while(guest, dev, logout_script())
    assert "action=0" in r.stdout and "fio-still-running" not in r.stdout, r
    assert lio.scsi_hosts(guest, "ib_srp") == [], "SCSI host left behind"
    assert_verified(guest, login(guest))


def assert_initiator_lets_go(guest, action, back):
    dev = login(guest)
    r = io_in_flight_while(guest, dev, action)
    assert "action=0" in r.stdout, r
    assert "fio-still-running" not in r.stdout, r
    r = guest.run("for i in $(seq 300); do [ -z \"$(ls /sys/class/srp_remote_ports)\" ] && "
                  "exit 0; sleep 0.2; done; ls -l /sys/class/srp_remote_ports; exit 1", timeout=120)
    assert r.rc == 0, ("remote port left behind", r)
    guest.run(back, timeout=120, check=True)
    guest.run(stale_port_script(), timeout=60)
    guest.run(target_port_script(), timeout=60, check=True)
    dev = login(guest, tries=30)
    r = fio(guest, dev, "--name=back --rw=randwrite --bs=64k --size=16M")
    assert r.rc == 0 and "err= 0" in r.stdout, r


def test_link_delete_while_logged_in(guest):
    assert_initiator_lets_go(guest, "rdma link delete sroce0", ADD_SROCE0)


def test_rmmod_sroce_while_logged_in(guest):
    assert_initiator_lets_go(guest, "rmmod sroce", RELOAD_SROCE)


def test_zzz_unload_and_memory_back_to_baseline(guest, target, baseline):
    """SRP and LIO unload and leave nothing behind in sroce or the RDMA
    core (test_faults.assert_consumer_left_nothing)."""
    unload(guest)
    assert_consumer_left_nothing(guest, baseline)
