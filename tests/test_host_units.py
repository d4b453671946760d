"""Host unit tests (GoogleTest, through CTest), one pytest item per test so
the summary counts them all.  Each GoogleTest binary runs once for all of
its tests (gtest_batch.py); a test the batch cannot answer runs alone
through CTest."""
import os

import pytest

import gtest_batch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("SROCE_BUILD", os.path.join(ROOT, "build"))
CMAKE_BUILD = os.path.join(BUILD, "cmake")


# CTest's list, read once: the items below and the batch run both use it.
CTEST_TESTS = gtest_batch.ctest_tests(CMAKE_BUILD) if os.path.isdir(CMAKE_BUILD) else None


def ctest_names():
    if CTEST_TESTS is None:
        return ["<build missing: run scripts/build>"]
    return [t["name"] for t in CTEST_TESTS] or ["<no tests>"]


@pytest.fixture(scope="module")
def batch():
    return gtest_batch.batch_outcomes(CTEST_TESTS or [])


@pytest.mark.parametrize("name", ctest_names())
def test_unit(name, batch):
    assert not name.startswith("<"), name
    outcome, message = batch.get(name, (None, ""))
    if outcome == "pass":
        return
    if outcome == "skip":
        pytest.skip("GoogleTest skipped it")
    rc, output = gtest_batch.run_alone(CMAKE_BUILD, name)
    if outcome == "fail":
        pytest.fail("failed beside the other tests of its binary:\n%s\n"
                    "alone (status %d):\n%s" % (message, rc, output))
    assert rc == 0, output
    assert "100% tests passed" in output, output
