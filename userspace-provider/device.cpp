// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Provider registration and device matching.
 *
 * libibverbs dlopen()s us, our constructor registers device_ops, and for
 * every uverbs device it has not matched yet libibverbs asks match_device().
 * We claim a device only if the kernel module marked it: its ib_device
 * carries the sysfs attribute SROCE_ABI_SYSFS_ATTR with the value
 * SROCE_ABI_ID.  The name match in the table is informational only (it sets
 * sysfs_dev->match); match_device() alone decides, so
 *   - a device renamed with `rdma dev set NAME name NEW` is still ours;
 *   - a foreign device that merely happens to be called sroce* is not;
 *   - a kernel speaking another sroce ABI is refused here, before any
 *     command reaches it.
 * The uverbs ABI version range below is checked by libibverbs afterwards.
 */
#include "provider.hpp"

#include <cstdio>
#include <new>
#include <string_view>

namespace sroce {
namespace {

constexpr auto kNamePattern = abi::make_name_pattern("sroce");

constexpr verbs_match_ent kMatchTable[] = {
	abi::match_name(kNamePattern),
	abi::match_sentinel(),
};

/*
 * Room for SROCE_ABI_ID with slack.  libibverbs fails the read (-1) rather
 * than truncate, so a longer value can never compare equal by accident.
 */
constexpr std::size_t kAbiAttrBufLen = 64;
static_assert(sizeof(SROCE_ABI_ID) < kAbiAttrBufLen);

verbs_device *alloc_device(verbs_sysfs_dev * /*sysfs_dev*/) noexcept
{
	/* Value-initialised: libibverbs expects zeroed memory. */
	auto *dev = new (std::nothrow) Device{};
	if (!dev) {
		errno = ENOMEM;
		return nullptr;
	}
	return &dev->vdev;
}

/* Last reference gone; libibverbs has already released vdev->sysfs. */
void uninit_device(verbs_device *vdev) noexcept
{
	delete to_device(vdev);
}

} /* namespace */

bool match_device(verbs_sysfs_dev *sysfs_dev) noexcept
{
	char buf[kAbiAttrBufLen];
	const int len = ibv_read_ibdev_sysfs_file(buf, sizeof(buf), sysfs_dev,
						  SROCE_ABI_SYSFS_ATTR);
	if (len <= 0)
		return false; /* absent, unreadable, empty or oversized */

	/* libibverbs strips one '\n'; tolerate a writer that emits more. */
	std::string_view value(buf, static_cast<std::size_t>(len));
	while (!value.empty() && value.back() == '\n')
		value.remove_suffix(1);

	if (value == SROCE_ABI_ID)
		return true;

	/*
	 * An sroce kernel module of another ABI generation.  Say so, as
	 * libibverbs does for a uverbs ABI mismatch: otherwise the device
	 * silently has no provider and the user sees only "no devices".
	 */
	std::fprintf(stderr,
		     "libsroce: Warning: %s reports %s \"%.*s\", this provider "
		     "supports \"%s\"; not claiming it\n",
		     sysfs_dev->ibdev_name, SROCE_ABI_SYSFS_ATTR,
		     static_cast<int>(value.size()), value.data(),
		     SROCE_ABI_ID);
	return false;
}

constinit const verbs_device_ops device_ops = {
	.name = "sroce",
	.match_min_abi_version = SROCE_UVERBS_ABI_VERSION,
	.match_max_abi_version = SROCE_UVERBS_ABI_VERSION,
	.match_table = kMatchTable,
	.static_providers = nullptr,
	.match_device = match_device,
	.alloc_context = alloc_context,
	.import_context = nullptr, /* ibv_import_device() gets EOPNOTSUPP */
	.alloc_device = alloc_device,
	.uninit_device = uninit_device,
};

namespace {

/*
 * Runs at dlopen().  device_ops is constant-initialised, so it is complete
 * before any constructor runs.  libibverbs keeps the pointer for the life
 * of the process (providers are never unloaded).
 */
[[gnu::constructor]] void register_provider() noexcept
{
	abi::register_driver(&device_ops);
}

} /* namespace */
} /* namespace sroce */
