/* SPDX-License-Identifier: MIT */
/*
 * A small reader and editor of flattened device trees (the devicetree
 * specification's format, version 17): enough to give the guest a smaller
 * memory node and a /chosen with bootargs and the initramfs, and to find
 * the device windows the guest may reach. The tree is rebuilt in a buffer
 * as header, reservation map, structure block, strings block, so that a
 * new property only moves what follows it.
 */
#include "fdt.h"

void *memmove(void *dst, const void *src, size_t n);
void *memcpy(void *dst, const void *src, size_t n);

#define FDT_MAGIC	0xd00dfeedu
#define FDT_BEGIN_NODE	1u
#define FDT_END_NODE	2u
#define FDT_PROP	3u
#define FDT_NOP		4u
#define FDT_END		9u

enum { H_MAGIC, H_TOTALSIZE, H_OFF_STRUCT, H_OFF_STRINGS, H_OFF_RSVMAP,
       H_VERSION, H_LAST_COMP, H_BOOT_CPU, H_SIZE_STRINGS, H_SIZE_STRUCT,
       H_WORDS };

static uint32_t be32(const void *p)
{
	const uint8_t *b = p;

	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

static void put_be32(void *p, uint32_t v)
{
	uint8_t *b = p;

	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

static uint32_t hdr(const void *buf, int field)
{
	return be32((const uint8_t *)buf + 4 * field);
}

static void set_hdr(void *buf, int field, uint32_t v)
{
	put_be32((uint8_t *)buf + 4 * field, v);
}

static uint32_t align4(uint32_t v)
{
	return (v + 3) & ~3u;
}

static uint32_t str_len(const char *s)
{
	uint32_t n = 0;

	while (s[n])
		n++;
	return n;
}

static bool str_eq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

static uint32_t capacity_of;

int fdt_load(const void *blob, void *buf, uint32_t capacity)
{
	uint32_t rsv_off = H_WORDS * 4, rsv_len, st_len, str_len_;
	const uint8_t *src = blob;
	uint8_t *dst = buf;

	if (be32(src) != FDT_MAGIC || hdr(blob, H_VERSION) < 17)
		return -1;
	/* The reservation map runs until its all-zero entry. */
	rsv_len = 0;
	for (const uint8_t *r = src + hdr(blob, H_OFF_RSVMAP);; r += 16) {
		rsv_len += 16;
		if (!be32(r) && !be32(r + 4) && !be32(r + 8) && !be32(r + 12))
			break;
	}
	st_len = hdr(blob, H_SIZE_STRUCT);
	str_len_ = hdr(blob, H_SIZE_STRINGS);
	if (rsv_off + rsv_len + st_len + str_len_ > capacity)
		return -1;
	memcpy(dst, src, H_WORDS * 4);
	memcpy(dst + rsv_off, src + hdr(blob, H_OFF_RSVMAP), rsv_len);
	memcpy(dst + rsv_off + rsv_len, src + hdr(blob, H_OFF_STRUCT), st_len);
	memcpy(dst + rsv_off + rsv_len + st_len,
	       src + hdr(blob, H_OFF_STRINGS), str_len_);
	set_hdr(buf, H_OFF_RSVMAP, rsv_off);
	set_hdr(buf, H_OFF_STRUCT, rsv_off + rsv_len);
	set_hdr(buf, H_OFF_STRINGS, rsv_off + rsv_len + st_len);
	set_hdr(buf, H_TOTALSIZE, rsv_off + rsv_len + st_len + str_len_);
	capacity_of = capacity;
	return 0;
}

uint32_t fdt_size(const void *buf)
{
	return hdr(buf, H_TOTALSIZE);
}

/* The token after the one at @off in the structure block. */
static uint32_t next_token(const uint8_t *st, uint32_t off)
{
	switch (be32(st + off)) {
	case FDT_BEGIN_NODE:
		return off + 4 + align4(str_len((const char *)st + off + 4) + 1);
	case FDT_PROP:
		return off + 12 + align4(be32(st + off + 4));
	default:
		return off + 4;
	}
}

/* A node's name matches a path component: exactly, or up to its '@'. */
static bool name_matches(const char *name, const char *want, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (name[i] != want[i])
			return false;
	return name[n] == '\0' || name[n] == '@';
}

/* The structure-block offset of node @path ("/", "/chosen", "/a/b"). */
static int64_t find_node(const void *buf, const char *path)
{
	const uint8_t *st = (const uint8_t *)buf + hdr(buf, H_OFF_STRUCT);
	uint32_t end = hdr(buf, H_SIZE_STRUCT);
	/* depth: of the open node (the root is 0); matched: the path's
	 * components found, the deepest at depth matched. */
	int depth = -1, matched = 0;
	const char *p = path + 1;

	for (uint32_t off = 0; off < end; off = next_token(st, off)) {
		uint32_t tok = be32(st + off), n = 0;

		if (tok == FDT_END_NODE && depth-- == matched)
			return -1;
		if (tok != FDT_BEGIN_NODE || ++depth != matched + 1) {
			if (tok == FDT_BEGIN_NODE && depth == 0 && *p == '\0')
				return off;
			continue;
		}
		while (p[n] && p[n] != '/')
			n++;
		if (!name_matches((const char *)st + off + 4, p, n))
			continue;
		matched++;
		p += n;
		if (*p == '\0')
			return off;
		p++;
	}
	return -1;
}

/* The offset of property @name of the node at @node, or -1. */
static int64_t find_prop(const void *buf, uint32_t node, const char *name)
{
	const uint8_t *st = (const uint8_t *)buf + hdr(buf, H_OFF_STRUCT);
	const char *strs = (const char *)buf + hdr(buf, H_OFF_STRINGS);

	for (uint32_t off = next_token(st, node);; off = next_token(st, off)) {
		uint32_t tok = be32(st + off);

		if (tok == FDT_BEGIN_NODE || tok == FDT_END_NODE ||
		    tok == FDT_END)
			return -1;
		if (tok == FDT_PROP && str_eq(strs + be32(st + off + 8), name))
			return off;
	}
}

const void *fdt_get_prop(const void *buf, const char *node, const char *name,
			 uint32_t *len)
{
	const uint8_t *st = (const uint8_t *)buf + hdr(buf, H_OFF_STRUCT);
	int64_t n = find_node(buf, node), p;

	if (n < 0 || (p = find_prop(buf, (uint32_t)n, name)) < 0)
		return NULL;
	*len = be32(st + p + 4);
	return st + p + 12;
}

/* Open a gap of @bytes at @at (a buffer offset), moving what follows. */
static int make_room(void *buf, uint32_t at, uint32_t bytes)
{
	uint8_t *b = buf;
	uint32_t total = fdt_size(buf);

	if (total + bytes > capacity_of)
		return -1;
	memmove(b + at + bytes, b + at, total - at);
	set_hdr(buf, H_TOTALSIZE, total + bytes);
	return 0;
}

/* The offset of @name in the strings block, or -1. */
static int64_t string_find(const void *buf, const char *name)
{
	const char *strs = (const char *)buf + hdr(buf, H_OFF_STRINGS);
	uint32_t size = hdr(buf, H_SIZE_STRINGS);

	for (uint32_t off = 0; off < size; off += str_len(strs + off) + 1)
		if (str_eq(strs + off, name))
			return off;
	return -1;
}

/* Append @name to the strings block (the blob's last part); its offset. */
static int64_t string_add(void *buf, const char *name)
{
	char *strs = (char *)buf + hdr(buf, H_OFF_STRINGS);
	uint32_t size = hdr(buf, H_SIZE_STRINGS), n = str_len(name) + 1;

	if (make_room(buf, hdr(buf, H_OFF_STRINGS) + size, n))
		return -1;
	memcpy(strs + size, name, n);
	set_hdr(buf, H_SIZE_STRINGS, size + n);
	return size;
}

/*
 * Set property @name of @node to @len bytes at @val, in place when it
 * exists (its slot resized), else as the node's first property. The room
 * for the slot and for a new name is checked before either is written,
 * so that a tree without room is left as it was.
 */
int fdt_set_prop(void *buf, const char *node, const char *name,
		 const void *val, uint32_t len)
{
	int64_t n = find_node(buf, node), p, name_off = string_find(buf, name);
	uint32_t at, old = 0, slot = 12 + align4(len), grow;
	uint8_t *st = (uint8_t *)buf + hdr(buf, H_OFF_STRUCT);

	if (n < 0)
		return -1;
	p = find_prop(buf, (uint32_t)n, name);
	if (p >= 0) {
		old = 12 + align4(be32(st + p + 4));
		at = (uint32_t)p;
	} else {
		at = next_token(st, (uint32_t)n);
	}
	grow = slot > old ? slot - old : 0;
	if (fdt_size(buf) + grow + (name_off < 0 ? str_len(name) + 1 : 0) >
	    capacity_of)
		return -1;
	if (name_off < 0)
		name_off = string_add(buf, name);
	if (grow) {
		make_room(buf, hdr(buf, H_OFF_STRUCT) + at + old, grow);
		set_hdr(buf, H_SIZE_STRUCT, hdr(buf, H_SIZE_STRUCT) + grow);
		set_hdr(buf, H_OFF_STRINGS, hdr(buf, H_OFF_STRINGS) + grow);
	}
	for (uint32_t i = slot; i < old; i += 4)
		put_be32(st + at + i, FDT_NOP);
	put_be32(st + at, FDT_PROP);
	put_be32(st + at + 4, len);
	put_be32(st + at + 8, (uint32_t)name_off);
	for (uint32_t i = len; i < align4(len); i++)
		st[at + 12 + i] = 0;
	memcpy(st + at + 12, val, len);
	return 0;
}

/**
 * fdt_del_prop() - remove a property, if the node has it
 * @buf: a tree fdt_load() copied
 * @node: the node's path
 * @name: the property
 *
 * Its slot becomes NOP tokens (which every reader skips): nothing moves.
 */
void fdt_del_prop(void *buf, const char *node, const char *name)
{
	uint8_t *st = (uint8_t *)buf + hdr(buf, H_OFF_STRUCT);
	int64_t n = find_node(buf, node), p;
	uint32_t slot;

	if (n < 0 || (p = find_prop(buf, (uint32_t)n, name)) < 0)
		return;
	slot = 12 + align4(be32(st + p + 4));
	for (uint32_t i = 0; i < slot; i += 4)
		put_be32(st + p + i, FDT_NOP);
}

/* The offset of the END_NODE token that closes the node at @node; @end
 * (the structure block's size) if the block ends first. */
static uint32_t node_end(const uint8_t *st, uint32_t node, uint32_t end)
{
	int depth = 0;

	for (uint32_t off = node; off < end; off = next_token(st, off)) {
		uint32_t tok = be32(st + off);

		if (tok == FDT_BEGIN_NODE)
			depth++;
		else if (tok == FDT_END_NODE && --depth == 0)
			return off;
	}
	return end;
}

/**
 * fdt_add_node() - add an empty node as the last child of another
 * @buf: a tree fdt_load() copied
 * @parent: the parent's path ("/cpus")
 * @name: the new node's name, with its unit address if it has one
 *
 * Return: 0, or -1 when there is no such parent or no room.
 */
int fdt_add_node(void *buf, const char *parent, const char *name)
{
	int64_t n = find_node(buf, parent);
	uint32_t at, len = str_len(name) + 1, grow = 8 + align4(len);
	uint8_t *st;

	if (n < 0)
		return -1;
	st = (uint8_t *)buf + hdr(buf, H_OFF_STRUCT);
	at = node_end(st, (uint32_t)n, hdr(buf, H_SIZE_STRUCT));
	if (at == hdr(buf, H_SIZE_STRUCT) ||
	    make_room(buf, hdr(buf, H_OFF_STRUCT) + at, grow))
		return -1;
	set_hdr(buf, H_SIZE_STRUCT, hdr(buf, H_SIZE_STRUCT) + grow);
	set_hdr(buf, H_OFF_STRINGS, hdr(buf, H_OFF_STRINGS) + grow);
	put_be32(st + at, FDT_BEGIN_NODE);
	for (uint32_t i = len; i < align4(len); i++)
		st[at + 4 + i] = 0;
	memcpy(st + at + 4, name, len);
	put_be32(st + at + 4 + align4(len), FDT_END_NODE);
	return 0;
}

/**
 * fdt_max_phandle() - the largest phandle the tree gives a node
 * @buf: a flattened device tree
 *
 * Return: it, or 0 when no node has one; a new node may take the next.
 */
uint32_t fdt_max_phandle(const void *buf)
{
	const uint8_t *st = (const uint8_t *)buf + hdr(buf, H_OFF_STRUCT);
	const char *strs = (const char *)buf + hdr(buf, H_OFF_STRINGS);
	uint32_t end = hdr(buf, H_SIZE_STRUCT), max = 0;

	for (uint32_t off = 0; off < end; off = next_token(st, off)) {
		if (be32(st + off) != FDT_PROP || be32(st + off + 4) != 4)
			continue;
		if (!str_eq(strs + be32(st + off + 8), "phandle") &&
		    !str_eq(strs + be32(st + off + 8), "linux,phandle"))
			continue;
		if (be32(st + off + 12) > max)
			max = be32(st + off + 12);
	}
	return max;
}

/* ------------------------------------------------- device windows */

/*
 * One walk of the structure block with a stack of open nodes. A node's
 * properties all come before its children, so it is decoded when they
 * end: at its first child or at its end.
 */
#define FDT_DEPTH_MAX	16

struct fdt_value {
	const uint8_t *v;	/* NULL: the node has no such property */
	uint32_t len;
};

struct fdt_node {
	const char *name;
	/* For the node's children: the devicetree specification's
	 * defaults until the node says otherwise. */
	uint32_t addr_cells, size_cells;
	struct fdt_value reg, ranges, device_type, compatible, status;
	bool decoded;
	/* Its reg is a CPU address: every bus above it has ranges. */
	bool reachable;
	/* Its children's reg are CPU addresses (through its ranges). */
	bool children_reachable;
};

struct fdt_walk {
	const uint8_t *st;
	const char *strs;
	uint64_t granule;
	struct fdt_windows *out;
	struct fdt_node stack[FDT_DEPTH_MAX];
	int depth;		/* of the open node; the root is 0 */
};

static int walk_fail(struct fdt_walk *w, const char *why)
{
	w->out->error = why;
	w->out->error_node = w->depth >= 0 ? w->stack[w->depth].name : NULL;
	return -1;
}

/* A big-endian number of @cells cells (at most 2) at @p. */
static bool read_cells(const uint8_t *p, uint32_t cells, uint64_t *v)
{
	if (cells > 2)
		return false;
	*v = 0;
	for (uint32_t i = 0; i < cells; i++)
		*v = *v << 32 | be32(p + 4 * i);
	return true;
}

static bool prop_is(const struct fdt_value *p, const char *s)
{
	return p->v && p->len == str_len(s) + 1 && str_eq((const char *)p->v, s);
}

/* Whether stringlist @p (compatible) holds @s. */
static bool list_has(const struct fdt_value *p, const char *s)
{
	for (uint32_t off = 0; p->v && off < p->len;
	     off += str_len((const char *)p->v + off) + 1)
		if (str_eq((const char *)p->v + off, s))
			return true;
	return false;
}

/* The root's #address-cells and #size-cells (2 and 1 by default). */
static void root_cells(const void *buf, uint32_t *addr, uint32_t *size)
{
	uint32_t len;
	const void *a = fdt_get_prop(buf, "/", "#address-cells", &len);

	*addr = a && len == 4 ? be32(a) : 2;
	a = fdt_get_prop(buf, "/", "#size-cells", &len);
	*size = a && len == 4 ? be32(a) : 1;
}

/* Whether node @off's property @prop, a string list, holds @want. */
static bool node_has(const void *buf, uint32_t off, const char *prop,
		     const char *want)
{
	const uint8_t *st = (const uint8_t *)buf + hdr(buf, H_OFF_STRUCT);
	int64_t p = find_prop(buf, off, prop);
	struct fdt_value v = { NULL, 0 };

	if (p >= 0)
		v = (struct fdt_value){ st + p + 12, be32(st + p + 4) };
	return list_has(&v, want);
}

/*
 * Entry @index of the reg of the root's children whose @prop holds
 * @want, counted across them in tree order, read with the root's cells:
 * a CPU address, no ranges between.
 */
static int root_reg(const void *buf, const char *prop, const char *want,
		    uint32_t index, uint64_t *base, uint64_t *size)
{
	const uint8_t *st = (const uint8_t *)buf + hdr(buf, H_OFF_STRUCT);
	uint32_t end = hdr(buf, H_SIZE_STRUCT), ac, sc;
	int depth = -1;

	root_cells(buf, &ac, &sc);
	if (ac > 2 || sc > 2)
		return -1;
	for (uint32_t off = 0; off < end; off = next_token(st, off)) {
		uint32_t tok = be32(st + off), len, entries;
		int64_t p;

		if (tok == FDT_END_NODE)
			depth--;
		if (tok != FDT_BEGIN_NODE || ++depth != 1 ||
		    !node_has(buf, off, prop, want))
			continue;
		p = find_prop(buf, off, "reg");
		len = p < 0 ? 0 : be32(st + p + 4);
		entries = len / (4 * (ac + sc));
		if (index >= entries) {
			index -= entries;
			continue;
		}
		p += 12 + 4 * (ac + sc) * index;
		read_cells(st + p, ac, base);
		read_cells(st + p + 4 * ac, sc, size);
		return 0;
	}
	return -1;
}

/**
 * fdt_compatible_reg() - one reg entry of a device on the root's bus
 * @buf: a flattened device tree
 * @compatible: a string the node's compatible list holds
 * @index: which (address, size) pair of its reg
 * @base: set to the entry's address
 * @size: set to the entry's size
 *
 * The root's children whose compatible holds @compatible, their reg read
 * with the root's cells: a CPU address, no ranges between.
 *
 * Return: 0, or -1 when there is no such node or entry.
 */
int fdt_compatible_reg(const void *buf, const char *compatible,
		       uint32_t index, uint64_t *base, uint64_t *size)
{
	return root_reg(buf, "compatible", compatible, index, base, size);
}

/**
 * fdt_memory_reg() - one range of RAM
 * @buf: a flattened device tree
 * @index: which range, counted across every memory node in tree order
 * @base: set to its address
 * @size: set to its size
 *
 * The root's children with device_type "memory" (the devicetree
 * specification's memory nodes), their reg read with the root's cells.
 *
 * Return: 0, or -1 past the last range.
 */
int fdt_memory_reg(const void *buf, uint32_t index, uint64_t *base,
		   uint64_t *size)
{
	return root_reg(buf, "device_type", "memory", index, base, size);
}

/* The structure-block offset of /cpus' first property or child, and its
 * #address-cells (1 when absent: a CPU's reg is one or two cells). */
static int64_t cpus_node(const void *buf, uint32_t *ac)
{
	uint32_t len;
	const void *a = fdt_get_prop(buf, "/cpus", "#address-cells", &len);
	int64_t n = find_node(buf, "/cpus");

	*ac = a && len == 4 ? be32(a) : 1;
	return n;
}

/**
 * fdt_cpu_ids() - the reg of every CPU node, in tree order
 * @buf: a flattened device tree
 * @ids: set to each CPU's reg: on Arm, its MPIDR_EL1 affinity (Aff3 in
 *	bits [39:32] with two cells, Aff2..Aff0 in bits [23:0])
 * @max: the room in @ids
 *
 * The children of /cpus with device_type "cpu" (not cpu-map, nor
 * idle-states), each reg one identifier of /cpus' #address-cells.
 *
 * Return: how many, or -1 when /cpus is missing or malformed, a CPU node
 * has no one-identifier reg, or there are more than @max.
 */
int fdt_cpu_ids(const void *buf, uint64_t *ids, uint32_t max)
{
	const uint8_t *st = (const uint8_t *)buf + hdr(buf, H_OFF_STRUCT);
	uint32_t ac, end = hdr(buf, H_SIZE_STRUCT), nr = 0;
	int64_t cpus = cpus_node(buf, &ac);
	int depth = 0;

	if (cpus < 0 || ac < 1 || ac > 2)
		return -1;
	for (uint32_t off = next_token(st, (uint32_t)cpus); off < end;
	     off = next_token(st, off)) {
		uint32_t tok = be32(st + off);
		int64_t p;

		if (tok == FDT_END_NODE && depth-- == 0)
			return (int)nr;
		if (tok != FDT_BEGIN_NODE || ++depth != 1 ||
		    !node_has(buf, off, "device_type", "cpu"))
			continue;
		p = find_prop(buf, off, "reg");
		if (p < 0 || be32(st + p + 4) != 4 * ac || nr == max)
			return -1;
		read_cells(st + p + 12, ac, &ids[nr++]);
	}
	return -1;
}

/*
 * Add [@base, @base + @size) rounded out to the granule, merged with the
 * windows it overlaps or touches, so that neighbours make one window and
 * a first touch can map a block across them.
 */
static int window_add(struct fdt_walk *w, uint64_t base, uint64_t size)
{
	struct fdt_windows *ws = w->out;
	uint64_t g = w->granule, end = base + size;
	uint32_t i = 0, j;

	if (end < base || end > UINT64_MAX - g)
		return walk_fail(w, "a device window wraps around");
	base &= ~(g - 1);
	end = (end + g - 1) & ~(g - 1);
	while (i < ws->nr && ws->w[i].base + ws->w[i].size < base)
		i++;
	for (j = i; j < ws->nr && ws->w[j].base <= end; j++) {
		uint64_t e = ws->w[j].base + ws->w[j].size;

		base = ws->w[j].base < base ? ws->w[j].base : base;
		end = e > end ? e : end;
	}
	if (i == j && ws->nr == FDT_WINDOWS_MAX)
		return walk_fail(w, "more device windows than FDT_WINDOWS_MAX");
	/* Windows i..j-1 become one (or a new one goes in at i). */
	if (i == j)
		memmove(&ws->w[i + 1], &ws->w[i], (ws->nr - i) * sizeof(ws->w[0]));
	else
		memmove(&ws->w[i + 1], &ws->w[j], (ws->nr - j) * sizeof(ws->w[0]));
	ws->nr = ws->nr + 1 - (j - i);
	ws->w[i].base = base;
	ws->w[i].size = end - base;
	ws->entries++;
	return 0;
}

/*
 * Translate [@addr, +@size) from the address space of node @depth's
 * children to the CPU's, bus by bus through each one's ranges (empty:
 * the same addresses). False if some bus has no entry holding all of it.
 */
static bool translate(const struct fdt_walk *w, int depth, uint64_t *addr,
		      uint64_t size)
{
	for (; depth > 0; depth--) {
		const struct fdt_node *bus = &w->stack[depth];
		uint32_t ca = bus->addr_cells, pa = w->stack[depth - 1].addr_cells;
		uint32_t entry = 4 * (ca + pa + bus->size_cells), off;

		if (!bus->ranges.len)
			continue;
		if (!entry)
			return false;
		for (off = 0; off + entry <= bus->ranges.len; off += entry) {
			const uint8_t *e = bus->ranges.v + off;
			uint64_t child, parent, len;

			if (!read_cells(e, ca, &child) ||
			    !read_cells(e + 4 * ca, pa, &parent) ||
			    !read_cells(e + 4 * (ca + pa), bus->size_cells, &len))
				return false;
			if (*addr - child < len && size <= len - (*addr - child)) {
				*addr = parent + (*addr - child);
				break;
			}
		}
		if (off + entry > bus->ranges.len)
			return false;
	}
	return true;
}

/* A window in node @depth's children's address space, if it reaches
 * the CPU (a bus that does not translate it hides it). */
static int window_from(struct fdt_walk *w, int depth, uint64_t addr,
		       uint64_t size)
{
	if (!size || !translate(w, depth, &addr, size))
		return 0;
	return window_add(w, addr, size);
}

/* Each (address, size) of the node's reg, in its parent's cells. */
static int decode_reg(struct fdt_walk *w)
{
	const struct fdt_node *n = &w->stack[w->depth];
	const struct fdt_node *parent = &w->stack[w->depth - 1];
	uint32_t ac = parent->addr_cells, sc = parent->size_cells;
	uint32_t entry = 4 * (ac + sc);

	/* No size cells: reg is an identifier (a CPU's MPIDR), no MMIO. */
	if (!n->reg.v || !sc)
		return 0;
	if (ac > 2 || sc > 2 || n->reg.len % entry)
		return walk_fail(w, "reg is not whole (address, size) pairs");
	for (uint32_t off = 0; off < n->reg.len; off += entry) {
		uint64_t addr, size;

		read_cells(n->reg.v + off, ac, &addr);
		read_cells(n->reg.v + off + 4 * ac, sc, &size);
		if (window_from(w, w->depth - 1, addr, size))
			return -1;
	}
	return 0;
}

/*
 * A PCI host bridge's ranges: each entry a window of the bus's memory or
 * I/O space (3 cells of PCI address, the parent's address, 2 cells of
 * size) as the CPU reaches it.
 */
static int decode_pci_ranges(struct fdt_walk *w)
{
	const struct fdt_node *n = &w->stack[w->depth];
	uint32_t pa = w->stack[w->depth - 1].addr_cells;
	uint32_t entry = 4 * (n->addr_cells + pa + n->size_cells);

	if (n->addr_cells != 3 || n->size_cells != 2 || pa > 2 ||
	    n->ranges.len % entry)
		return walk_fail(w, "PCI ranges are not (3, parent, 2) cells");
	for (uint32_t off = 0; off < n->ranges.len; off += entry) {
		const uint8_t *e = n->ranges.v + off;
		uint64_t addr, size;

		read_cells(e + 12, pa, &addr);
		read_cells(e + 12 + 4 * pa, 2, &size);
		if (window_from(w, w->depth - 1, addr, size))
			return -1;
	}
	return 0;
}

/*
 * The open node's properties have ended: its windows, and whether its
 * children's addresses reach the CPU. Not devices: memory, the
 * reserved-memory subtree, disabled nodes; a PCI bridge's children have
 * configuration-space addresses, reached through its ECAM.
 */
static int node_decode(struct fdt_walk *w)
{
	struct fdt_node *n = &w->stack[w->depth];
	bool pci = prop_is(&n->device_type, "pci") ||
		   list_has(&n->compatible, "pci-host-ecam-generic");
	bool enabled = !n->status.v || prop_is(&n->status, "okay") ||
		       prop_is(&n->status, "ok");
	int ret = 0;

	if (n->decoded || w->depth == 0)
		goto done;
	n->reachable = w->stack[w->depth - 1].children_reachable && enabled &&
		       !prop_is(&n->device_type, "memory") &&
		       !(w->depth == 1 && str_eq(n->name, "reserved-memory"));
	if (n->reachable)
		ret = decode_reg(w);
	if (!ret && n->reachable && pci && n->ranges.v)
		ret = decode_pci_ranges(w);
	n->children_reachable = n->reachable && n->ranges.v && !pci;
done:
	n->decoded = true;
	return ret;
}

static void node_open(struct fdt_walk *w, const char *name)
{
	struct fdt_node *n = &w->stack[w->depth];

	*n = (struct fdt_node){ .name = name, .addr_cells = 2, .size_cells = 1 };
	/* The root's children are on the CPU's own bus. */
	n->reachable = n->children_reachable = w->depth == 0;
}

static void node_prop(struct fdt_walk *w, const uint8_t *tok)
{
	struct fdt_node *n = &w->stack[w->depth];
	const char *name = w->strs + be32(tok + 8);
	struct fdt_value v = { tok + 12, be32(tok + 4) };

	if (str_eq(name, "#address-cells") && v.len == 4)
		n->addr_cells = be32(v.v);
	else if (str_eq(name, "#size-cells") && v.len == 4)
		n->size_cells = be32(v.v);
	else if (str_eq(name, "reg"))
		n->reg = v;
	else if (str_eq(name, "ranges"))
		n->ranges = v;
	else if (str_eq(name, "device_type"))
		n->device_type = v;
	else if (str_eq(name, "compatible"))
		n->compatible = v;
	else if (str_eq(name, "status"))
		n->status = v;
}

/**
 * fdt_device_windows() - the device windows a device tree describes
 * @buf: a flattened device tree (as QEMU wrote it, or fdt_load()'s copy)
 * @granule: the stage-2 page size: windows are rounded out to it
 * @out: the windows, sorted, merged where they overlap or touch
 *
 * Every enabled node's reg that reaches the CPU (each bus above it has
 * ranges; an empty one is the identity), with its parent's #address-cells
 * and #size-cells; and each PCI host bridge's ranges as its memory and I/O
 * windows. Memory and reserved-memory are left out: they are not devices.
 *
 * Return: 0, or -1 with @out->error (and the node, @out->error_node) when
 * the tree is malformed, too deep, or needs more than FDT_WINDOWS_MAX.
 */
int fdt_device_windows(const void *buf, uint64_t granule,
		       struct fdt_windows *out)
{
	struct fdt_walk w;
	uint32_t end = hdr(buf, H_SIZE_STRUCT);

	w = (struct fdt_walk){
		.st = (const uint8_t *)buf + hdr(buf, H_OFF_STRUCT),
		.strs = (const char *)buf + hdr(buf, H_OFF_STRINGS),
		.granule = granule, .out = out, .depth = -1,
	};
	*out = (struct fdt_windows){ .nr = 0 };
	if (be32(buf) != FDT_MAGIC)
		return walk_fail(&w, "not a flattened device tree");
	for (uint32_t off = 0; off < end; off = next_token(w.st, off)) {
		uint32_t tok = be32(w.st + off);

		if ((tok == FDT_BEGIN_NODE || tok == FDT_END_NODE) &&
		    w.depth >= 0 && node_decode(&w))
			return -1;
		if (tok == FDT_BEGIN_NODE) {
			if (w.depth + 1 == FDT_DEPTH_MAX)
				return walk_fail(&w, "nodes nested too deep");
			w.depth++;
			node_open(&w, (const char *)w.st + off + 4);
		} else if (tok == FDT_PROP && w.depth >= 0) {
			node_prop(&w, w.st + off);
		} else if (tok == FDT_END_NODE && --w.depth < 0) {
			return 0;
		} else if (tok == FDT_END) {
			break;
		}
	}
	return walk_fail(&w, "the structure block ends inside a node");
}
