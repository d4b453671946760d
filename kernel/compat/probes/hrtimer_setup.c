// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* hrtimer_setup() initialises a timer with its callback (6.13); later
 * kernels removed hrtimer_init().
 */
#include <linux/hrtimer.h>

static enum hrtimer_restart fn(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}

void sroce_probe(struct hrtimer *t);
void sroce_probe(struct hrtimer *t)
{
	hrtimer_setup(t, fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL_SOFT);
}
