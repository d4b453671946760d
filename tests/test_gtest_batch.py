"""gtest_batch.py: which CTest tests one binary run answers, and how a
GoogleTest JSON report becomes each test's outcome."""
import gtest_batch

PROPS = [{"name": "WORKING_DIRECTORY", "value": "/b/t"},
         {"name": "SKIP_REGULAR_EXPRESSION", "value": ["\\[  SKIPPED \\]"]},
         {"name": "LABELS", "value": ["x"]}]


def ctest(name, gtest, binary="/b/t/bin", props=PROPS):
    return {"name": name, "properties": props,
            "command": [binary, "--gtest_filter=" + gtest,
                        "--gtest_also_run_disabled_tests"]}


def report(*tests):
    suites = {}
    for full, result, failures in tests:
        suite, name = full.split(".", 1)
        suites.setdefault(suite, []).append(
            {"name": name, "status": "RUN", "result": result,
             "failures": [{"failure": f} for f in failures]})
    return {"testsuites": [{"name": s, "testsuite": t} for s, t in suites.items()]}


def test_report_outcomes():
    got = gtest_batch.parse_report(report(
        ("Psn.Wraps", "COMPLETED", []),
        ("Psn.Broken", "COMPLETED", ["x.cpp:3: expected 1"]),
        ("Psn.NoRing", "SKIPPED", []),
        ("Prefix/Ring.Grows/2", "COMPLETED", [])))
    assert got == {"Psn.Wraps": ("pass", ""),
                   "Psn.Broken": ("fail", "x.cpp:3: expected 1"),
                   "Psn.NoRing": ("skip", ""),
                   "Prefix/Ring.Grows/2": ("pass", "")}


def test_a_test_not_run_has_no_outcome():
    r = report(("Psn.Off", "SUPPRESSED", []))
    r["testsuites"][0]["testsuite"][0]["status"] = "NOTRUN"
    assert gtest_batch.parse_report(r) == {}


def test_one_run_per_binary_and_folder_with_exactly_its_tests():
    runs = []

    def run(key, names):
        runs.append((key, sorted(names)))
        return {n: ("pass", "") for n in names}

    tests = [ctest("a.X", "A.X"), ctest("sanitized.A.X", "A.X", "/b/t/san"),
             ctest("A.Y", "A.Y"), ctest("B.Z", "B.Z", "/b/u/bin2")]
    got = gtest_batch.batch_outcomes(tests, run)
    assert sorted(runs) == [
        (("/b/t/bin", ("--gtest_also_run_disabled_tests",), "/b/t"), ["A.X", "A.Y"]),
        (("/b/t/san", ("--gtest_also_run_disabled_tests",), "/b/t"), ["A.X"]),
        (("/b/u/bin2", ("--gtest_also_run_disabled_tests",), "/b/t"), ["B.Z"])]
    assert set(got) == {"a.X", "sanitized.A.X", "A.Y", "B.Z"}


def test_what_a_batch_cannot_answer_is_left_to_run_alone():
    def run(key, names):
        # The binary crashed after reporting nothing for B: only A is known.
        return {"A.X": ("fail", "boom")} if "A.X" in names else {}

    script = {"name": "smoke", "properties": PROPS,
              "command": ["/b/t/smoke.sh", "/b/lib"]}
    env = ctest("E.X", "E.X", props=PROPS + [{"name": "ENVIRONMENT", "value": ["A=1"]}])
    wildcard = ctest("W.X", "W.*")
    tests = [ctest("A.X", "A.X"), ctest("B.X", "B.X", "/b/t/crash"),
             script, env, wildcard]
    got = gtest_batch.batch_outcomes(tests, run)
    assert got == {"A.X": ("fail", "boom")}


def test_a_failure_in_the_batch_is_not_a_pass():
    got = gtest_batch.parse_report(report(("A.X", "COMPLETED", ["no"])))
    assert got["A.X"][0] == "fail"
