"""Host side of the guest test harness.

A Guest is one qemu guest booted by scripts/vm-run with the in-guest agent
(agent.py) as its command.  Tests send it shell commands one at a time and
get back exit status and output, so a whole group of checks shares one
boot.  After every test the kernel log is scanned; a warning, oops or hung
task fails the test that was running.  On the debug kernel (kernel="debug",
scripts/debug-kernel) that includes every KASAN, KFENCE, lockdep, UBSAN
and debug-objects report, and `kmemleak_leaks()` scans for leaks before
the guest stops.
"""
import difflib
import json
import os
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VM_RUN = os.path.join(ROOT, "scripts", "vm-run")
AGENT = os.path.join(ROOT, "tests", "guest", "agent.py")
DEVICES = os.path.join(ROOT, "scripts", "guest", "devices")
GUEST_STATE = os.path.join(ROOT, "tests", "guest", "guest-state")
# Made at the boot's snapshot of the guest's state (snapshot_state()): a
# time stamp, and the kernel modules loaded then.
STATE_STAMP = "/run/sroce-state-stamp"
# An address in duplicate address detection (ip's "tentative"; not one
# whose DAD failed, which stays so): how long _state() waits for it.
TENTATIVE = re.compile(r"^ip\S* .* tentative(?! dadfailed)")
DAD_WAIT_S = 5
BOOT_MODULES = "/run/sroce-boot-modules"
# Removes every module that was not loaded at the boot and is no longer
# used, those that used it first (at most 8 rounds: a chain of modules
# that use each other is never longer).
UNLOAD_NEW_MODULES = r"""declare -A boot; while read -r m; do boot[$m]=1; done <%s
for round in 1 2 3 4 5 6 7 8; do
  gone=0
  while read -r m _ refs _; do
    [ -z "${boot[$m]:-}" ] && [ "$refs" = 0 ] && rmmod "$m" && gone=1
  done </proc/modules
  [ $gone = 1 ] || break
done; true""" % BOOT_MODULES

# What a healthy kernel never prints.  The debug kernel's detectors report
# under these too: "BUG: KASAN:", "BUG: KFENCE:", lockdep's "WARNING:
# possible circular locking dependency detected" (and recursive locking,
# inconsistent lock state, suspicious RCU usage), "BUG: sleeping function
# called from invalid context", "UBSAN:", "ODEBUG:" (a timer or work item
# freed while active).  kmemleak's own lines are fine but for its warnings
# about frees of unknown objects; its leak reports are read from
# /sys/kernel/debug/kmemleak instead (Guest.kmemleak_leaks).
BAD_KERNEL_LOG = re.compile(
    r"BUG:|WARNING:|Oops|general protection|RIP:|blocked for more than|"
    r"soft lockup|rcu_sched self-detected stall|rcu: INFO|UBSAN:|KASAN:|"
    r"KFENCE:|ODEBUG:|possible circular locking|possible recursive locking|"
    r"inconsistent lock state|suspicious RCU usage|"
    r"kmemleak: (?!Kernel memory leak detector initialized|"
    r"\d+ new suspected memory leaks)|"
    r"list_add corruption|list_del corruption")

# Reports of the debug kernel's checkers about kernel code sroce has no
# part in, each with the frames that identify it.  A report is let through
# only when it is complete (lockdep ends it with the stack of the task
# that tripped it, KASAN with a line of '=') and no frame of it is
# sroce's; anything else fails the test as before.  Lockdep stops checking
# after the first report of either kind (KASAN taints the kernel), which
# the harness says in the test's output.
UPSTREAM_REPORTS = [
    # nvmet-rdma handles a queue's connect capsule inside the rdma_cm event
    # handler (under the cm_id's handler_mutex) when it arrived before the
    # ESTABLISHED event, and nvmet_execute_io_connect then takes
    # nvmet_config_sem; removing a port takes nvmet_config_sem and then
    # rdma_destroy_id takes the listener's handler_mutex.  Same lock class,
    # opposite order, all in nvmet and rdma_cm: on any RDMA device where the
    # first SEND can overtake the RTU (seen on sroce under the debug
    # kernel, Linux 6.1; nvme-cli#3113 tracks nvmet's lockdep reports).
    ("nvmet-rdma connect in CM handler vs port removal", "lockdep",
     ("nvmet_config_sem", "handler_mutex", "nvmet_rdma_cm_handler",
      "rdma_destroy_id", "nvmet_rdma_disable_port")),
    # The iSER target frees a logged-in connection when its RDMA device
    # goes away (isert_cma_handler, RDMA_CM_EVENT_DEVICE_REMOVAL: kfree
    # once the connection is ISER_CONN_DOWN), but LIO's connection
    # teardown still holds it and calls isert_free_conn ->
    # isert_connect_release on it afterwards (drivers/infiniband/ulp/
    # isert/ib_isert.c, Linux 6.1.192): every read and write of that
    # teardown is a use-after-free, whatever the device.  Seen under the
    # debug kernel in test_iser's link deletion while logged in.
    # The frames are those of the free (KASAN's "Freed by task" stack).
    ("ib_isert frees a connection on device removal that LIO still "
     "tears down", "kasan",
     ("isert_cma_handler", "cma_process_remove")),
]
REPORT_BOUNDS = {
    "lockdep": (re.compile(r"WARNING: possible circular locking dependency"),
                re.compile(r"</TASK>")),
    "kasan": (re.compile(r"BUG: KASAN: "), re.compile(r"={40,}\s*$")),
}
# A frame of ours: a function of the module, or anything in it.  (Not the
# word alone: the debug kernel's release string is "...-sroce-debug".)
SROCE_FRAME = re.compile(r"\bsroce_\w+\+0x|\[sroce\]")


def kasan_free_stack(report):
    """The stack of KASAN's "Freed by task" section of a report: who freed
    the object, which is what tells one upstream bug from another."""
    m = re.search(r"^Freed by task.*?\n(.*?)(?:\n\s*\n|\Z)", report,
                  re.M | re.S)
    return m.group(1) if m else ""


def tolerated_reports(lines):
    """Indices of lines that belong to a complete report listed in
    UPSTREAM_REPORTS, with the name of each report found."""
    skip, names = set(), []
    i = 0
    while i < len(lines):
        kind = next((k for k, (start, _) in REPORT_BOUNDS.items()
                     if start.search(lines[i])), None)
        if kind is None:
            i += 1
            continue
        end_re = REPORT_BOUNDS[kind][1]
        end = next((j for j in range(i + 1, min(len(lines), i + 400))
                    if end_re.search(lines[j])), None)
        if end is None:
            i += 1
            continue
        block = "\n".join(lines[i:end + 1])
        where = block if kind != "kasan" else kasan_free_stack(block)
        for name, k, frames in UPSTREAM_REPORTS:
            if (k == kind and not SROCE_FRAME.search(block) and
                    all(f in where for f in frames)):
                skip.update(range(i, end + 1))
                names.append(name)
                break
        i = end + 1
    return skip, names


# A kmemleak report counts against us when its allocation stack runs
# through sroce or the RDMA core it drives.
LEAK_MODULES = re.compile(r"\[(sroce|ib_core|ib_uverbs)\]")
# How much slower everything is on the debug kernel (KASAN, lockdep...)
# under TCG: boot, command and guest time limits are stretched by it.
DEBUG_SLOWDOWN = 3
# Debian's default kernel.hung_task_timeout_secs.
HUNG_TASK_SECONDS = 120


# Every guest this process has running: what a signal handler must kill
# (tests/conftest.py), since each runs in a session of its own and so gets
# no signal meant for the test run.
LIVE_GUESTS = set()


def log_command(cmd, res, seconds):
    """With SROCE_COMMAND_LOG set, appends a JSON line per guest command
    (the test, the command, its seconds in the guest and from the host)
    to that file: where a module's time goes, command by command
    (docs/test-time.md)."""
    path = os.environ.get("SROCE_COMMAND_LOG")
    if not path:
        return
    with open(path, "a") as f:
        f.write(json.dumps({"test": os.environ.get("PYTEST_CURRENT_TEST", ""),
                            "cmd": cmd, "guest": round(res.seconds, 3),
                            "host": round(seconds, 3)}) + "\n")


# scripts/distro-root's kernel suites: a release's user space with the
# newer kernel Debian offers it (scripts/lib.sh, sroce_distro_base).
USERSPACE_OF = {"bookworm-backports": "bookworm", "trixie-backports": "trixie",
                "experimental": "sid"}

class GuestDied(Exception):
    pass


class Result:
    def __init__(self, cmd, res):
        self.cmd = cmd
        self.rc = res["rc"]
        self.stdout = res["stdout"]
        self.stderr = res["stderr"]
        self.timed_out = res["timed_out"]
        self.seconds = res["seconds"]

    @property
    def output(self):
        return self.stdout + self.stderr

    def __repr__(self):
        return "<Result rc=%s cmd=%r\n--- stdout\n%s--- stderr\n%s>" % (
            self.rc, self.cmd, self.stdout, self.stderr)


# The agent's messages (agent.py): a 4-byte big-endian length, then JSON.
LENGTH = struct.Struct(">I")
# sun_path holds 107 bytes and the terminating zero.
MAX_SOCKET_PATH = 107
# The verbs providers the suite's guests keep (vm-run --providers): every
# verbs program loads each one listed, ~0.1 s for Debian's 17 under TCG,
# and the suite runs thousands.  test_device.py runs sroce among them all.
# SROCE_GUEST_PROVIDERS= (empty) keeps them all in every guest.
PROVIDERS = os.environ.get("SROCE_GUEST_PROVIDERS", "sroce,rxe")


class Guest:
    """distro: None (or "bookworm") boots this machine's Debian 12; "trixie"
    or "sid" boots that release's kernel and root (scripts/vm-run --distro,
    after scripts/build --distro), where the agent and every command run on
    the release's own python3 and tools.  `build` is the build folder that
    guest installs sroce from (build/ or build/<distro>/).  kernel="debug"
    boots bookworm on the debug kernel (scripts/vm-run --kernel debug,
    after scripts/build --kernel debug), with more memory and longer time
    limits.  `cmdline` adds to the guest kernel's command line.  wire="e1000e"
    (or "virtio-net-pci") makes veth0 and veth1 two emulated NICs of that
    model joined by a qemu wire (scripts/vm-run --wire); SROCE_GUEST_WIRE
    does the same for every guest (the suite over real NIC drivers).
    cable=(folder, end) with wire: the guest is one end of a wire to
    another guest (scripts/vm-run --cable), with one NIC, vethEND, and one
    device, sroceEND (rxeEND with rxe)."""

    def __init__(self, out_dir, rxe=False, mtu=None, mem=2048, smp=2,
                 timeout=3000, load=True, distro=None, kernel=None,
                 cmdline=None, wire=None, cable=None):
        self.out = str(out_dir)
        self.distro = distro if distro != "bookworm" else None
        # The release whose user space (rdma-core, perftest, UCX) the guest
        # runs: a kernel suite's root is its release's with a newer kernel.
        self.userspace = USERSPACE_OF.get(self.distro, self.distro or "bookworm")
        self.kernel = kernel if kernel != "debian" else None
        self.slowdown = DEBUG_SLOWDOWN if self.kernel == "debug" else 1
        if self.kernel == "debug":
            if self.distro:
                raise ValueError("the debug kernel boots bookworm only")
            mem = max(mem, 4096)  # KASAN's shadow and quarantine, kmemleak
            timeout *= self.slowdown
            # The hung-task detector's limit stretches like every other:
            # a task a test means to block (an NFS hard mount riding out a
            # device that is gone) is blocked three times as long here.
            cmdline = " ".join(filter(None, [
                cmdline, "sysctl.kernel.hung_task_timeout_secs=%d"
                % (HUNG_TASK_SECONDS * self.slowdown)]))
        self.build = os.path.join(os.environ.get("SROCE_BUILD") or
                                  os.path.join(ROOT, "build"),
                                  self.distro or "")
        self.rpc = os.path.join(self.out, "rpc")
        self.console = os.path.join(self.out, "console.log")
        self.channel_path = os.path.join(self.out, "agent.sock")
        self.channel_dir = None     # made for a socket path too long there
        if len(self.channel_path) > MAX_SOCKET_PATH:
            self.channel_dir = tempfile.mkdtemp(prefix="sroce-agent-")
            self.channel_path = os.path.join(self.channel_dir, "agent.sock")
        self.channel = None
        args = [VM_RUN, "--out", self.out, "--timeout", str(timeout),
                "--mem", str(mem), "--smp", str(smp),
                "--channel", self.channel_path]
        if PROVIDERS:
            args += ["--providers", PROVIDERS]
        if rxe:
            args.append("--rxe")
        if mtu:
            args += ["--mtu", str(mtu)]
        if not load:
            args.append("--no-load")
        if self.distro:
            args += ["--distro", self.distro]
        if self.kernel:
            args += ["--kernel", self.kernel]
        if cmdline:
            args += ["--append", cmdline]
        self.wire = wire or os.environ.get("SROCE_GUEST_WIRE") or None
        if self.wire:
            args += ["--wire", self.wire]
        if cable:
            args += ["--cable", "%s:%d" % cable]
        self.args = args + ["--", "/usr/bin/python3", AGENT]
        self.proc = None
        self.kernel_log = []

    # -- life cycle --------------------------------------------------------
    def start(self, boot_timeout=120):
        """Boots the guest.  A boot whose kernel died before it reached our
        stage 2 (so before any sroce code ran) is retried once: qemu's
        multi-threaded TCG now and then trips over the kernel patching
        its own code at boot (an "int3" oops in early boot, about 1 in 20
        trixie boots here).  Anything later is never retried."""
        try:
            return self._boot(boot_timeout)
        except GuestDied as e:
            if os.path.exists(os.path.join(self.out, "stage2-started")):
                raise
            print("guest kernel died before stage 2; booting again once:\n%s" % e)
            # The first boot's console stays, for a look at what killed it.
            if os.path.exists(self.console):
                os.replace(self.console, self.console + ".first-boot")
            return self._boot(boot_timeout)

    def _boot(self, boot_timeout):
        os.makedirs(self.out, exist_ok=True)
        self._close_channel()
        # An earlier boot's, in an output folder used again.
        for stale in (self.channel_path, os.path.join(self.rpc, "ready")):
            if os.path.exists(stale):
                os.unlink(stale)
        self.log = open(os.path.join(self.out, "vm-run.log"), "w")
        self.started = time.monotonic()
        # A session of its own, so kill() finds qemu too (see there).
        # vm-run goes (and stops its qemu) when this process dies, even
        # when it is killed outright and can kill nothing itself.
        self.proc = subprocess.Popen(["setpriv", "--pdeathsig", "TERM", "--"] + self.args,
                                     stdout=self.log,
                                     stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        LIVE_GUESTS.add(self)
        ready = os.path.join(self.rpc, "ready")
        stage2 = os.path.join(self.out, "stage2-started")
        # The kernel alone reaches stage 2 in seconds even on the debug
        # kernel (~20 s): one that has not by boot_timeout hangs in its
        # boot (a debug-kernel guest now and then does, under TCG), and is
        # booted again (start()) without waiting for the whole limit.
        kernel_deadline = time.monotonic() + boot_timeout
        deadline = time.monotonic() + boot_timeout * self.slowdown
        while not os.path.exists(ready):
            self._check_alive()
            now = time.monotonic()
            if now > deadline or (now > kernel_deadline and not os.path.exists(stage2)):
                self.kill()
                raise GuestDied("guest did not come up in %ds\n%s" %
                                (now - self.started, self.console_tail()))
            time.sleep(0.05)
        # qemu has listened since it started; the agent reads from now on.
        self.channel = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.channel.connect(self.channel_path)
        self.boot_seconds = time.monotonic() - self.started
        return self

    # -- reuse by the next test module (tests/conftest.py) -------------------
    def snapshot_state(self):
        """Notes what the guest has after its boot: reset() and differs()
        go back to it."""
        self.boot_state = self._state(
            "touch %s && while read -r m _; do echo $m; done </proc/modules >%s && "
            % (STATE_STAMP, BOOT_MODULES))

    def _state(self, before=""):
        """The guest's state facts, once no address is still in duplicate
        address detection: one that is becomes final by itself within
        a second or two (and gains its local route), and a snapshot taken
        before that would make the next comparison see a difference no
        test made (CI at dd36ba4 booted guests again for it).  Waits only
        when an address is tentative, at most DAD_WAIT_S."""
        deadline = time.monotonic() + DAD_WAIT_S * self.slowdown
        while True:
            res = self.run("%s%s %s" % (before, GUEST_STATE, STATE_STAMP), timeout=120)
            if res.rc != 0:
                raise AssertionError("guest-state failed: %r" % res)
            facts = state_facts(res.stdout)
            if not any(TENTATIVE.search(f) for f in facts) or time.monotonic() >= deadline:
                return facts
            before = ""         # the stamp and module list are made
            time.sleep(0.5)

    def reset(self):
        """Unloads the kernel modules loaded since the boot (the tests'
        targets and initiators, which ss or modprobe pulled in) and gives
        the RDMA devices back as fresh as a boot's (reloads sroce and
        rdma_rxe, scripts/guest/devices).  Returns "" or why it could not:
        a module still in use (an open verbs context, a kernel consumer).
        What that wrote to the kernel log is the caller's to check, with
        the test module that ran last."""
        res = self.run(UNLOAD_NEW_MODULES + " && " + DEVICES + " renew", timeout=180)
        if res.rc != 0:
            return "the devices could not be renewed: %s" % (res.stderr or res.stdout).strip()
        return ""

    def differs(self):
        """"" if nothing a test module could leave behind differs from the
        boot's snapshot (a link, an address, a qdisc, a sysctl, a loaded
        module, a mount, a process, a file written; guest-state), else
        the lines that differ."""
        now = self._state()
        if now == self.boot_state:
            return ""
        diff = difflib.unified_diff(self.boot_state, now, "after boot", "now",
                                    n=0, lineterm="")
        return "its state differs from the boot's:\n" + "\n".join(
            l for l in list(diff)[2:42] if not l.startswith("@@"))

    def stop(self):
        """Stops the agent and waits for the guest to power off."""
        if self.proc is None:
            return
        try:
            if self.proc.poll() is None:
                self._request({"op": "exit"}, timeout=30 * self.slowdown)
                self.proc.wait(timeout=60)
        except (GuestDied, subprocess.TimeoutExpired):
            self.kill()
        finally:
            self.proc = None
            self.log.close()
            self._close_channel(for_good=True)
            LIVE_GUESTS.discard(self)

    def kill(self):
        """Kills vm-run and its qemu.  Killing vm-run alone left qemu
        running until vm-run's own limit (it runs under `timeout`, which
        has a process group of its own): a hung boot went on spinning a
        host core for up to 50 minutes.  So: every process of vm-run's
        session."""
        if self.proc and self.proc.poll() is None:
            for pid in os.listdir("/proc"):
                try:
                    if pid.isdigit() and os.getsid(int(pid)) == self.proc.pid:
                        os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            self.proc.wait()
        self._close_channel(for_good=True)
        LIVE_GUESTS.discard(self)

    def _close_channel(self, for_good=False):
        if self.channel is not None:
            self.channel.close()
            self.channel = None
        if for_good and self.channel_dir:
            shutil.rmtree(self.channel_dir, ignore_errors=True)

    # -- requests ----------------------------------------------------------
    def run(self, cmd, timeout=120, check=False):
        """Runs a bash command line in the guest's initial namespace."""
        timeout *= self.slowdown
        started = time.monotonic()
        res = Result(cmd, self._request({"op": "run", "cmd": cmd,
                                         "timeout": timeout, "cwd": ROOT},
                                        timeout=timeout + 30))
        log_command(cmd, res, time.monotonic() - started)
        if check and res.rc != 0:
            raise AssertionError("guest command failed: %r" % res)
        return res

    def run_peer(self, cmd, **kw):
        """Runs a command inside network namespace `peer` (veth1, sroce1)."""
        return self.run("ip netns exec peer bash -c %s" % _quote(cmd), **kw)

    def new_kernel_log(self):
        lines = self._request({"op": "kmsg"}, timeout=30)["lines"]
        self.kernel_log += lines
        return lines

    def kernel_problems(self):
        lines = self.new_kernel_log()
        skip, names = tolerated_reports(lines)
        for name in names:
            print("guest kernel log: upstream report tolerated (%s); "
                  "lockdep is off for the rest of this boot" % name)
        return [l for i, l in enumerate(lines)
                if i not in skip and BAD_KERNEL_LOG.search(l)]

    def kmemleak_leaks(self, match=LEAK_MODULES, keep="kmemleak"):
        """On a kernel with kmemleak (the debug kernel): scans now and
        returns the reports `match` finds in, each a block of lines; by
        default those whose allocation stack runs through sroce or the RDMA
        core (LEAK_MODULES; the boot, before those modules load, leaves
        none: see stage2).  Every report is kept in the output folder's
        file `keep`.  Objects younger than 5 s are never reported, hence
        the wait.  A kmemleak that is missing, not mounted or has switched
        itself off fails, rather than look like no leaks
        (test_device.py's test_kmemleak_check_sees_a_deliberate_leak is
        the positive control)."""
        res = self.run("f=/sys/kernel/debug/kmemleak; "
                       "[ -w $f ] || { echo \"no $f\" >&2; exit 1; }; "
                       "sleep 6; echo scan >$f && cat $f", timeout=300)
        if res.rc != 0:
            raise AssertionError("kmemleak scan failed: %r" % res)
        with open(os.path.join(self.out, keep), "w") as f:
            f.write(res.stdout)
        blocks = re.split(r"(?m)^(?=unreferenced object )", res.stdout)
        return [b for b in blocks if b.startswith("unreferenced object ") and
                match.search(b)]

    def _request(self, req, timeout):
        """Sends @req to the agent and waits up to @timeout s for its reply,
        checking meanwhile that the guest still runs."""
        if self.channel is None:    # stopped or killed: a stopped run's teardowns
            raise GuestDied("the guest is gone (stopped or killed) before %r" % (req,))
        data = json.dumps(req).encode()
        self.channel.sendall(LENGTH.pack(len(data)) + data)
        deadline = time.monotonic() + timeout
        (length,) = LENGTH.unpack(self._receive(LENGTH.size, deadline, timeout, req))
        return json.loads(self._receive(length, deadline, timeout, req))

    def _receive(self, n, deadline, timeout, req):
        data = bytearray()
        while len(data) < n:
            ready, _, _ = select.select([self.channel], [], [], 1.0)
            if ready:
                chunk = self.channel.recv(n - len(data))
                if not chunk:
                    self._check_alive()
                    raise GuestDied("the agent closed its channel during %r\n%s" %
                                    (req, self.console_tail()))
                data += chunk
                continue
            self._check_alive()
            if time.monotonic() > deadline:
                raise GuestDied("no answer from the guest in %ds to %r\n%s" %
                                (timeout, req, self.console_tail()))
        return bytes(data)

    def _check_alive(self):
        if self.proc.poll() is not None:
            raise GuestDied("the guest stopped (vm-run exit %s)\n%s" %
                            (self.proc.returncode, self.console_tail()))

    def console_tail(self, lines=60):
        try:
            with open(self.console, errors="replace") as f:
                return "--- guest console (last %d lines) ---\n%s" % (
                    lines, "".join(f.readlines()[-lines:]))
        except OSError:
            return "(no guest console log)"


# What changes in a guest on its own, left out of state_facts: eth0 (qemu's
# user network, for the guest's own use: its router advertisements come
# and go) and the kernel's counters among its settings.
# The temporary folders and logs are left out of what was written.
STATE_NOISE = re.compile(
    r"\beth0\b|expires \d+sec|"
    r"^sysctl /proc/sys/(fs/(dentry-state|file-nr|inode-nr|inode-state|aio-nr|quota/)|"
    r"kernel/(random/|ns_last_pid|pty/nr|tainted)|"
    r"net/netfilter/nf_conntrack_count)|"
    r"^written /run/(overlay/_(var_)?tmp/|overlay/_var/upper/(log|tmp)/|"
    r"rw/upper/(tmp|var/tmp|var/log)/)")


def state_facts(text):
    """The facts of a guest-state print, sorted, each prefixed with its
    section (and network namespace), less STATE_NOISE and what is not
    state: link indices, reference counts, address lifetimes."""
    facts, section, ns = [], "", ""
    for line in text.splitlines():
        if line.startswith("=== "):
            name = line[4:]
            if name.startswith("in netns"):
                ns = name[len("in netns"):].strip()
            else:
                section = name
            continue
        line = line.split("\\")[0].rstrip()	# ip -o: a record's second line
        if section == "ip":
            line = re.sub(r"^\d+:\s+", "", line)
            line = re.sub(r"\s+", " ", line)
        if section == "qdisc":
            line = re.sub(r" refcnt \d+", "", line)
        fact = "%s%s %s" % (section, "[%s]" % ns if ns else "", line)
        if line and not STATE_NOISE.search(fact):
            facts.append(fact)
    return sorted(facts)


def _quote(s):
    return "'" + s.replace("'", "'\\''") + "'"
