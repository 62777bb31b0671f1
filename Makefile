# kring top-level Makefile.
#
#   make                 build kmod/kring.ko for KDIR (default: the running kernel)
#                        (and the KUnit suites where KDIR has KUnit)
#   make install         install kring.ko (modules_install), the producer SDK
#                        headers and Module.symvers (install-sdk), see
#                        docs/PRODUCER.md
#   make modules_install install kring.ko alone, through the kernel's
#                        modules_install (INSTALL_MOD_PATH=$(DESTDIR),
#                        INSTALL_MOD_DIR default updates)
#   make check           install deps, build everything, run every test
#   make check-full      the same with the long modes (fuzzing, stress) on
#                        more kernels (arm64 with 4 KiB pages, the newest
#                        Debian kernel, PREEMPT_RT), every kernel booted
#                        REPEAT times (default 3)
#   make check-build     build kring (module, KUnit, benchmark module, SDK
#                        example) against every kernel source it can get,
#                        without booting any: a compile break in minutes
#   make bench           the benchmarks, docs/PERFORMANCE.md: the ring core's
#                        instructions per record against a bare SPSC ring
#                        (host, callgrind), then kring's producer against
#                        ftrace's ring buffer in a QEMU guest (KERNEL=,
#                        default stock-6.12; BENCH_ARGS=producer_bench's options)
#   make demo            boot the stock 6.12 kernel in QEMU and show kring at work
#   make vm-shell        interactive guest shell (KERNEL=, one of
#                        tools/dev/vm/kernel.sh list)
#   make user            build libkring, the kring tool and the tests (build/user)
#   make clean
#
# Knobs: KDIR, KERNELS (check), KERNEL (vm-shell, demo, bench), KRING_CACHE,
# GTEST_FILTER, KRING_BUILD (default build/), PREFIX (default /usr/local)
# and DESTDIR (install). LOAD=1 (check, check-full): every host CPU busy
# while the guests run; LOAD=2: every guest CPU too, while the in-guest
# test binaries run (docs/TESTING.md, "No test waits on time").

KDIR ?= /lib/modules/$(shell uname -r)/build
KRING_BUILD ?= $(CURDIR)/build
# The kernels of make check, and the ones check-full adds (README.md,
# "Kernels"); KERNELS= on the command line names others for either.
CHECK_KERNELS := stock-6.1 stock-6.12 kcsan debug arm64-64k
FULL_KERNELS := $(CHECK_KERNELS) arm64-4k debug-newest stock-6.12-rt rt-debug
KERNELS_GIVEN := $(filter-out undefined default,$(origin KERNELS))
KERNELS ?= $(CHECK_KERNELS)
REPEAT ?= 3
LOAD ?= 0
KERNEL ?= stock-6.12
PREFIX ?= /usr/local
DESTDIR ?=
export KRING_BUILD KERNELS LOAD

# The SDK: what a producer module outside this tree builds against.
SDK_HEADERS := kmod/include/kring/output.h kmod/include/kring/producer.h
# The release the kernel reports (uname -r), which names /lib/modules/<release>.
KRELEASE = $(shell awk -F'"' '/UTS_RELEASE/ { print $$2 }' $(KDIR)/include/generated/utsrelease.h)
SDK_SYMVERS_DIR = $(DESTDIR)$(PREFIX)/lib/kring/$(KRELEASE)
INSTALL_MOD_DIR ?= updates

.PHONY: all modules module modules_install install install-sdk clean deps user \
	check check-full check-build check-host check-vm bench demo vm-shell sparse

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

# kring.ko alone, without the KUnit suites: what is installed (and what
# dkms.conf builds).
module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) KRING_KUNIT=n modules

# -> $(DESTDIR)/lib/modules/<kernel release>/updates/kmod/kring.ko
modules_install: module
	$(MAKE) -C $(KDIR) M=$(CURDIR) KRING_KUNIT=n INSTALL_MOD_PATH=$(DESTDIR) \
		INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) modules_install

# -> $(PREFIX)/include/kring/{output,producer}.h, $(PREFIX)/include/linux/kring.h
#    and $(PREFIX)/lib/kring/<kernel release>/Module.symvers
install-sdk: module
	install -d $(DESTDIR)$(PREFIX)/include/kring $(DESTDIR)$(PREFIX)/include/linux \
		$(SDK_SYMVERS_DIR)
	install -m 644 $(SDK_HEADERS) $(DESTDIR)$(PREFIX)/include/kring/
	install -m 644 uapi/linux/kring.h $(DESTDIR)$(PREFIX)/include/linux/
	install -m 644 Module.symvers $(SDK_SYMVERS_DIR)/

install: modules_install install-sdk

sparse:
	$(MAKE) -C $(KDIR) M=$(CURDIR) C=2 modules

deps:
	@tools/dev/deps.sh

user: deps
	@tools/dev/build-user.sh

check: deps
	@tools/dev/check.sh

check-build: deps
	@tools/dev/check-build.sh

check-host: deps
	@KERNELS= tools/dev/check.sh

check-full: deps
	@KRING_FULL=1 REPEAT=$(REPEAT) KERNELS="$(if $(KERNELS_GIVEN),$(KERNELS),$(FULL_KERNELS))" \
		tools/dev/check.sh

check-vm: deps
	@tools/dev/check.sh --no-host

bench: deps
	@tools/dev/core-bench.sh
	@tools/dev/bench.sh $(KERNEL)

demo: deps
	@tools/dev/demo/demo.sh $(KERNEL)

vm-shell: deps
	@tools/dev/vm/shell.sh $(KERNEL)

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null || true
	rm -rf $(KRING_BUILD)
