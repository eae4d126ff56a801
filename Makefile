# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of smbd.ko (and smbd_kunit.ko when the kernel has KUnit).
#
#   make                      build against the project's test kernel
#                             (built or reused by scripts/build-kernel.sh)
#   make KDIR=/usr/src/linux-headers-6.12.<n>+deb12-amd64
#                             build against Debian's kernel headers
#   make check                sparse (C=2) and checkpatch --strict
#   make modules_install      install smbd.ko into KDIR's kernel's
#                             updates/ (make install: the same)
#   make clean

KDIR ?= $(shell $(CURDIR)/scripts/build-kernel.sh)/build
W ?= 1

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=$(W) modules

check:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=$(W) C=2 CF=-D__CHECK_ENDIAN__ modules
	$(CURDIR)/scripts/checkpatch.sh

modules_install: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates modules_install

install: modules_install

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

.PHONY: all modules check modules_install install clean
