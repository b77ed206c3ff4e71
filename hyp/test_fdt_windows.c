/* SPDX-License-Identifier: MIT */
/*
 * slat-hyp's device-window parser (fdt.c, built here for the host) on
 * trees it did not write:
 *
 *   test_fdt_windows virt FILE [CPUS]   QEMU's own virt DTB (dumpdtb=)
 *   test_fdt_windows buses FILE         fdt_windows_test.dts, through dtc
 *   test_fdt_windows full FILE          more windows than fit: must fail
 *
 * virt: the windows must cover the devices of QEMU's virt memory map
 * (hw/arm/virt.c) and the redistributors for CPUS CPUs, leave a hole
 * where the map has none, and keep clear of the tree's own /memory.
 * buses: exactly the windows the .dts's comments work out by hand.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdt.h"
#include "test_fdt_file.h"

#define GRANULE 4096ull

static int failures;

static void check(bool ok, const char *what, uint64_t a, uint64_t b)
{
	printf("%s: %s [0x%llx, +0x%llx)\n", ok ? "ok" : "FAIL", what,
	       (unsigned long long)a, (unsigned long long)b);
	if (!ok)
		failures++;
}

static uint8_t *read_dtb(const char *path)
{
	static uint8_t buf[4 << 20];

	read_dtb_file(path, buf, sizeof(buf));
	return buf;
}

/* Whether one window holds all of [base, base + size). */
static bool covered(const struct fdt_windows *ws, uint64_t base, uint64_t size)
{
	for (uint32_t i = 0; i < ws->nr; i++)
		if (base >= ws->w[i].base &&
		    base + size <= ws->w[i].base + ws->w[i].size)
			return true;
	return false;
}

static bool touches(const struct fdt_windows *ws, uint64_t base, uint64_t size)
{
	for (uint32_t i = 0; i < ws->nr; i++)
		if (base < ws->w[i].base + ws->w[i].size &&
		    ws->w[i].base < base + size)
			return true;
	return false;
}

/* Sorted, granule-aligned, neither overlapping nor touching. */
static void check_shape(const struct fdt_windows *ws)
{
	for (uint32_t i = 0; i < ws->nr; i++) {
		const struct fdt_window *w = &ws->w[i];

		printf("window %u: [0x%llx, 0x%llx)\n", i,
		       (unsigned long long)w->base,
		       (unsigned long long)(w->base + w->size));
		check(!(w->base % GRANULE) && !(w->size % GRANULE) && w->size,
		      "window aligned to the granule", w->base, w->size);
		if (i)
			check(ws->w[i - 1].base + ws->w[i - 1].size < w->base,
			      "window apart from the one before", w->base,
			      w->size);
	}
}

static uint64_t cells(const uint8_t *p, uint32_t n)
{
	uint64_t v = 0;

	for (uint32_t i = 0; i < n; i++)
		v = v << 32 | (uint64_t)p[4 * i] << 24 | p[4 * i + 1] << 16 |
		    p[4 * i + 2] << 8 | p[4 * i + 3];
	return v;
}

static uint32_t root_cells(const uint8_t *dtb, const char *name, uint32_t def)
{
	uint32_t len;
	const uint8_t *p = fdt_get_prop(dtb, "/", name, &len);

	return p && len == 4 ? (uint32_t)cells(p, 1) : def;
}

/* No window reaches into RAM as the tree's /memory describes it. */
static void check_memory(const uint8_t *dtb, const struct fdt_windows *ws)
{
	uint32_t ac = root_cells(dtb, "#address-cells", 2);
	uint32_t sc = root_cells(dtb, "#size-cells", 1), len, n = 0;
	const uint8_t *reg = fdt_get_prop(dtb, "/memory", "reg", &len);

	for (uint32_t off = 0; reg && off + 4 * (ac + sc) <= len;
	     off += 4 * (ac + sc), n++) {
		uint64_t base = cells(reg + off, ac);
		uint64_t size = cells(reg + off + 4 * ac, sc);

		check(!touches(ws, base, size), "no window in /memory's RAM",
		      base, size);
	}
	check(n > 0, "the tree has /memory", 0, 0);
}

struct expect {
	const char *what;
	uint64_t base, size;
};

/* hw/arm/virt.c's map for virtualization=on, gic-version=3, -m 2G. */
static const struct expect virt_devices[] = {
	{ "flash (cfi-flash, two banks)", 0x00000000, 0x08000000 },
	{ "GIC distributor", 0x08000000, 0x00010000 },
	{ "GIC ITS", 0x08080000, 0x00020000 },
	{ "GIC redistributors (first region)", 0x080a0000, 0x00f60000 },
	{ "PL011", 0x09000000, 0x00001000 },
	{ "PL031 RTC", 0x09010000, 0x00001000 },
	{ "fw_cfg", 0x09020000, 0x00000018 },
	{ "PL061 GPIO", 0x09030000, 0x00001000 },
	{ "virtio-mmio, 32 transports", 0x0a000000, 0x00004000 },
	{ "PCIe MMIO (32-bit window)", 0x10000000, 0x2eff0000 },
	{ "PCIe PIO", 0x3eff0000, 0x00010000 },
	{ "PCIe ECAM (high)", 0x4010000000ull, 0x10000000 },
	{ "PCIe MMIO (64-bit window)", 0x8000000000ull, 0x8000000000ull },
};

/* What gic.c reads for the kick: the GICv3 node's redistributor region,
 * a frame of 128 KiB per CPU from 0x080a0000. */
static void check_gic_redist(const uint8_t *dtb, unsigned low_cpus)
{
	uint64_t base = 0, size = 0;
	int ret = fdt_compatible_reg(dtb, "arm,gic-v3", 1, &base, &size);

	check(ret == 0 && base == 0x080a0000 && size >= low_cpus * 0x20000ull,
	      "GICv3 redistributor region by compatible", base, size);
	check(fdt_compatible_reg(dtb, "arm,gic-v3", 9, &base, &size) == -1,
	      "no reg entry past the node's", 9, 0);
	check(fdt_compatible_reg(dtb, "no,such-device", 0, &base, &size) == -1,
	      "no node with an unknown compatible", 0, 0);
}

static void check_virt(const uint8_t *dtb, const struct fdt_windows *ws,
		       unsigned cpus)
{
	/* 123 redistributors (128 KiB each) fit below 256 MiB; the
	 * rest go in a second region at 256 GiB. */
	unsigned high = cpus > 123 ? cpus - 123 : 0;

	for (size_t i = 0; i < sizeof(virt_devices) / sizeof(virt_devices[0]);
	     i++)
		check(covered(ws, virt_devices[i].base, virt_devices[i].size),
		      virt_devices[i].what, virt_devices[i].base,
		      virt_devices[i].size);
	if (high)
		check(covered(ws, 0x4000000000ull, high * 0x20000ull),
		      "GIC redistributors (second region)", 0x4000000000ull,
		      high * 0x20000ull);
	else
		check(!touches(ws, 0x4000000000ull, 0x4000000),
		      "no second redistributor region", 0x4000000000ull,
		      0x4000000);
	/* Where the map has nothing: between the GICD and the ITS, the
	 * doorbell page slat-hyp keeps unmapped, and the low ECAM,
	 * unused when the high one is there. */
	check(!touches(ws, 0x08010000, 0x70000), "hole after the GICD",
	      0x08010000, 0x70000);
	check(!touches(ws, 0x0b000000, GRANULE), "slat-hyp's doorbell unmapped",
	      0x0b000000, GRANULE);
	check(!covered(ws, 0x3f000000, 0x1000000), "low ECAM not described",
	      0x3f000000, 0x1000000);
	check_memory(dtb, ws);
	check_gic_redist(dtb, cpus - high);
}

/* fdt_windows_test.dts: each window worked out by hand there. */
static const struct expect bus_windows[] = {
	{ "uart behind two translating buses", 0x10001000, 0x1000 },
	{ "timer (empty ranges), page-rounded", 0x20000000, 0x1000 },
	{ "PCI ECAM, I/O and 32-bit memory merged", 0x30000000, 0x10400000 },
	{ "PCI 64-bit memory", 0x100000000ull, 0x100000000ull },
};

static void check_buses(const struct fdt_windows *ws)
{
	size_t n = sizeof(bus_windows) / sizeof(bus_windows[0]);

	check(ws->nr == n, "as many windows as worked out", ws->nr, n);
	for (size_t i = 0; i < n && i < ws->nr; i++)
		check(ws->w[i].base == bus_windows[i].base &&
		      ws->w[i].size == bus_windows[i].size,
		      bus_windows[i].what, bus_windows[i].base,
		      bus_windows[i].size);
}

/* A tree with a device per 2 pages, past the capacity: a clear no. */
static int check_full(const uint8_t *dtb)
{
	struct fdt_windows ws;
	int ret = fdt_device_windows(dtb, GRANULE, &ws);

	check(ret == -1 && ws.error && strstr(ws.error, "FDT_WINDOWS_MAX"),
	      ws.error ? ws.error : "no error", ws.nr, ws.entries);
	return failures != 0;
}

int main(int argc, char **argv)
{
	struct fdt_windows ws;
	const uint8_t *dtb;

	if (argc < 3 || (strcmp(argv[1], "virt") && strcmp(argv[1], "buses") &&
			 strcmp(argv[1], "full"))) {
		fprintf(stderr,
			"usage: %s virt FILE [CPUS] | buses FILE | full FILE\n",
			argv[0]);
		return 2;
	}
	dtb = read_dtb(argv[2]);
	if (!strcmp(argv[1], "full"))
		return check_full(dtb);
	if (fdt_device_windows(dtb, GRANULE, &ws)) {
		printf("FAIL: %s (node %s)\n", ws.error,
		       ws.error_node ? ws.error_node : "none");
		return 1;
	}
	printf("%s: %u windows from %u entries\n", argv[2], ws.nr, ws.entries);
	check_shape(&ws);
	if (!strcmp(argv[1], "virt"))
		check_virt(dtb, &ws, argc > 3 ? (unsigned)atoi(argv[3]) : 2);
	else
		check_buses(&ws);
	printf("%s: %d failures\n", argv[2], failures);
	return failures != 0;
}
