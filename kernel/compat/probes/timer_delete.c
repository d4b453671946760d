// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* timer_delete() and timer_delete_sync() (6.2, backported to 6.1.y);
 * del_timer() and del_timer_sync() were removed later (6.15).
 */
#include <linux/timer.h>

void sroce_probe(struct timer_list *t);
void sroce_probe(struct timer_list *t)
{
	timer_delete(t);
	timer_delete_sync(t);
}
