// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A one-CPU poller's yield (idle_poll.hpp). */
#include "idle_poll.hpp"

#include <sched.h>

namespace sroce {
namespace {

void sched_yield_cpu() noexcept
{
	sched_yield();
}

} /* namespace */

void (*yield_cpu)() noexcept = sched_yield_cpu;

bool IdlePoll::caller_has_one_cpu() noexcept
{
	cpu_set_t set;
	CPU_ZERO(&set);
	/* On failure (a mask larger than cpu_set_t): many CPUs, keep spinning. */
	if (sched_getaffinity(0, sizeof(set), &set))
		return false;
	return CPU_COUNT(&set) == 1;
}

} /* namespace sroce */
