/* SPDX-License-Identifier: MIT */
/* Empty: bench/kvm-peer/shim/kvm-shim.h defines what this header would. */
