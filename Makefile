# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of smbd.ko (and smbd_kunit.ko when the kernel has KUnit).
#
#   make                      build against the running kernel's headers
#                             (/lib/modules/$(uname -r)/build)
#   make KDIR=/usr/src/linux-headers-6.12.<n>+deb12-amd64 (or 6.1.0-<n>-amd64)
#                             build against another kernel's headers
#   make testkernel           build against the project's test kernel
#                             (built or reused by tests/vm/build-kernel.sh,
#                             6 to 13 minutes the first time)
#   make check                sparse (C=2) and checkpatch --strict
#   make install              install smbd.ko into KDIR's kernel's updates/
#                             (make modules_install: the same)
#   make clean

KDIR ?= /lib/modules/$(shell uname -r)/build
W ?= 1

all: modules

# A clear word when the kernel's build tree is missing, not make's own.
kdir:
	@test -f $(KDIR)/Makefile || { \
		echo "smbd: no kernel build tree at $(KDIR)" >&2; \
		echo "  for the running kernel: apt install linux-headers-$$(uname -r)" >&2; \
		echo "  for another one: make KDIR=<its build tree>" >&2; \
		echo "  for the project's test kernel: make testkernel" >&2; \
		exit 1; }

modules: kdir
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=$(W) modules

testkernel:
	$(MAKE) KDIR="$$($(CURDIR)/tests/vm/build-kernel.sh)/build" modules

check: kdir
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=$(W) C=2 CF=-D__CHECK_ENDIAN__ modules
	$(CURDIR)/scripts/checkpatch.sh

modules_install: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates modules_install

install: modules_install

# Without a build tree (headers removed since), the build's own files go.
clean:
	@if [ -f $(KDIR)/Makefile ]; then \
		$(MAKE) -C $(KDIR) M=$(CURDIR) clean; \
	else \
		rm -rf *.o *.ko *.mod *.mod.c .*.cmd .tmp_versions Module.symvers \
			modules.order kunit/*.o kunit/*.ko kunit/*.mod \
			kunit/*.mod.c kunit/.*.cmd kunit/modules.order; \
	fi

.PHONY: all kdir modules testkernel check modules_install install clean
