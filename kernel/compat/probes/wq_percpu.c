// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* WQ_PERCPU: a workqueue bound to CPUs says so (6.17, backported to
 * 6.12.y after 6.12.95); from 7.2 alloc_workqueue() warns when neither
 * WQ_PERCPU nor WQ_UNBOUND is given.  An enum, so it needs a probe, not
 * #ifdef.
 */
#include <linux/workqueue.h>

extern int sroce_probe;
int sroce_probe = WQ_PERCPU;
