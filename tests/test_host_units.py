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


def ctest_names():
    if not os.path.isdir(CMAKE_BUILD):
        return ["<build missing: run scripts/build>"]
    return [t["name"] for t in gtest_batch.ctest_tests(CMAKE_BUILD)] or ["<no tests>"]


@pytest.fixture(scope="module")
def batch():
    return gtest_batch.batch_outcomes(gtest_batch.ctest_tests(CMAKE_BUILD))


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
