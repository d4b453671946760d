// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Helpers shared by the host tests: hex literals, a deterministic PRNG and
// a deliberately naive bit-at-a-time CRC-32 to check the fast engine with.
#pragma once

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "compat.h"

namespace sroce_test {

// "45 00 00 3c..." -> bytes; whitespace is ignored.
inline std::vector<u8> hex(std::string_view s)
{
	std::vector<u8> out;
	int hi = -1;

	for (char c : s) {
		if (std::isspace(static_cast<unsigned char>(c)))
			continue;
		int v = std::isdigit(static_cast<unsigned char>(c)) ? c - '0' :
			(std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
		if (v < 0 || v > 15)
			throw std::invalid_argument("bad hex digit");
		if (hi < 0) {
			hi = v;
		} else {
			out.push_back(static_cast<u8>(hi << 4 | v));
			hi = -1;
		}
	}
	if (hi >= 0)
		throw std::invalid_argument("odd hex length");
	return out;
}

// splitmix64: reproducible across runs and platforms.
struct Rng {
	u64 s;
	explicit Rng(u64 seed) : s(seed) {}
	u64 next()
	{
		u64 z = (s += 0x9E3779B97F4A7C15ull);
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
		return z ^ (z >> 31);
	}
	u32 u32v() { return static_cast<u32>(next()); }
	u8 u8v() { return static_cast<u8>(next()); }
	bool coin() { return next() & 1; }
	std::vector<u8> bytes(size_t n)
	{
		std::vector<u8> v(n);
		for (auto &b : v)
			b = u8v();
		return v;
	}
};

// Reference CRC-32 register update, one bit at a time, straight from the
// definition of the reflected 0xEDB88320 polynomial.  Same convention as
// roce_crc32_update(): raw register in, raw register out, no inversion.
inline u32 ref_crc32(u32 reg, const u8 *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		reg ^= p[i];
		for (int b = 0; b < 8; b++)
			reg = (reg & 1) ? (reg >> 1) ^ 0xEDB88320u : reg >> 1;
	}
	return reg;
}

inline u32 ref_crc32(u32 reg, const std::vector<u8> &v)
{
	return ref_crc32(reg, v.data(), v.size());
}

} // namespace sroce_test
