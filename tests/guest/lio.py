"""LIO, the kernel's SCSI target, as the SRP and iSER tests configure it:
through configfs, as targetcli would.  The backstore is a 128 MiB RAM
disk (rd_mcp, part of target_core_mod), so what fio verifies on the
initiator's disk went over the fabric and came back."""
import time

TARGET = "/sys/kernel/config/target"
RAMDISK = TARGET + "/core/rd_mcp_0/ram0"
MODEL = "RAMDISK-MCP"  # the SCSI model LIO reports for rd_mcp


def backstore_script():
    """Loads LIO with its RAM disk (the persistent-reservation folder
    /etc/target exists on a targetcli system; LIO warns without it)."""
    return "\n".join([
        "set -e",
        "mkdir -p /etc/target",
        "modprobe target_core_mod",
        "mkdir -p %s" % RAMDISK,
        "echo rd_pages=32768 > %s/control" % RAMDISK,
        "echo 1 > %s/enable" % RAMDISK,
    ])


def export_lun_script(tpg):
    """LUN 0 of the target portal group `tpg` is the RAM disk."""
    return "mkdir -p %s/lun/lun_0 && ln -s %s %s/lun/lun_0/ram0" % (tpg, RAMDISK, tpg)


# target_core_mod loads every backstore driver as it starts.
MODULES = "target_core_file target_core_iblock target_core_pscsi target_core_user target_core_mod"


def dismantle_script(fabric):
    """Removes everything configured under `fabric` (srpt, iscsi) and the
    backstore, leaves first (configfs removes no folder with children)."""
    base = "%s/%s" % (TARGET, fabric)
    return "; ".join([
        "for e in %s/*/*/enable; do [ -e $e ] && echo 0 > $e; done" % base,
        "rm -f %s/*/*/acls/*/*/* %s/*/*/lun/*/*" % (base, base),
        "rmdir %s/*/*/acls/*/* %s/*/*/acls/* %s/*/*/np/* %s/*/*/lun/*" % (base, base, base, base),
        "rmdir %s/*/* 2>/dev/null; rmdir %s/* %s 2>/dev/null" % (base, base, base),
        "rmdir %s %s 2>/dev/null" % (RAMDISK, RAMDISK.rsplit("/", 1)[0]),
    ]) + " 2>/dev/null; true"


def unload(guest, fabric, initiator_gone, modules):
    """Ends the initiator's sessions (`initiator_gone`, a shell command),
    dismantles `fabric`'s target and unloads `modules` (the initiator's
    and the target's, users first) and LIO; none of them may stay."""
    r = guest.run("; ".join([initiator_gone, dismantle_script(fabric),
                             "rmmod %s %s" % (" ".join(modules), MODULES)]), timeout=120)
    left = "|".join(list(modules) + ["target_core_mod"])
    assert guest.run("lsmod | grep -E '^(%s) '" % left).rc != 0, r


def wait_disk(guest, host_driver, model=MODEL):
    """The block device of the LUN of SCSI `model` (by default the RAM
    disk's) on a SCSI host of `host_driver` (ib_srp, iscsi_iser), once sd
    has attached it; None if none appears within 20 s."""
    began = time.monotonic()
    r = guest.run(
        "for i in $(seq 100); do for b in /sys/block/sd*; do [ -e $b/device ] || continue; "
        "hctl=$(basename $(readlink -f $b/device)); "
        "[ \"$(cat /sys/class/scsi_host/host${hctl%%%%:*}/proc_name)\" = %s ] && "
        "grep -q '^%s' $b/device/model && [ -b /dev/${b##*/} ] && "
        "echo /dev/${b##*/} && exit 0; done; sleep 0.2; done; exit 1"
        % (host_driver, model))
    if r.rc == 0:
        return r.stdout.strip()
    # What the loop saw, for the failure message: every SCSI disk with its
    # host's driver, model and device node.
    seen = guest.run(
        "for b in /sys/block/sd*; do [ -e $b ] || continue; d=$(readlink -f $b/device); "
        "h=${d##*/}; echo \"${b##*/} $h $(cat /sys/class/scsi_host/host${h%%:*}/proc_name 2>&1) "
        "$(cat $b/device/model 2>&1) $(ls -l /dev/${b##*/} 2>&1)\"; done; "
        "ls /sys/class/scsi_host; true", timeout=30)
    print("wait_disk(%s): none after %.0f s (rc %s %r); saw:\n%s"
          % (host_driver, time.monotonic() - began, r.rc, r.stderr, seen.stdout))
    return None


def iser_login(guest, iqn, portal, model=MODEL, log_cmd=None):
    """A node record for target `iqn` at `portal` (address:port, an IPv6
    address in brackets) on open-iscsi's iser interface, a login, the
    session checked; returns the LUN's disk (SCSI `model`).  `log_cmd`:
    what to show with a failed login (the target's log)."""
    r = guest.run("iscsiadm -m node -o new -T %s -p '%s' -I iser >/dev/null && "
                  "iscsiadm -m node -T %s -p '%s' -I iser --login"
                  % (iqn, portal, iqn, portal), timeout=120)
    assert r.rc == 0, ("login failed", r, guest.run(log_cmd).stdout if log_cmd else "")
    out = guest.run("iscsiadm -m session -P 1", check=True).stdout
    assert "Iface Transport: iser" in out and "LOGGED IN" in out, out
    dev = wait_disk(guest, "iscsi_iser", model)
    assert dev, ("no disk after login", r)
    return dev


def scsi_hosts(guest, host_driver):
    out = guest.run("for h in /sys/class/scsi_host/host*; do "
                    "[ \"$(cat $h/proc_name 2>/dev/null)\" = %s ] && echo ${h##*/}; done; true"
                    % host_driver).stdout
    return out.split()
