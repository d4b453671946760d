"""The host unit tests' outcomes from one run of each GoogleTest binary.

CTest (gtest_discover_tests) starts a binary once per test: 377 starts of
ctest and of the binary, ~0.25 s each, took 70-100 s of a suite run for
~12 s of tests.  A binary run once with a JSON report gives every test's
outcome; test_host_units.py still has one pytest item per CTest test.

A test goes to CTest on its own, as before, when it is not a plain
GoogleTest command (a script), has CTest properties this module does not
apply (an environment, a timeout), or is missing from its binary's report
(the binary crashed or hung: GoogleTest writes the report at the end).
A test that fails in the shared process is run alone too, for its own
output; it fails either way (a test that passes only alone depends on
the order).
"""
import json
import os
import re
import subprocess
import tempfile

FILTER = "--gtest_filter="
# The properties gtest_discover_tests gives every test, which a batch run
# honours: its folder, skips reported as such, the labels (ignored).
BATCHABLE = {"WORKING_DIRECTORY", "SKIP_REGULAR_EXPRESSION", "LABELS"}
BINARY_TIMEOUT = 900


def ctest_tests(cmake_build):
    """CTest's own description of every test (name, command, properties)."""
    r = subprocess.run(["ctest", "--show-only=json-v1"], cwd=cmake_build,
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["tests"]


def batch_key(test):
    """(binary, other arguments, folder) for a test one binary run can
    answer with the others of the same key, and its GoogleTest name; None
    when it must run alone."""
    command = test.get("command") or []
    props = {p["name"]: p["value"] for p in test.get("properties", [])}
    filters = [a for a in command[1:] if a.startswith(FILTER)]
    if len(filters) != 1 or not set(props) <= BATCHABLE:
        return None
    name = filters[0][len(FILTER):]
    if not name or any(c in name for c in "*?:-"):
        return None
    rest = tuple(a for a in command[1:] if not a.startswith(FILTER))
    return (command[0], rest, props.get("WORKING_DIRECTORY", "")), name


def parse_report(report):
    """{GoogleTest full name: (outcome, message)} from a --gtest_output=json
    report; outcome is 'pass', 'skip' or 'fail'."""
    outcomes = {}
    for suite in report.get("testsuites", []):
        for t in suite.get("testsuite", []):
            full = "%s.%s" % (suite["name"], t["name"])
            failures = [f.get("failure", "") for f in t.get("failures", [])]
            if failures:
                outcomes[full] = ("fail", "\n".join(failures))
            elif t.get("result") == "SKIPPED":
                outcomes[full] = ("skip", "")
            elif t.get("status") == "RUN" and t.get("result") == "COMPLETED":
                outcomes[full] = ("pass", "")
            else:       # not run (filtered, suppressed): no outcome
                continue
    return outcomes


def run_binary(key, names):
    """Run one binary with exactly `names` and return its parse_report()
    (empty when it left no report)."""
    binary, rest, folder = key
    with tempfile.TemporaryDirectory(prefix="sroce-gtest.") as tmp:
        out = os.path.join(tmp, "report.json")
        cmd = [binary, *rest, FILTER + ":".join(sorted(names)),
               "--gtest_output=json:" + out]
        try:
            subprocess.run(cmd, cwd=folder or None, capture_output=True,
                           timeout=BINARY_TIMEOUT)
        except subprocess.TimeoutExpired:
            return {}
        try:
            with open(out) as f:
                return parse_report(json.load(f))
        except (OSError, ValueError):
            return {}


def batch_outcomes(tests, run=run_binary):
    """{CTest name: (outcome, message)} for every test a batch run answered;
    the others are absent (the caller runs them alone)."""
    groups = {}
    for t in tests:
        k = batch_key(t)
        if k:
            groups.setdefault(k[0], {})[k[1]] = t["name"]
    outcomes = {}
    for key, by_gtest in groups.items():
        report = run(key, list(by_gtest))
        for gtest_name, ctest_name in by_gtest.items():
            if gtest_name in report:
                outcomes[ctest_name] = report[gtest_name]
    return outcomes


def run_alone(cmake_build, name):
    """(returncode, output) of CTest running the one test `name`."""
    r = subprocess.run(["ctest", "--output-on-failure",
                        "-R", "^%s$" % re.escape(name)],
                       cwd=cmake_build, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr
