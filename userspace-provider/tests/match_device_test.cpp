// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * match_device() against a fake verbs_sysfs_dev whose ibdev_path is a temp
 * directory.  The sysfs read goes through the real libibverbs
 * (ibv_read_ibdev_sysfs_file reads "<ibdev_path>/<file>"), so these tests
 * also pin where libibverbs finds ibdev_path inside verbs_sysfs_dev.
 */
#include "provider.hpp"

#include <gtest/gtest.h>

#include <fnmatch.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace {

namespace fs = std::filesystem;

class MatchDevice : public ::testing::Test {
protected:
	void SetUp() override
	{
		std::string tmpl =
			(fs::temp_directory_path() / "sroce-match-XXXXXX").string();
		ASSERT_NE(mkdtemp(tmpl.data()), nullptr)
			<< std::strerror(errno);
		dir_ = tmpl;
		set_name("foo");
		set_path(dir_.string());
	}

	void TearDown() override
	{
		std::error_code ec;
		fs::remove_all(dir_, ec);
	}

	void set_name(std::string_view name)
	{
		ASSERT_LT(name.size(), sizeof(dev_.ibdev_name));
		std::memset(dev_.ibdev_name, 0, sizeof(dev_.ibdev_name));
		name.copy(dev_.ibdev_name, name.size());
	}

	void set_path(std::string_view path)
	{
		ASSERT_LT(path.size(), sizeof(dev_.ibdev_path));
		std::memset(dev_.ibdev_path, 0, sizeof(dev_.ibdev_path));
		path.copy(dev_.ibdev_path, path.size());
	}

	void write_attr(std::string_view content)
	{
		std::ofstream f(dir_ / SROCE_ABI_SYSFS_ATTR, std::ios::binary);
		f.write(content.data(),
			static_cast<std::streamsize>(content.size()));
		ASSERT_TRUE(f.good());
	}

	bool match() { return sroce::match_device(&dev_); }

	fs::path dir_;
	verbs_sysfs_dev dev_{};
};

TEST_F(MatchDevice, RightIdMatchesWhateverTheDeviceName)
{
	write_attr(SROCE_ABI_ID "\n"); /* what the kernel's sysfs_emit writes */
	EXPECT_TRUE(match());
}

TEST_F(MatchDevice, RightIdWithoutNewlineMatches)
{
	write_attr(SROCE_ABI_ID);
	EXPECT_TRUE(match());
}

TEST_F(MatchDevice, RenamedDeviceStillMatches)
{
	set_name("renamed_by_rdma_dev_set");
	write_attr(SROCE_ABI_ID "\n");
	EXPECT_TRUE(match());
}

TEST_F(MatchDevice, MissingAttributeDoesNotMatch)
{
	EXPECT_FALSE(match());
}

TEST_F(MatchDevice, SroceNameWithoutAttributeDoesNotMatch)
{
	set_name("sroce0");
	EXPECT_FALSE(match());
}

TEST_F(MatchDevice, WrongIdDoesNotMatch)
{
	write_attr("sroce-2\n");
	EXPECT_FALSE(match());
}

TEST_F(MatchDevice, IdPrefixOrExtensionDoesNotMatch)
{
	write_attr(SROCE_ABI_ID "0\n");
	EXPECT_FALSE(match());
	write_attr("sroce-\n");
	EXPECT_FALSE(match());
	write_attr(" " SROCE_ABI_ID "\n");
	EXPECT_FALSE(match());
}

TEST_F(MatchDevice, EmptyAttributeDoesNotMatch)
{
	write_attr("");
	EXPECT_FALSE(match());
}

TEST_F(MatchDevice, OversizedAttributeDoesNotMatch)
{
	write_attr(std::string(SROCE_ABI_ID) + std::string(4096, ' ') + "\n");
	EXPECT_FALSE(match());
}

TEST_F(MatchDevice, AttributeThatIsADirectoryDoesNotMatch)
{
	fs::create_directory(dir_ / SROCE_ABI_SYSFS_ATTR);
	EXPECT_FALSE(match());
}

TEST_F(MatchDevice, ReadsFromIbdevPathOnly)
{
	/* The attribute exists, but ibdev_path points elsewhere. */
	write_attr(SROCE_ABI_ID "\n");
	const fs::path other = dir_ / "other";
	fs::create_directory(other);
	set_path(other.string());
	EXPECT_FALSE(match());
	set_path((dir_ / "does-not-exist").string());
	EXPECT_FALSE(match());
}

TEST_F(MatchDevice, IgnoresTheTableMatchResult)
{
	/* libibverbs sets ->match before calling us; it must not matter. */
	dev_.match = &sroce::device_ops.match_table[0];
	EXPECT_FALSE(match());
	write_attr(SROCE_ABI_ID "\n");
	dev_.match = nullptr;
	EXPECT_TRUE(match());
}

TEST(DeviceOps, DescribesTheSroceProvider)
{
	const verbs_device_ops &ops = sroce::device_ops;
	EXPECT_STREQ(ops.name, "sroce");
	EXPECT_EQ(ops.match_min_abi_version, SROCE_UVERBS_ABI_VERSION);
	EXPECT_EQ(ops.match_max_abi_version, SROCE_UVERBS_ABI_VERSION);
	EXPECT_EQ(ops.match_device, &sroce::match_device);
	EXPECT_NE(ops.alloc_context, nullptr);
	EXPECT_NE(ops.alloc_device, nullptr);
	EXPECT_NE(ops.uninit_device, nullptr);
	EXPECT_EQ(ops.import_context, nullptr);
	EXPECT_EQ(ops.static_providers, nullptr);
}

TEST(DeviceOps, MatchTableIsNameMatchThenSentinel)
{
	const verbs_match_ent *t = sroce::device_ops.match_table;
	ASSERT_NE(t, nullptr);
	EXPECT_EQ(t[0].kind, VERBS_MATCH_MODALIAS);
	EXPECT_STREQ(t[0].u.modalias, "rdma_device:*Nsroce*");
	EXPECT_EQ(t[0].driver_data, nullptr);
	EXPECT_EQ(t[1].kind, VERBS_MATCH_SENTINEL);

	/* How libibverbs applies it: fnmatch on "rdma_device:N<ibdev_name>". */
	EXPECT_EQ(fnmatch(t[0].u.modalias, "rdma_device:Nsroce0", 0), 0);
	EXPECT_NE(fnmatch(t[0].u.modalias, "rdma_device:Nrxe0", 0), 0);
}

TEST(DeviceLifetime, AllocDeviceReturnsZeroedDeviceAndUninitFreesIt)
{
	verbs_sysfs_dev sysfs{};
	verbs_device *vdev = sroce::device_ops.alloc_device(&sysfs);
	ASSERT_NE(vdev, nullptr);
	/* libibverbs asserts the private _ops of ibv_device are NULL. */
	EXPECT_EQ(vdev->device._ops._dummy1, nullptr);
	EXPECT_EQ(vdev->device._ops._dummy2, nullptr);
	EXPECT_EQ(vdev->ops, nullptr);
	EXPECT_EQ(vdev->sysfs, nullptr);
	EXPECT_EQ(vdev->refcount.load(), 0);
	sroce::device_ops.uninit_device(vdev); /* ASan flags a bad free */
}

} /* namespace */

/* Which libibverbs may load us (device.cpp's constructor). */
TEST(CompareLibibverbs, TheBuildsOwnIsTheSame)
{
	EXPECT_EQ(sroce::compare_libibverbs(
			  "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.44.0",
			  "1.14.44.0"),
		  sroce::LibibverbsMatch::same);
}

TEST(CompareLibibverbs, AnotherReleaseIsRefused)
{
	/* 50.0's verbs_qp is not 44.0's, though both load rdmav34. */
	EXPECT_EQ(sroce::compare_libibverbs(
			  "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.50.0",
			  "1.14.44.0"),
		  sroce::LibibverbsMatch::other);
	EXPECT_EQ(sroce::compare_libibverbs("libibverbs.so.1.14.44.1",
					    "1.14.44.0"),
		  sroce::LibibverbsMatch::other);
}

TEST(CompareLibibverbs, ANameWithoutAFullVersionSaysNothing)
{
	for (const char *name : {"/lib/libibverbs.so.1", "/lib/libibverbs.so",
				 "", "/opt/x/libverbs-custom.so.1.14.44.0",
				 "/lib/libibverbs.so.1.14.44.0~rc1"})
		EXPECT_EQ(sroce::compare_libibverbs(name, "1.14.44.0"),
			  sroce::LibibverbsMatch::unknown)
			<< name;
}
