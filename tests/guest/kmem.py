"""Parsers for what the guest says about kernel memory and RDMA objects:
/proc/meminfo, /proc/slabinfo, `rdma resource show` and `rdma statistic
show`.  Pure text in, dicts out, so the host tests them without a guest
(tests/test_kmem.py); used by test_faults.py and the soak report."""
import re


def meminfo(text):
    """{field: kB} from /proc/meminfo."""
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^(\w+):\s+(\d+)", text, re.M)}


def slabinfo(text):
    """{cache: (active objects, object size)} from /proc/slabinfo 2.1."""
    caches = {}
    for line in text.splitlines():
        if line.startswith(("slabinfo", "#")):
            continue
        f = line.split()
        if len(f) >= 4 and f[1].isdigit() and f[3].isdigit():
            caches[f[0]] = (int(f[1]), int(f[3]))
    return caches


def kmalloc_bytes(caches):
    """Bytes in use in the generic kmalloc caches: where a module's
    kmalloc'ed objects land, so their leak shows up here."""
    return sum(n * size for name, (n, size) in caches.items()
               if name.startswith(("kmalloc-", "kmalloc-cg-", "dma-kmalloc-")))


def own_caches(caches, prefix="sroce"):
    """{cache: active objects} of the module's named caches."""
    return {name: n for name, (n, _) in caches.items() if name.startswith(prefix)}


def resources(text):
    """{device: {object: count}} from `rdma resource show`."""
    res = {}
    for line in text.splitlines():
        m = re.match(r"\d+: (\w+): (.*)", line)
        if m:
            res[m.group(1)] = {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", m.group(2))}
    return res


def statistics(text):
    """{device: {counter: value}} from `rdma statistic show link DEV/PORT`."""
    stats = {}
    for line in text.splitlines():
        m = re.match(r"link (\w+)/\d+ (.*)", line)
        if m:
            stats[m.group(1)] = {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", m.group(2))}
    return stats
