"""Verified block I/O for the storage consumers over sroce (NVMe over
Fabrics, SRP, iSER): fio writes with a CRC32C in every block, reads back
and checks, at queue depth 16, direct I/O."""
import os
import re
import shlex

# --allow_file_create=0: a disk that went away (a logout, a device removed
# under I/O) leaves no /dev node; fio would create a regular file there,
# and the next login's disk could never get its node (seen on the slow
# debug kernel: "no disk after login", /dev/sda a 256 MiB file).
FIO = ("fio --direct=1 --ioengine=libaio --iodepth=16 --verify=crc32c "
       "--verify_fatal=1 --verify_state_save=0 --randrepeat=0 --allow_file_create=0 "
       "--filename={dev} ")
# One job per block size, each on its own 16 MiB of the device, one after
# the other (--stonewall): writes, then reads back and verifies.
VERIFY_JOBS = " ".join(
    "--name=bs{bs} --rw=randwrite --bs={bs} --offset={off}M --size=16M --stonewall"
    .format(bs=bs, off=16 * i) for i, bs in enumerate(("4k", "64k", "1M")))


def fio(guest, dev, jobs, timeout=300):
    r = guest.run(FIO.format(dev=dev) + jobs, timeout=timeout)
    print(r.output[-3000:])
    return r


def assert_verified(guest, dev):
    """Every block size of VERIFY_JOBS written and read back intact."""
    r = fio(guest, dev, VERIFY_JOBS)
    assert r.rc == 0, r
    assert len(re.findall(r"err= 0", r.stdout)) == 3, r.stdout


def completed_writes(dev):
    """Shell: how many writes `dev` (a /dev path) has completed: field 8
    of /proc/diskstats.  An NVMe namespace's count is summed with its
    paths': on 6.1 a native multipath head (nvme0n1) counts none (head
    accounting came in 6.3), its path (nvme0c0n1) does."""
    name = os.path.basename(dev)
    m = re.fullmatch(r"(nvme\d+)(n\d+)", name)
    disks = "^%s(c[0-9]+)?%s$" % m.groups() if m else "^%s$" % name
    return "$(awk '$3 ~ /%s/ {w += $8} END {print w + 0}' /proc/diskstats)" % disks


def until_writes_complete(dev, count=20):
    """Shell: waits, 60 s at most, until `dev` has completed `count`
    writes more than $w0 (which the caller set to completed_writes(dev)
    before starting its I/O): the I/O is flowing, not just started.
    Bounded by the clock, not by rounds: a round starts processes, ~0.3 s
    under TCG."""
    return ("end=$((SECONDS + 60)); while [ $SECONDS -lt $end ]; do "
            "[ %s -ge $((w0 + %d)) ] && break; sleep 0.1; done" % (completed_writes(dev), count))


def writes_under_way(dev, job, log, count=20):
    """Shell: starts fio `job` on `dev` in the background ($fio its PID;
    its output, then rc=<its status>, in `log`; $w0 the disk's writes
    before it) and returns once `count` of its writes have completed."""
    return ("w0=%s; (%s %s >%s 2>&1; echo rc=$? >>%s) & fio=$!; %s"
            % (completed_writes(dev), FIO.format(dev=dev), job, log, log,
               until_writes_complete(dev, count)))


def io_in_flight_while(guest, dev, action, size="256M"):
    """Starts 64 KiB writes on `dev`, runs `action` (a shell command) once
    the first 20 have completed (the rest, ~250 MiB, take seconds even
    on a fast host) and waits for the writes to end, which they must
    within a minute (with errors if `action` took the device away).
    Returns the shell's output: action=<status>, and fio-still-running
    if fio hung."""
    r = guest.run(
        "%s; timeout 120 bash -c %s; echo action=$?; "
        "for i in $(seq 300); do kill -0 $fio 2>/dev/null || break; sleep 0.2; done; "
        "if kill -0 $fio 2>/dev/null; then echo fio-still-running; else wait; fi; "
        "tail -5 /tmp/fio-gone.log"
        % (writes_under_way(dev, "--name=gone --rw=randwrite --bs=64k --size=%s" % size,
                            "/tmp/fio-gone.log"), shlex.quote(action)),
        timeout=300)
    print(r.output[-2000:])
    return r
