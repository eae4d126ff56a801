# SPDX-License-Identifier: GPL-2.0
#
# Shared build of a test consumer module of smbd, included by the Makefile
# of each tests/<dir>: builds the module in that directory against KDIR
# (default: the running kernel's headers, as the top Makefile), linked to
# the smbd.ko built at the top of the tree against the same KDIR (run
# "make" there first: its Module.symvers gives smbd's exported symbols).
# Works from any clone.
#
#   make -C tests/<dir> [KDIR=<kernel build tree>] [W=1] [C=2]
#   make -C tests/<dir> clean

top := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
KDIR ?= /lib/modules/$(shell uname -r)/build
W ?= 1

all: modules

modules:
	@test -f $(KDIR)/Makefile || { \
		echo "no kernel build tree at $(KDIR): make KDIR=..." >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=$(W) \
		KBUILD_EXTRA_SYMBOLS=$(top)/Module.symvers modules

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

.PHONY: all modules clean
