/* SPDX-License-Identifier: MIT */
/*
 * slat-hyp's flattened-device-tree reader and editor (fdt.c). Free of
 * slat-hyp's own headers and of any C library, so that the host-side
 * test builds the same file against the DTB QEMU really generates.
 */
#ifndef HYP_FDT_H
#define HYP_FDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int fdt_load(const void *blob, void *buf, uint32_t capacity);
int fdt_set_prop(void *buf, const char *node, const char *name,
		 const void *val, uint32_t len);
const void *fdt_get_prop(const void *buf, const char *node, const char *name,
			 uint32_t *len);
uint32_t fdt_size(const void *buf);
int fdt_add_node(void *buf, const char *parent, const char *name);
void fdt_del_prop(void *buf, const char *node, const char *name);
uint32_t fdt_max_phandle(const void *buf);
int fdt_compatible_reg(const void *buf, const char *compatible,
		       uint32_t index, uint64_t *base, uint64_t *size);
int fdt_memory_reg(const void *buf, uint32_t index, uint64_t *base,
		   uint64_t *size);
int fdt_cpu_ids(const void *buf, uint64_t *ids, uint32_t max);

/* Merged device windows: a fixed capacity, nothing allocated. */
#define FDT_WINDOWS_MAX	32

struct fdt_window {
	uint64_t base, size;
};

struct fdt_windows {
	struct fdt_window w[FDT_WINDOWS_MAX];	/* sorted by base */
	uint32_t nr;
	uint32_t entries;	/* reg and PCI ranges entries that went in */
	const char *error;	/* why fdt_device_windows() failed */
	const char *error_node;	/* the node it was reading, or NULL */
};

int fdt_device_windows(const void *buf, uint64_t granule,
		       struct fdt_windows *out);

#endif
