#!/usr/bin/python3
"""Names the blocks of a profiled run (scripts/bench --insns --profile):
reads RUN/profile.out (the plugin's lines "VADDR INSNS STARTS", one per
translated block that ran between the profile's marks) and
RUN/profile-guest.txt (the guest's JSON line for the run, then its
/proc/kallsyms text symbols), charges each block's instructions times
its starts to the kernel function it starts in (user space as one
"[user]"), and writes RUN/profile.md: instructions per message by
function and by module, the largest first.  With --against an earlier
RUN, the table is what changed per message, function by function (a
function renamed or split between the two shows as one gone and one
new).  A block that starts in one function and runs into another is
charged to the first: tail calls and inlined code move with their
caller, so compare functions together with their callees."""
import argparse
import bisect
import json
import os
import sys

KERNEL_HALF = 1 << 63
TOP = 40


class Symbols:
    def __init__(self, lines):
        syms = []
        for line in lines:
            f = line.split()
            if len(f) < 3:
                continue
            module = f[3].strip("[]") if len(f) > 3 else "vmlinux"
            syms.append((int(f[0], 16), f[2], module))
        syms.sort()
        self.addrs = [s[0] for s in syms]
        self.syms = syms

    def name(self, vaddr):
        i = bisect.bisect_right(self.addrs, vaddr) - 1
        if i < 0:
            return "[kernel ?]", "vmlinux"
        _, name, module = self.syms[i]
        return name, module


def load(run):
    """(the run's JSON record, {function: instructions}, {module:
    instructions}) for one profiled run folder."""
    record, ksyms = None, []
    with open(os.path.join(run, "profile-guest.txt")) as f:
        for line in f:
            if line.startswith("{"):
                record = json.loads(line)
            else:
                ksyms.append(line)
    if record is None or record.get("error"):
        sys.exit("%s: the profiled run failed: %s" % (run, record and record["error"]))
    syms = Symbols(ksyms)
    funcs, modules = {}, {}
    with open(os.path.join(run, "profile.out")) as f:
        for line in f:
            vaddr, insns, starts = line.split()
            vaddr, n = int(vaddr, 16), int(insns) * int(starts)
            if vaddr & KERNEL_HALF:
                name, module = syms.name(vaddr)
                key = name if module == "vmlinux" else "%s [%s]" % (name, module)
            else:
                key, module = "[user]", "user"
            funcs[key] = funcs.get(key, 0) + n
            modules[module] = modules.get(module, 0) + n
    return record, funcs, modules


def per_message(record):
    # A round trip is two messages (bench/insn_guest.py).
    return 2 * record["iters"]


def table(counts, msgs, total):
    rows = ["| instructions per message | share | |", "|---:|---:|---|"]
    for key, n in sorted(counts.items(), key=lambda kv: -kv[1])[:TOP]:
        rows.append("| %.0f | %.1f %% | `%s` |" % (n / msgs, 100.0 * n / total, key))
    return rows


def diff_table(before, after, msgs_b, msgs_a):
    keys = set(before) | set(after)
    delta = {k: after.get(k, 0) / msgs_a - before.get(k, 0) / msgs_b for k in keys}
    rows = ["| before | after | change | |", "|---:|---:|---:|---|"]
    for k in sorted(keys, key=lambda k: -abs(delta[k]))[:TOP]:
        rows.append("| %.0f | %.0f | %+.0f | `%s` |" % (
            before.get(k, 0) / msgs_b, after.get(k, 0) / msgs_a, delta[k], k))
    return rows


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("run")
    p.add_argument("--against", help="an earlier profiled run's folder")
    a = p.parse_args(argv)
    record, funcs, modules = load(a.run)
    msgs = per_message(record)
    total = sum(funcs.values())
    out = ["# Instructions per message by function: %s, %d B, %d messages"
           % (record["transport"], record["size"], msgs), "",
           "From `scripts/bench --insns --profile` (bench/insn_profile.py): %.0f "
           "instructions per message in all, both ends, kernel and user." % (total / msgs),
           "", "## By module", ""] + table(modules, msgs, total)
    if a.against:
        rec_b, funcs_b, modules_b = load(a.against)
        msgs_b = per_message(rec_b)
        out += ["", "## Against %s (%s, %d B)" % (a.against, rec_b["transport"], rec_b["size"]),
                "", "%.0f instructions per message before, %.0f after." % (
                    sum(funcs_b.values()) / msgs_b, total / msgs), ""]
        out += diff_table(modules_b, modules, msgs_b, msgs) + [""]
        out += diff_table(funcs_b, funcs, msgs_b, msgs)
    out += ["", "## By function", ""] + table(funcs, msgs, total)
    text = "\n".join(out) + "\n"
    with open(os.path.join(a.run, "profile.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
