// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The RC requester's send window; see window.h. */
#include "window.h"

void roce_window_init(struct roce_window *w, u32 max)
{
	if (max < ROCE_WINDOW_MIN)
		max = ROCE_WINDOW_MIN;
	w->max = max;
	w->cwnd = max;
	w->ssthresh = max;
	w->credit = 0;
}

void roce_window_timeout(struct roce_window *w)
{
	w->ssthresh = w->cwnd / 2;
	if (w->ssthresh < ROCE_WINDOW_MIN)
		w->ssthresh = ROCE_WINDOW_MIN;
	w->cwnd = ROCE_WINDOW_MIN;
	w->credit = 0;
}

void roce_window_acked(struct roce_window *w, u32 npsn)
{
	while (npsn && w->cwnd < w->max) {
		if (w->cwnd < w->ssthresh) {
			/* Doubling: one PSN per PSN acknowledged. */
			u32 step = w->ssthresh - w->cwnd;

			if (step > npsn)
				step = npsn;
			w->cwnd += step;
			npsn -= step;
			continue;
		}
		/* Then one PSN per window's worth of ACKs. */
		if (w->credit + npsn < w->cwnd) {
			w->credit += npsn;
			return;
		}
		npsn -= w->cwnd - w->credit;
		w->credit = 0;
		w->cwnd++;
	}
}
