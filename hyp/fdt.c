/* SPDX-License-Identifier: MIT */
/*
 * A small editor of flattened device trees (the devicetree
 * specification's format, version 17): enough to give the guest a smaller
 * memory node and a /chosen with bootargs and the initramfs. The tree is
 * rebuilt in a buffer as header, reservation map, structure block,
 * strings block, so that a new property only moves what follows it.
 */
#include "hyp.h"

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

/* The offset of @name in the strings block, appended if missing. */
static int64_t string_off(void *buf, const char *name)
{
	char *strs = (char *)buf + hdr(buf, H_OFF_STRINGS);
	uint32_t size = hdr(buf, H_SIZE_STRINGS), n = str_len(name) + 1;

	for (uint32_t off = 0; off < size; off += str_len(strs + off) + 1)
		if (str_eq(strs + off, name))
			return off;
	if (make_room(buf, hdr(buf, H_OFF_STRINGS) + size, n))
		return -1;
	memcpy(strs + size, name, n);
	set_hdr(buf, H_SIZE_STRINGS, size + n);
	return size;
}

int fdt_set_prop(void *buf, const char *node, const char *name,
		 const void *val, uint32_t len)
{
	int64_t n = find_node(buf, node), p, name_off;
	uint8_t *st;
	uint32_t at, old = 0;

	if (n < 0 || (name_off = string_off(buf, name)) < 0)
		return -1;
	st = (uint8_t *)buf + hdr(buf, H_OFF_STRUCT);
	p = find_prop(buf, (uint32_t)n, name);
	if (p >= 0) {
		old = 12 + align4(be32(st + p + 4));
		at = (uint32_t)p;
	} else {
		at = next_token(st, (uint32_t)n);
	}
	/* Resize the property's slot in place, then write it. */
	if (12 + align4(len) > old) {
		uint32_t grow = 12 + align4(len) - old;

		if (make_room(buf, hdr(buf, H_OFF_STRUCT) + at + old, grow))
			return -1;
		set_hdr(buf, H_SIZE_STRUCT, hdr(buf, H_SIZE_STRUCT) + grow);
		set_hdr(buf, H_OFF_STRINGS, hdr(buf, H_OFF_STRINGS) + grow);
	}
	for (uint32_t i = 12 + align4(len); i < old; i += 4)
		put_be32(st + at + i, FDT_NOP);
	put_be32(st + at, FDT_PROP);
	put_be32(st + at + 4, len);
	put_be32(st + at + 8, (uint32_t)name_off);
	for (uint32_t i = len; i < align4(len); i++)
		st[at + 12 + i] = 0;
	memcpy(st + at + 12, val, len);
	return 0;
}
