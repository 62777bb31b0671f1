# kring top-level Makefile.
#
#   make                 build kmod/kring.ko for KDIR (default: the running kernel)
#   make check           install deps, build everything, run every test
#   make demo            boot the stock 6.12 kernel in QEMU and show kring at work
#   make vm-shell        interactive guest shell (KERNEL=stock-6.1|stock-6.12|kunit|debug)
#   make user            build libkring, the kring tool and the tests (build/user)
#   make clean
#
# Knobs: KDIR, KERNELS (check), KERNEL (vm-shell, demo), KRING_CACHE,
# GTEST_FILTER, KRING_BUILD (default build/).

KDIR ?= /lib/modules/$(shell uname -r)/build
KRING_BUILD ?= $(CURDIR)/build
KERNELS ?= stock-6.1 stock-6.12 kunit debug
KERNEL ?= stock-6.12
export KRING_BUILD KERNELS

.PHONY: all modules clean deps user check check-host check-vm demo vm-shell sparse

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

sparse:
	$(MAKE) -C $(KDIR) M=$(CURDIR) C=2 modules

deps:
	@tools/deps.sh

user: deps
	@tools/build-user.sh

check: deps
	@tools/check.sh

check-host: deps
	@KERNELS= tools/check.sh

check-vm: deps
	@tools/check.sh --no-host

demo: deps
	@tools/demo.sh $(KERNEL)

vm-shell: deps
	@tools/vm/shell.sh $(KERNEL)

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null || true
	rm -rf $(KRING_BUILD)
