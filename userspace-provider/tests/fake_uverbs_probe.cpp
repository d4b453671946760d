// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Helper for fake_device_smoke.sh: lists the devices libibverbs matched
 * and, for each, the outcome of ibv_open_device() as "name provider errno".
 * Uses only the public libibverbs API, as an application would.
 */
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdio>

int main()
{
	int num = 0;
	ibv_device **list = ibv_get_device_list(&num);
	if (!list) {
		std::perror("ibv_get_device_list");
		return 1;
	}
	for (int i = 0; i < num; ++i) {
		errno = 0;
		ibv_context *ctx = ibv_open_device(list[i]);
		const int err = ctx ? 0 : errno;
		std::printf("%s open_errno=%d\n", ibv_get_device_name(list[i]),
			    err);
		if (ctx)
			ibv_close_device(ctx);
	}
	ibv_free_device_list(list);
	return 0;
}
