"""Parsers for what the guest says about kernel memory and RDMA objects:
/proc/meminfo, /proc/slabinfo, `rdma resource show` and `rdma statistic
show`.  Pure text in, dicts out, so the host tests them without a guest
(tests/test_kmem.py); used by test_faults.py and the soak report."""
import collections
import re

# One /proc/slabinfo line: objects in use, object size, objects per slab.
Cache = collections.namedtuple("Cache", "active size per_slab")


def meminfo(text):
    """{field: kB} from /proc/meminfo."""
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^(\w+):\s+(\d+)", text, re.M)}


def slabinfo(text):
    """{cache: Cache} from /proc/slabinfo 2.1."""
    caches = {}
    for line in text.splitlines():
        if line.startswith(("slabinfo", "#")):
            continue
        f = line.split()
        if len(f) >= 5 and all(x.isdigit() for x in f[1:5]):
            caches[f[0]] = Cache(int(f[1]), int(f[3]), int(f[4]))
    return caches


def kmalloc_caches(caches):
    """The generic kmalloc caches: where the objects a module (or the RDMA
    core for it) kmallocs land, so their leaks show up here."""
    return {name: c for name, c in caches.items()
            if name.startswith(("kmalloc-", "dma-kmalloc-"))}


def kmalloc_bytes(caches):
    return sum(c.active * c.size for c in kmalloc_caches(caches).values())


def own_caches(caches, prefix="sroce"):
    """{cache: active objects} of the module's named caches."""
    return {name: c.active for name, c in caches.items() if name.startswith(prefix)}


def kmalloc_growth(before, after, slabs=16, ratio=0.05):
    """{cache: objects gained} for each kmalloc cache that grew by more
    than `slabs` slabs' worth of objects plus `ratio` of what it had.
    SLUB counts a CPU's partly used slab as in use, so a cache's count
    moves in whole slabs with no leak at all, and the netdev faults
    leave some routing state behind (one run of test_faults: +189 in
    kmalloc-192, 9 slabs); a leak of a few thousand objects of any size
    sroce allocates (64 bytes and up: at most 64 per slab, slack 1024
    plus 5%) is beyond it."""
    grown = {}
    for name, c in kmalloc_caches(after).items():
        was = before.get(name, Cache(0, c.size, c.per_slab)).active
        if c.active - was > slabs * c.per_slab + ratio * was:
            grown[name] = c.active - was
    return grown


def _per_device(text, line_re):
    """{device: {name: value}} from lines `line_re` splits into the
    device and its "name value ..." pairs."""
    out = {}
    for line in text.splitlines():
        m = re.match(line_re, line)
        if m:
            out[m.group(1)] = {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", m.group(2))}
    return out


def resources(text):
    """{device: {object: count}} from `rdma resource show`."""
    return _per_device(text, r"\d+: (\w+): (.*)")


def statistics(text):
    """{device: {counter: value}} from `rdma statistic show link DEV/PORT`."""
    return _per_device(text, r"link (\w+)/\d+ (.*)")
