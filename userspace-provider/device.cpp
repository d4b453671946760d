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

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

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

LibibverbsMatch compare_libibverbs(std::string_view loaded_file,
				   std::string_view built) noexcept
{
	constexpr std::string_view kStem = "libibverbs.so.";
	const auto slash = loaded_file.rfind('/');
	if (slash != std::string_view::npos)
		loaded_file.remove_prefix(slash + 1);
	if (!loaded_file.starts_with(kStem))
		return LibibverbsMatch::unknown;
	loaded_file.remove_prefix(kStem.size());
	/* Only a full version (four numbers: 1.14.44.0) names a release. */
	int dots = 0;
	for (char c : loaded_file) {
		if (c == '.')
			++dots;
		else if (c < '0' || c > '9')
			return LibibverbsMatch::unknown;
	}
	if (dots != 3)
		return LibibverbsMatch::unknown;
	return loaded_file == built ? LibibverbsMatch::same : LibibverbsMatch::other;
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
 * The file of the libibverbs that loaded us, symlinks resolved; empty if
 * it cannot be found.
 */
std::string_view loaded_libibverbs(char (&path)[PATH_MAX]) noexcept
{
	Dl_info info{};
	if (!dladdr(reinterpret_cast<void *>(&ibv_get_device_list), &info) ||
	    !info.dli_fname || !realpath(info.dli_fname, path))
		return {};
	return path;
}

/*
 * Runs at dlopen().  device_ops is constant-initialised, so it is complete
 * before any constructor runs.  libibverbs keeps the pointer for the life
 * of the process (providers are never unloaded).
 *
 * Every rdma-core from 39.0 to 56.1 loads libsroce-rdmav34.so, yet the
 * layout of what we share with libibverbs (struct verbs_qp's tail, for
 * one) differs between them: a provider built for one and loaded by
 * another would read and write the wrong fields.  So it registers only
 * under the libibverbs it was built against, and says why otherwise.
 */
[[gnu::constructor]] void register_provider() noexcept
{
	char path[PATH_MAX];
	const std::string_view loaded = loaded_libibverbs(path);
	if (compare_libibverbs(loaded, SROCE_IBVERBS_LIBVERSION) ==
	    LibibverbsMatch::other) {
		std::fprintf(stderr,
			     "libsroce: Warning: built for libibverbs %s, loaded "
			     "by %.*s; not registering (rebuild the provider "
			     "against this rdma-core)\n",
			     SROCE_IBVERBS_LIBVERSION,
			     static_cast<int>(loaded.size()), loaded.data());
		return;
	}
	abi::register_driver(&device_ops);
}

} /* namespace */
} /* namespace sroce */
