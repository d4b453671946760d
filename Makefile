# Convenience wrapper around Kbuild and CMake.  `scripts/build` is what the
# README and CI use; these targets are for people building by hand.
KVER ?= $(shell scripts/kernel-version 2>/dev/null || uname -r)
KDIR ?= /lib/modules/$(KVER)/build
BUILD ?= build

.PHONY: all module provider install clean dkms-install dkms-remove
all: module provider

# The probes run on every build: a kernel upgrade changes their answers.
module:
	kernel/compat/configure $(KDIR) $(CURDIR)/sroce_config.h
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# The provider alone (userspace-provider/ builds on its own): no host
# tests or benchmarks, so no googletest or Google Benchmark needed.
provider:
	cmake -S userspace-provider -B $(BUILD)/provider -DSROCE_BUILD_PROVIDER_TESTS=OFF
	cmake --build $(BUILD)/provider -j

install: all
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install
	depmod -a $(KVER)
	cmake --install $(BUILD)/provider

# The module through DKMS, for distributions without our packages
# (scripts/dkms-install says what it needs); the running kernel unless
# DKMS_KVER says another.
DKMS_KVER ?= $(shell uname -r)
dkms-install:
	scripts/dkms-install --kernel $(DKMS_KVER)

dkms-remove:
	scripts/dkms-install --remove

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	rm -f sroce_config.h
	rm -rf $(BUILD)
