"""iSER over sroce: LIO's iSCSI target with iSER portals (ib_isert) and
the iSCSI initiator over iSER (ib_iser driven by open-iscsi's iscsid and
iscsiadm), both on sroce0 (loopback to 198.51.100.1 / 2001:db8:5100::1:
both open their rdma_cm IDs in the initial network namespace).  The LUN
is a LIO RAM disk (lio.py).

Checked: data with fio --verify at queue depth 16 and block sizes 4 KiB
to 1 MiB over IPv4 and IPv6, logout; `rdma link delete` and `rmmod
sroce` under verified writes return at once, the session waits in
recovery (iscsid keeps logging in again, as on a cable pull) and once
sroce is back (and the target's portals enabled again: ib_isert drops a
listener whose device went) the writes complete and verify.  The kernel
log is checked after every test (conftest), the memory at the end."""
import pytest

import lio
from blockio import assert_verified, writes_under_way
from test_faults import assert_consumer_left_nothing, consumer_baseline
from verbs_apps import ADD_SROCE0, CLIENT_IP, CLIENT_IP6, RELOAD_SROCE

# Allocation sites of kmalloc objects, for the memory check (test_faults).
GUEST_OPTIONS = {"cmdline": "slub_debug=U,kmalloc-*"}

IQN = "iqn.2026-11.org.sroce:iser-test"
TPG = "%s/iscsi/%s/tpgt_1" % (lio.TARGET, IQN)
PORTALS = {"ipv4": "%s:3260" % CLIENT_IP, "ipv6": "[%s]:3260" % CLIENT_IP6}


def target_script():
    """One portal group, open to any initiator (no ACLs, no CHAP), an
    iSER portal per family."""
    lines = [
        lio.backstore_script(),
        "modprobe iscsi_target_mod && modprobe ib_isert",
        "modprobe sd_mod && modprobe ib_iser",
        lio.export_lun_script(TPG),
    ]
    for attr, value in (("generate_node_acls", 1), ("cache_dynamic_acls", 1),
                        ("demo_mode_write_protect", 0), ("authentication", 0)):
        lines.append("echo %d > %s/attrib/%s" % (value, TPG, attr))
    for portal in PORTALS.values():
        lines.append("mkdir '%s/np/%s' && echo 1 > '%s/np/%s/iser'" % (TPG, portal, TPG, portal))
    lines += ["echo 1 > %s/enable" % TPG,
              # The initiator's daemon, as its service starts it.
              "mkdir -p /run/lock/iscsi && iscsid"]
    return "\n".join(lines)


def relisten_script():
    """The portals listen again, as an administrator makes them after
    their device came back: turning iSER off and on re-binds them."""
    return "; ".join("echo 0 > '%s/np/%s/iser' && echo 1 > '%s/np/%s/iser'"
                     % (TPG, p, TPG, p) for p in PORTALS.values())


def logout_script():
    return ("iscsiadm -m node -T %s -u >/dev/null 2>&1; "
            "iscsiadm -m node -T %s -o delete >/dev/null 2>&1; true" % (IQN, IQN))


def unload(guest):
    lio.unload(guest, "iscsi", logout_script() + "; pkill -x iscsid",
               ("ib_iser", "ib_isert", "iscsi_target_mod"))


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
    """Every test starts and ends with no iSCSI session."""
    yield
    guest.run(logout_script(), timeout=120)


def login(guest, family="ipv4"):
    """A node record for the portal on open-iscsi's iser interface, a
    login; returns the LUN's disk."""
    return lio.iser_login(guest, IQN, PORTALS[family])


@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
def test_io_verified(guest, family):
    dev = login(guest, family)
    assert_verified(guest, dev)


# Writes at most 16 MiB/s: the 64 MiB take 4 s or more however fast the
# host, so `action` lands among them.  (Unlimited, a fast host finished
# them in 1.8 s, before a fixed 3 s wait ended, and the action fell on
# the verify reads instead.)
RECOVER_JOB = "--name=recover --rw=randwrite --bs=64k --size=64M --rate=,16m"
# What the initiator's kernel said, printed when the I/O failed.
ISCSI_LOG = "dmesg | grep -E 'iscsi|iser|connection[0-9]|session[0-9]|sd [0-9]' | tail -40"


def assert_session_recovers(guest, action, back):
    """`action` takes sroce0 away under 64 MiB of verified writes (once
    20 have completed) and returns; the writes wait (the session is in
    recovery, not failed: open-iscsi's replacement timeout is 120 s);
    `back` restores sroce and the target's portals; the session logs in
    again and every block verifies."""
    dev = login(guest)
    r = guest.run(
        "%s; timeout 120 bash -c '%s'; echo action=$?; sleep 5; "
        "kill -0 $fio 2>/dev/null && echo waiting; "
        "%s; echo back=$?; "
        "for i in $(seq 900); do kill -0 $fio 2>/dev/null || break; sleep 0.2; done; "
        "if kill -0 $fio 2>/dev/null; then echo fio-still-running; else wait; fi; "
        "grep -E 'err=|rc=|READ:|WRITE:' /tmp/fio-recover.log; "
        "grep -q rc=0 /tmp/fio-recover.log || %s"
        % (writes_under_way(dev, RECOVER_JOB, "/tmp/fio-recover.log"), action, back, ISCSI_LOG),
        timeout=400)
    print(r.output[-3000:])
    assert "action=0" in r.stdout and "back=0" in r.stdout, r
    assert "waiting" in r.stdout, ("the writes could not have finished without sroce", r)
    assert "fio-still-running" not in r.stdout, r
    assert "rc=0" in r.stdout and "err= 0" in r.stdout, r


def test_link_delete_while_logged_in(guest):
    assert_session_recovers(guest, "rdma link delete sroce0",
                            ADD_SROCE0 + " && " + relisten_script())


def test_rmmod_sroce_while_logged_in(guest):
    assert_session_recovers(guest, "rmmod sroce", RELOAD_SROCE + " && " + relisten_script())


def test_zzz_unload_and_memory_back_to_baseline(guest, target, baseline):
    """iSER and LIO unload and leave nothing behind in sroce or the RDMA
    core (test_faults.assert_consumer_left_nothing)."""
    unload(guest)
    assert_consumer_left_nothing(guest, baseline)
