/* SPDX-License-Identifier: MIT */
/*
 * slat-hyp's device-tree editor (fdt.c, built here for the host) on a
 * tree dtc compiled from fdt_edit_test.dts:
 *
 *   test_fdt_edit IN.dtb OUT.dtb
 *
 * The edits slat-hyp makes to QEMU's tree (fdt_del_prop, fdt_set_prop,
 * fdt_add_node, fdt_max_phandle), each read back through the reader
 * (fdt_get_prop, fdt_cpu_ids, fdt_memory_reg, fdt_device_windows); and
 * the edits that must fail (no such parent, no room), each of which must
 * leave the blob as it was, byte for byte. OUT.dtb is the edited tree:
 * fdt-edit-test.sh decompiles it with dtc and compares it with
 * fdt_edit_expected.dts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdt.h"
#include "test_fdt_file.h"

#define BLOB_MAX	65536

static uint8_t src[BLOB_MAX], buf[BLOB_MAX], before[BLOB_MAX];
static int failures;

static void check(bool ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "FAIL", what);
	if (!ok)
		failures++;
}

/* A fresh copy of the source tree in buf, with room for @capacity bytes. */
static void load(uint32_t capacity)
{
	memset(buf, 0xa5, sizeof(buf));
	if (fdt_load(src, buf, capacity)) {
		printf("FAIL: fdt_load with capacity %u\n", capacity);
		exit(1);
	}
	memcpy(before, buf, sizeof(buf));
}

static bool unchanged(void)
{
	return !memcmp(before, buf, sizeof(buf));
}

static bool prop_is(const char *node, const char *name, const char *want)
{
	uint32_t len;
	const char *v = fdt_get_prop(buf, node, name, &len);

	return v && len == strlen(want) + 1 && !memcmp(v, want, len);
}

static bool has_prop(const char *node, const char *name)
{
	uint32_t len;

	return fdt_get_prop(buf, node, name, &len) != NULL;
}

static int set_str(const char *node, const char *name, const char *v)
{
	return fdt_set_prop(buf, node, name, v, (uint32_t)strlen(v) + 1);
}

static int set_u32(const char *node, const char *name, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)(v >> 24), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 8), (uint8_t)v };

	return fdt_set_prop(buf, node, name, b, 4);
}

/* What the source says, before any edit. */
static void check_source(void)
{
	static const uint64_t cpus[] = { 0x0, 0x100, 0x100000000ull };
	uint64_t ids[4], base, size;
	int n = fdt_cpu_ids(src, ids, 4);

	check(fdt_max_phandle(src) == 0x9000,
	      "max phandle 0x9000 (an old-style linux,phandle)");
	check(n == 3 && !memcmp(ids, cpus, sizeof(cpus)),
	      "CPU ids 0x0, 0x100, 0x100000000 (cpu-map skipped)");
	check(fdt_cpu_ids(src, ids, 2) == -1, "CPU ids past the room: -1");
	check(!fdt_memory_reg(src, 1, &base, &size) &&
	      base == 0x100000000ull && size == 0x40000000,
	      "second RAM range from the second memory node");
	check(fdt_memory_reg(src, 2, &base, &size) == -1, "no third RAM range");
	check(!fdt_compatible_reg(src, "arm,gic-v3", 1, &base, &size) &&
	      base == 0x80a0000 && size == 0xf60000,
	      "the GIC's second reg entry");
}

/* Each edit that must fail on a fresh copy, the copy unchanged. */
static void check_refused(void)
{
	uint32_t size, grow = 8 + 12;	/* BEGIN_NODE "idle-states", END_NODE */

	load(BLOB_MAX);
	size = fdt_size(buf);
	check(fdt_add_node(buf, "/nope", "x") == -1 && unchanged(),
	      "add_node under a missing parent: -1, blob unchanged");
	load(BLOB_MAX);
	check(fdt_add_node(buf, "/cpu", "x") == -1 && unchanged(),
	      "add_node under /cpu (only /cpus exists): -1, blob unchanged");
	load(size + grow - 1);
	check(fdt_add_node(buf, "/cpus", "idle-states") == -1 && unchanged(),
	      "add_node one byte short of room: -1, blob unchanged");
	load(size + grow);
	check(!fdt_add_node(buf, "/cpus", "idle-states") &&
	      fdt_size(buf) == size + grow,
	      "add_node with exactly the room: done");
	/* The name (17 bytes with its NUL) would fit, its 16-byte slot not. */
	load(size + 17);
	check(set_u32("/cpus", "no-such-name-yet", 1) == -1 && unchanged(),
	      "set_prop with room for its name but not its slot: -1, "
	      "blob unchanged");
	load(BLOB_MAX);
	check(set_u32("/nope", "x", 1) == -1 && unchanged(),
	      "set_prop on a missing node: -1, blob unchanged");
	load(BLOB_MAX);
	fdt_del_prop(buf, "/pcie", "no-such-prop");
	fdt_del_prop(buf, "/nope", "msi-map");
	fdt_del_prop(buf, "/cpus", "msi-map");
	check(unchanged(), "del_prop of a missing property or node: unchanged");
}

/* The window that starts at @base, if any. */
static bool window_at(const struct fdt_windows *ws, uint64_t base)
{
	for (uint32_t i = 0; i < ws->nr; i++)
		if (ws->w[i].base == base)
			return true;
	return false;
}

/* slat-hyp's own edits, as guest_dtb() and the idle states make them. */
static void edit(void)
{
	uint32_t size, ph;
	uint64_t ids[4];
	struct fdt_windows ws;

	load(BLOB_MAX);
	size = fdt_size(buf);
	fdt_del_prop(buf, "/pl011", "linux,phandle");
	check(!has_prop("/pl011", "linux,phandle") && has_prop("/pl011", "reg") &&
	      fdt_size(buf) == size,
	      "del_prop: gone, the node's other properties kept, nothing moved");
	check(fdt_max_phandle(buf) == 0x8001, "max phandle then 0x8001");
	fdt_del_prop(buf, "/pcie", "msi-map");
	fdt_del_prop(buf, "/pcie", "msi-parent");
	check(!has_prop("/pcie", "msi-map") && !has_prop("/pcie", "msi-parent") &&
	      prop_is("/pcie", "device_type", "pci"),
	      "del_prop twice on the PCIe bridge");
	check(!set_str("/intc/its", "status", "disabled") &&
	      prop_is("/intc/its", "status", "disabled"), "set_prop: ITS disabled");
	ph = fdt_max_phandle(buf) + 1;
	check(!fdt_add_node(buf, "/cpus", "idle-states") &&
	      !set_str("/cpus/idle-states", "entry-method", "psci") &&
	      !fdt_add_node(buf, "/cpus/idle-states", "cpu-sleep") &&
	      !set_str("/cpus/idle-states/cpu-sleep", "compatible",
		       "arm,idle-state") &&
	      !set_u32("/cpus/idle-states/cpu-sleep", "phandle", ph),
	      "add_node: /cpus/idle-states/cpu-sleep");
	check(prop_is("/cpus/idle-states/cpu-sleep", "compatible",
		      "arm,idle-state") &&
	      prop_is("/cpus/idle-states", "entry-method", "psci"),
	      "the new nodes' properties read back");
	check(fdt_max_phandle(buf) == 0x8002, "the new phandle is the max, 0x8002");
	check(fdt_cpu_ids(buf, ids, 4) == 3 && ids[2] == 0x100000000ull,
	      "/cpus still has three CPUs, in order");
	check(!fdt_add_node(buf, "/", "chosen") &&
	      !set_str("/chosen", "bootargs", "console=ttyAMA0") &&
	      prop_is("/chosen", "bootargs", "console=ttyAMA0"),
	      "add_node under the root");
	check(!fdt_device_windows(buf, 4096, &ws) && window_at(&ws, 0x80a0000) &&
	      !window_at(&ws, 0x8080000) && window_at(&ws, 0x4010000000ull),
	      "windows of the edited tree: no ITS, the ECAM");
}

int main(int argc, char **argv)
{
	FILE *out;

	if (argc != 3) {
		fprintf(stderr, "usage: %s IN.dtb OUT.dtb\n", argv[0]);
		return 2;
	}
	read_dtb_file(argv[1], src, sizeof(src));
	check_source();
	check_refused();
	edit();
	out = fopen(argv[2], "wb");
	if (!out || fwrite(buf, 1, fdt_size(buf), out) != fdt_size(buf) ||
	    fclose(out)) {
		perror(argv[2]);
		return 2;
	}
	printf("%s: %d failures\n", argv[1], failures);
	return failures != 0;
}
