// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Loads the built libsroce-rdmav<PABI>.so the way libibverbs does
 * (dlopen RTLD_NOW): every symbol must bind, including
 * verbs_register_driver_<PABI>@IBVERBS_PRIVATE_<PABI> (34 for rdma-core
 * 44.0 and 56.1, 65 for 65.0), and the constructor runs.
 */
#include <gtest/gtest.h>

#include <dlfcn.h>

namespace {

TEST(ProviderModule, LoadsWithRtldNowAndExportsNothing)
{
	void *handle = dlopen(SROCE_PROVIDER_MODULE, RTLD_NOW | RTLD_LOCAL);
	ASSERT_NE(handle, nullptr) << dlerror();

	/* Internals are hidden: libibverbs reaches us only via device_ops. */
	EXPECT_EQ(dlsym(handle, "_ZN5sroce10device_opsE"), nullptr);
	EXPECT_EQ(dlsym(handle, "_ZN5sroce12match_deviceEP15verbs_sysfs_dev"),
		  nullptr);

	/*
	 * No dlclose(): the constructor registered device_ops with
	 * libibverbs, which keeps the pointer forever (it never unloads
	 * providers either).
	 */
}

} /* namespace */
