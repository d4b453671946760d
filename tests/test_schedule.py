"""tests/schedule.py: which unit a worker takes next."""
import schedule


def scheduler(units, costs, last_kind):
    s = object.__new__(schedule.GuestUnitScheduling)
    s.units, s.costs, s.last_kind = units, costs, dict(last_kind)
    return s


UNITS = {"a[bookworm]": {"kind": "bookworm-1", "alone": False},
         "b[bookworm]": {"kind": "bookworm-2", "alone": False},
         "c[bookworm]": {"kind": "bookworm-3", "alone": False},
         "x[bookworm]": {"kind": "bookworm-2", "alone": True},
         "y[bookworm]": {"kind": "bookworm-9", "alone": True}}


def best(s, node, queue):
    return max(queue, key=lambda u: s.priority(u, node))


def test_longest_first_among_kinds_no_worker_has():
    s = scheduler(UNITS, {"a[bookworm]": 50, "c[bookworm]": 80}, {})
    assert best(s, "gw0", ["a[bookworm]", "c[bookworm]"]) == "c[bookworm]"


def test_a_worker_keeps_its_kind_and_leaves_the_others_kind():
    costs = {"a[bookworm]": 60, "b[bookworm]": 60, "c[bookworm]": 60}
    s = scheduler(UNITS, costs, {"gw0": "bookworm-1", "gw1": "bookworm-2"})
    queue = ["b[bookworm]", "c[bookworm]", "a[bookworm]"]
    assert best(s, "gw0", queue) == "a[bookworm]"
    assert best(s, "gw0", ["b[bookworm]", "c[bookworm]"]) == "c[bookworm]"
    assert best(s, "gw1", queue) == "b[bookworm]"


def test_units_that_run_alone_go_to_the_worker_with_their_guest():
    costs = {"x[bookworm]": 60, "y[bookworm]": 50}
    s = scheduler(UNITS, costs, {"gw0": "bookworm-2", "gw1": "bookworm-1"})
    assert best(s, "gw1", ["x[bookworm]", "y[bookworm]"]) == "y[bookworm]"
    assert best(s, "gw0", ["x[bookworm]", "y[bookworm]"]) == "x[bookworm]"


def test_units_that_run_alone_come_after_the_others():
    s = scheduler(UNITS, {"y[bookworm]": 900, "a[bookworm]": 1}, {})
    assert best(s, "gw0", ["y[bookworm]", "a[bookworm]"]) == "a[bookworm]"
