"""The kernel's NVMe over Fabrics target (nvmet-rdma) through configfs,
as nvmetcli writes it, and the host's namespace once connected: shell
for the guest, shared by the NVMe-oF tests and the bench
(bench/consumer_runs.py)."""

NVMET = "/sys/kernel/config/nvmet"


def target_script(nqn, ports, rdma_options=""):
    """nvmet through configfs (what nvmetcli writes): subsystem @nqn, which
    any host may use, namespace 1 on /dev/nullb0, an RDMA port per entry
    of @ports (family: (port number, address)); nvmet-rdma loaded with
    @rdma_options."""
    lines = [
        "set -e",
        "modprobe configfs",
        "mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config",
        "modprobe null_blk nr_devices=1 gb=1 bs=4096 memory_backed=1",
        "modprobe nvmet-rdma %s" % rdma_options,
        "modprobe nvme-rdma",
        "s=%s/subsystems/%s" % (NVMET, nqn),
        "mkdir $s && echo 1 > $s/attr_allow_any_host",
        "mkdir $s/namespaces/1 && echo -n /dev/nullb0 > $s/namespaces/1/device_path",
        "echo 1 > $s/namespaces/1/enable",
    ]
    for family, (port, addr) in ports.items():
        p = "%s/ports/%d" % (NVMET, port)
        lines += ["mkdir %s" % p,
                  "echo rdma > %s/addr_trtype && echo %s > %s/addr_adrfam" % (p, family, p),
                  "echo %s > %s/addr_traddr && echo 4420 > %s/addr_trsvcid" % (addr, p, p),
                  "ln -s $s %s/subsystems/%s" % (p, nqn)]
    return "\n".join(lines)


def teardown_script(nqn, ports):
    """Undoes target_script(nqn, ports) and unloads the consumers."""
    lines = ["nvme disconnect -n %s >/dev/null 2>&1" % nqn]
    for port, _ in ports.values():
        lines.append("rm -f %s/ports/%d/subsystems/%s; rmdir %s/ports/%d"
                     % (NVMET, port, nqn, NVMET, port))
    lines += ["s=%s/subsystems/%s" % (NVMET, nqn),
              "echo 0 > $s/namespaces/1/enable; rmdir $s/namespaces/1 $s",
              "rmmod nvme_rdma nvmet_rdma nvmet nvme_fabrics null_blk"]
    return "; ".join(lines)


def namespace_script(nqn, seconds):
    """Prints the block device of namespace 1 of subsystem @nqn once there
    is one, waiting up to @seconds by the clock; or lists what /sys/block
    and the controllers had and fails.  Found through /sys/block, whose
    disk's device is the subsystem (native multipath, Debian's kernels)
    or the controller (without it: the debug kernel); both say the
    subsystem's NQN.  Not always nvme<N>n1: after a controller went away
    and a new one came, the old disk may still be on its way out (slowly,
    on the debug kernel), and the new one has a new instance.  So the
    newest that is a block device.  By the clock: a loop counted in rounds
    outlasts the command's time limit on a slow guest, and the listing
    would never be seen."""
    return ("end=$(($(date +%%s) + %d)); while [ $(date +%%s) -lt $end ]; do d=; "
            "for b in $(ls -d /sys/block/nvme*n* 2>/dev/null | sort -V); do "
            "[ \"$(cat $b/device/subsysnqn 2>/dev/null)\" = %s ] && "
            "[ \"$(cat $b/nsid 2>/dev/null)\" = 1 ] && [ -b \"/dev/${b##*/}\" ] && "
            "d=/dev/${b##*/}; done; [ -n \"$d\" ] && echo \"$d\" && exit 0; "
            "sleep 0.2; done; ls -l /sys/block/ >&2; "
            "grep . /sys/class/nvme/*/state /sys/class/nvme/*/subsysnqn >&2; exit 1"
            % (seconds, nqn))
