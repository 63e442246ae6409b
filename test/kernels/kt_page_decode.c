/*-------------------------------------------------------------------------
 *
 * kt_page_decode.c
 *	  kernel_test's checks of the heap page decoder
 *	  (kernels/shared/gj_page_decode.h) on pages built here by hand, byte
 *	  by byte, as PostgreSQL lays them out (heap_fill_tuple, PageAddItem),
 *	  without PostgreSQL's headers.
 *
 * Each tuple is written from values chosen here, so what the decoder must
 * return is known without a second decoder: the Datum bits of a by-value
 * attribute (sign-extended below 8 bytes), the page offset of a
 * by-reference one, NULL, or the column's missing value.  The pages are
 * random: schemas of fixed-width, varlena (1-byte and 4-byte headers,
 * on-disk TOAST pointers) and cstring attributes, NULLs, tuples shorter
 * than the schema (columns added later), line pointers unused, dead and
 * redirected among the tuples; decoded both from a list of offsets (the
 * visible tuples, in any order) and as every LP_NORMAL tuple.  Then pages
 * the decoder must not trust: each damage flags the tuple for the host.
 * The server's regression tests (sql/columnar_input.sql) check the same
 * decoder on PostgreSQL's own pages.
 *
 * Then the decoders of batches of pages, the device's (cuda_page_decode.cu)
 * and its host counterpart (cpu_page_decode.c), against gj_page_decode run
 * page after page: the damaged pages, random pages of random schemas in
 * random batches, thousands of pages in one batch, a wrong rows bound.
 * And bench-page-decode, their speed.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_common.h"
#include "kernels/shared/gj_keys.h"
#include "kernels/cpu/cpu_internal.h"
#include "kernels/shared/gj_page_decode.h"

#define PD_PAGE_SIZE	8192
#define PD_MAX_ATTS		14
#define PD_MAX_ROWS		600		/* line pointers a page may hold here */
#define PD_RANDOM_PAGES	400
#define PD_REF_BASE		UINT64_C(0x100000000)

/* The attribute types of the random schemas: PostgreSQL's layouts. */
typedef struct PdType
{
	const char *name;
	int16_t		attlen;
	uint8_t		align;
	bool		byval;
} PdType;

static const PdType pd_types[] = {
	{"char", 1, 1, true},
	{"int2", 2, 2, true},
	{"int4", 4, 4, true},
	{"int8", 8, 8, true},
	{"float8", 8, 8, true},
	{"uuid", 16, 1, false},
	{"name", 64, 1, false},
	{"text", -1, 4, false},
	{"text", -1, 4, false},
	{"cstring", -2, 1, false},
	{"bool", 1, 1, true},
	{"date", 4, 4, true},
	{"timestamp", 8, 8, true},
};
#define PD_NTYPES	((int) (sizeof(pd_types) / sizeof(pd_types[0])))

/* What one row of the page must decode to. */
typedef struct PdExpect
{
	int			lineoff;
	uint64_t	values[PD_MAX_ATTS];
	bool		isnull[PD_MAX_ATTS];
} PdExpect;

typedef struct PdPage
{
	uint64_t	words[PD_PAGE_SIZE / 8];	/* the page, maximally aligned */
	int			nlp;
	uint16_t	upper;
	PdExpect	rows[PD_MAX_ROWS];
	int			nrows;
} PdPage;

static uint8_t *
pd_bytes(PdPage *pg)
{
	return (uint8_t *) pg->words;
}

static void
pd_put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
}

static void
pd_put32(uint8_t *p, uint32_t v)
{
	pd_put16(p, v);
	pd_put16(p + 2, v >> 16);
}

static void
pd_page_init(PdPage *pg)
{
	memset(pg, 0, sizeof(PdPage));
	pg->upper = PD_PAGE_SIZE;
	pd_put16(pd_bytes(pg) + GJ_PAGE_PD_LOWER_OFF, GJ_PAGE_HEADER_SIZE);
}

static void
pd_set_lp(PdPage *pg, int lineoff, uint32_t off, uint32_t flags, uint32_t len)
{
	pd_put32(pd_bytes(pg) + GJ_PAGE_HEADER_SIZE + (lineoff - 1) * GJ_ITEMID_SIZE,
			 off | (flags << 15) | (len << 17));
}

/* A new line pointer (as PageAddItem), 0 when the page has no room. */
static int
pd_add_lp(PdPage *pg, uint32_t flags, uint32_t len, uint32_t *off)
{
	uint32_t	lower = GJ_PAGE_HEADER_SIZE + (pg->nlp + 1) * GJ_ITEMID_SIZE;
	uint32_t	need = (len + 7) & ~7u;

	if (pg->nlp >= PD_MAX_ROWS || lower + need > pg->upper)
		return 0;
	pg->upper -= need;
	*off = flags == GJ_LP_NORMAL ? pg->upper : 0;
	pg->nlp++;
	pd_put16(pd_bytes(pg) + GJ_PAGE_PD_LOWER_OFF, lower);
	pd_set_lp(pg, pg->nlp, *off, flags, flags == GJ_LP_NORMAL ? len : 0);
	return pg->nlp;
}

/* A random schema and the columns a join needs of it. */
typedef struct PdSchema
{
	int			natts;
	const PdType *types[PD_MAX_ATTS];
	GjPageAttr	attrs[PD_MAX_ATTS];
	GjPageColumn cols[PD_MAX_ATTS];
	GjPageSpec	spec;
} PdSchema;

static void
pd_schema_spec(PdSchema *s, const int *needed, int nneeded)
{
	int			off = 0;
	int			attno,
				k;

	memset(&s->spec, 0, sizeof(GjPageSpec));
	s->spec.page_size = PD_PAGE_SIZE;
	s->spec.all_fixed = true;
	for (k = 0; k < nneeded; k++)
	{
		GjPageColumn *col = &s->cols[k];
		const PdType *t = s->types[needed[k] - 1];

		memset(col, 0, sizeof(GjPageColumn));
		col->attno = needed[k];
		col->attlen = t->attlen;
		col->byval = t->byval;
		col->fixed_off = -1;
		/* the missing value of a column added later: a value, NULL, or by reference */
		if (rng() % 3 == 0 || (!t->byval && rng() % 2 == 0))
			col->missing_isnull = true;
		else if (t->byval)
			col->missing_value = rng();
		else
			col->missing_host = true;
		s->spec.walk_natts = col->attno;
	}
	/* the offsets attcacheoff would cache */
	for (attno = 1, k = 0; attno <= s->spec.walk_natts; attno++)
	{
		const PdType *t = s->types[attno - 1];

		s->attrs[attno - 1].attlen = t->attlen;
		s->attrs[attno - 1].align = t->align;
		if (off >= 0 && t->attlen > 0)
			off = (int) gj_page_align((uint32_t) off, t->align);
		for (; k < nneeded && s->cols[k].attno == attno; k++)
		{
			s->cols[k].fixed_off = off >= 0 && t->attlen > 0 ? off : -1;
			if (s->cols[k].fixed_off < 0)
				s->spec.all_fixed = false;
			else if ((uint32_t) (off + t->attlen) > s->spec.fixed_end)
				s->spec.fixed_end = off + t->attlen;
		}
		off = off >= 0 && t->attlen > 0 ? off + t->attlen : -1;
	}
	s->spec.attrs = s->attrs;
	s->spec.ncols = nneeded;
	s->spec.cols = s->cols;
}

/* A random schema; fixed_only: of the first five types (fixed width) alone. */
static void
pd_random_schema(PdSchema *s, bool fixed_only)
{
	int			needed[PD_MAX_ATTS];
	int			nneeded = 0;
	int			attno;

	s->natts = 1 + (int) (rng() % PD_MAX_ATTS);
	for (attno = 1; attno <= s->natts; attno++)
	{
		s->types[attno - 1] = &pd_types[rng() % (fixed_only ? 5 : PD_NTYPES)];
		if (rng() % 3 == 0)
			needed[nneeded++] = attno;
	}
	if (nneeded == 0)
		needed[nneeded++] = s->natts;
	pd_schema_spec(s, needed, nneeded);
}

/*
 * Write one attribute value at data + *off as heap_fill_tuple does; its
 * expected decoded value (page offset for by-reference) into *expect.
 */
static void
pd_fill_value(const PdType *t, uint8_t *data, uint32_t data_page_off, uint32_t *off,
			  uint64_t *expect)
{
	uint32_t	o = *off;
	int			i;

	if (t->attlen > 0)
	{
		o = gj_page_align(o, t->align);
		for (i = 0; i < t->attlen; i++)
			data[o + i] = (uint8_t) rng();
		if (t->byval)
			*expect = gj_page_fetch_byval(data + o, t->attlen);
		else
			*expect = PD_REF_BASE + data_page_off + o;
		*off = o + t->attlen;
	}
	else if (t->attlen == -1)
	{
		uint64_t	kind = rng() % 10;
		uint32_t	size;

		if (kind < 6)
		{
			/* short: a 1-byte header, no alignment (VARATT_CAN_MAKE_SHORT) */
			size = 1 + (uint32_t) (rng() % 127);
			data[o] = (uint8_t) ((size << 1) | 0x01);
			for (i = 1; i < (int) size; i++)
				data[o + i] = (uint8_t) rng();
		}
		else if (kind < 8)
		{
			/* a 4-byte header (plain or compressed), aligned; its first byte may be 0 */
			o = gj_page_align(o, t->align);
			size = 4 + (uint32_t) (rng() % 300);
			if (rng() % 4 == 0)
				size = 64;		/* header byte 0: 64 << 2 = 0x100 */
			pd_put32(data + o, (size << 2) | (rng() % 2 == 0 ? 0x02 : 0x00));
			for (i = 4; i < (int) size; i++)
				data[o + i] = (uint8_t) rng();
		}
		else
		{
			/* an on-disk TOAST pointer: 0x01, VARTAG_ONDISK, 16 bytes */
			size = GJ_TOAST_POINTER_SIZE;
			data[o] = 0x01;
			data[o + 1] = GJ_VARTAG_ONDISK;
			for (i = 2; i < (int) size; i++)
				data[o + i] = (uint8_t) rng();
		}
		*expect = PD_REF_BASE + data_page_off + o;
		*off = o + size;
	}
	else
	{
		uint32_t	len = (uint32_t) (rng() % 20);

		o = gj_page_align(o, t->align);
		for (i = 0; i < (int) len; i++)
			data[o + i] = (uint8_t) ('a' + rng() % 26);
		data[o + len] = 0;
		*expect = PD_REF_BASE + data_page_off + o;
		*off = o + len + 1;
	}
}

/*
 * Add a random tuple of s to the page with its expected row; false when the
 * page is full.  Unless clean, tuples may be shorter than the schema
 * (written before columns were added) and hold NULLs.
 */
static bool
pd_add_tuple(PdPage *pg, const PdSchema *s, bool clean)
{
	int			natts = s->natts;
	bool		nulls[PD_MAX_ATTS];
	bool		hasnull = false;
	uint64_t	values[PD_MAX_ATTS];
	uint64_t	scratch[PD_PAGE_SIZE / 8];	/* the data, maximally aligned */
	uint32_t	hoff,
				len = 0,
				tup_off;
	uint8_t    *tup;
	PdExpect   *row;
	int			attno,
				k,
				lineoff;

	if (!clean && rng() % 4 == 0)
		natts = 1 + (int) (rng() % s->natts);
	for (attno = 1; attno <= natts; attno++)
	{
		nulls[attno - 1] = !clean && rng() % 5 == 0;
		hasnull |= nulls[attno - 1];
	}
	hoff = (GJ_TUPLE_BITS_OFF + (hasnull ? (natts + 7) / 8 : 0) + 7) & ~7u;

	/* the data, at offsets relative to its start (maximally aligned on the page too) */
	memset(scratch, 0, sizeof(scratch));
	for (attno = 1; attno <= natts; attno++)
		if (!nulls[attno - 1])
			pd_fill_value(s->types[attno - 1], (uint8_t *) scratch, 0, &len, &values[attno - 1]);
	lineoff = pd_add_lp(pg, GJ_LP_NORMAL, hoff + len, &tup_off);
	if (lineoff == 0)
		return false;

	tup = pd_bytes(pg) + tup_off;
	memset(tup, 0, hoff);
	/* natts, and HEAP_HOT_UPDATED and hint bits the decoder must ignore */
	pd_put16(tup + GJ_TUPLE_INFOMASK2_OFF, (uint32_t) natts | 0x4000);
	pd_put16(tup + GJ_TUPLE_INFOMASK_OFF, (hasnull ? GJ_HEAP_HASNULL : 0) | 0x0902);
	tup[GJ_TUPLE_HOFF_OFF] = (uint8_t) hoff;
	if (hasnull)
		for (attno = 1; attno <= natts; attno++)
			if (!nulls[attno - 1])
				tup[GJ_TUPLE_BITS_OFF + (attno - 1) / 8] |= (uint8_t) (1 << ((attno - 1) % 8));
	memcpy(tup + hoff, scratch, len);

	row = &pg->rows[pg->nrows++];
	row->lineoff = lineoff;
	for (k = 0; k < s->spec.ncols; k++)
	{
		const GjPageColumn *col = &s->cols[k];

		if (col->attno > natts)
		{
			row->isnull[k] = col->missing_isnull;
			row->values[k] = col->missing_isnull ? 0 : col->missing_value;
		}
		else
		{
			row->isnull[k] = nulls[col->attno - 1];
			row->values[k] = row->isnull[k] ? 0 : values[col->attno - 1];
			if (!row->isnull[k] && !col->byval)
				row->values[k] += tup_off + hoff;
		}
	}
	return true;
}

/*
 * Fill a page with random tuples of s (clean: as pd_add_tuple), with
 * unused, dead and redirect line pointers among them, until it is full or
 * holds max_tuples tuples.
 */
static void
pd_fill_page(PdPage *pg, const PdSchema *s, int max_tuples, bool clean)
{
	pd_page_init(pg);
	while (pg->nrows < max_tuples)
	{
		uint32_t	off;
		int			lineoff;

		if (rng() % 8 == 0)
		{
			uint32_t	flags = (uint32_t) (rng() % 4);

			if (flags == GJ_LP_NORMAL)
				flags = 0;
			lineoff = pd_add_lp(pg, flags, 0, &off);
			if (lineoff == 0)
				break;
			if (flags == GJ_LP_REDIRECT)
				pd_set_lp(pg, lineoff, 1, GJ_LP_REDIRECT, 0);
			continue;
		}
		if (!pd_add_tuple(pg, s, clean))
			break;
	}
}

/* Whether a row must come back flagged: a by-reference missing value. */
static bool
pd_row_needs_host(const PdSchema *s, const PdPage *pg, const PdExpect *row)
{
	const uint8_t *page = (const uint8_t *) pg->words;
	uint32_t	lp = gj_page_load32(page + GJ_PAGE_HEADER_SIZE + (row->lineoff - 1) * GJ_ITEMID_SIZE);
	uint32_t	natts = gj_page_load16(page + (lp & 0x7FFF) + GJ_TUPLE_INFOMASK2_OFF) &
		GJ_HEAP_NATTS_MASK;
	int			k;

	for (k = 0; k < s->spec.ncols; k++)
		if (s->cols[k].attno > (int) natts && s->cols[k].missing_host)
			return true;
	return false;
}

/* The decoder's output columns for up to PD_MAX_ROWS rows. */
typedef struct PdOut
{
	uint64_t	values[PD_MAX_ATTS][PD_MAX_ROWS];
	bool		isnull[PD_MAX_ATTS][PD_MAX_ROWS];
	uint8_t		host[PD_MAX_ROWS];
	uint16_t	lineoffs[PD_MAX_ROWS];
	uint32_t	data_offs[PD_MAX_ROWS];
	uint64_t   *value_cols[PD_MAX_ATTS];
	bool	   *null_cols[PD_MAX_ATTS];
	GjPageOutput out;
} PdOut;

static void
pd_out_init(PdOut *o)
{
	int			k;

	memset(o, 0xA5, sizeof(PdOut));
	for (k = 0; k < PD_MAX_ATTS; k++)
	{
		o->value_cols[k] = o->values[k];
		o->null_cols[k] = o->isnull[k];
	}
	o->out.values = o->value_cols;
	o->out.isnull = o->null_cols;
	o->out.host = o->host;
	o->out.lineoffs = o->lineoffs;
	o->out.data_offs = o->data_offs;
}

/* Whether output row r is expected row e (or flagged, if it must be). */
static bool
pd_row_ok(const PdSchema *s, const PdPage *pg, const PdOut *o, int r, const PdExpect *e,
		  char *why, size_t whylen)
{
	int			k;

	if (pd_row_needs_host(s, pg, e))
	{
		if (o->host[r] != 1)
			snprintf(why, whylen, "row %d (line pointer %d) not flagged for its missing value", r,
					 e->lineoff);
		return o->host[r] == 1;
	}
	if (o->host[r] != 0)
	{
		snprintf(why, whylen, "row %d (line pointer %d) flagged", r, e->lineoff);
		return false;
	}
	for (k = 0; k < s->spec.ncols; k++)
	{
		if (o->isnull[k][r] != e->isnull[k] || (!e->isnull[k] && o->values[k][r] != e->values[k]))
		{
			snprintf(why, whylen, "row %d (line pointer %d) attribute %d (%s): %s %llx, expected %s %llx",
					 r, e->lineoff, s->cols[k].attno, s->types[s->cols[k].attno - 1]->name,
					 o->isnull[k][r] ? "NULL" : "value", (unsigned long long) o->values[k][r],
					 e->isnull[k] ? "NULL" : "value", (unsigned long long) e->values[k]);
			return false;
		}
	}
	return true;
}

/*
 * Random pages, decoded from a random list of their tuples and as every
 * LP_NORMAL tuple: every row as written.
 */
static void
pd_test_random_pages(void)
{
	PdPage	   *pg = xmalloc(sizeof(PdPage));
	PdOut	   *o = xmalloc(sizeof(PdOut));
	PdSchema	s;
	char		why[256] = "",
				all_why[256] = "";
	bool		list_ok = true,
				all_ok = true;
	int64_t		rows = 0,
				fast = 0;
	int			p;

	for (p = 0; p < PD_RANDOM_PAGES && list_ok && all_ok; p++)
	{
		uint16_t	list[PD_MAX_ROWS];
		int			order[PD_MAX_ROWS];
		int			nlist = 0;
		int			i,
					n,
					nhost,
					expected_host = 0;

		pd_random_schema(&s, rng() % 3 == 0);
		pd_fill_page(pg, &s, PD_MAX_ROWS, false);
		fast += s.spec.all_fixed;

		/* the list: a random subset of the tuples, in random order */
		for (i = 0; i < pg->nrows; i++)
			if (rng() % 4 != 0)
				order[nlist++] = i;
		for (i = nlist - 1; i > 0; i--)
		{
			int			j = (int) (rng() % (uint64_t) (i + 1));
			int			t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (i = 0; i < nlist; i++)
			list[i] = (uint16_t) pg->rows[order[i]].lineoff;
		pd_out_init(o);
		n = gj_page_decode((const uint8_t *) pg->words, PD_REF_BASE, &s.spec, list, nlist,
						   &o->out, &nhost);
		if (n != nlist)
		{
			snprintf(why, sizeof(why), "list: %d rows of %d", n, nlist);
			list_ok = false;
		}
		for (i = 0; list_ok && i < nlist; i++)
		{
			list_ok = pd_row_ok(&s, pg, o, i, &pg->rows[order[i]], why, sizeof(why));
			expected_host += pd_row_needs_host(&s, pg, &pg->rows[order[i]]);
		}
		if (list_ok && nhost != expected_host)
		{
			snprintf(why, sizeof(why), "list: %d flagged, expected %d", nhost, expected_host);
			list_ok = false;
		}

		/* every LP_NORMAL tuple, in line pointer order */
		pd_out_init(o);
		n = gj_page_decode((const uint8_t *) pg->words, PD_REF_BASE, &s.spec, NULL,
						   GJ_PAGE_ALL_NORMAL, &o->out, &nhost);
		if (n != pg->nrows)
		{
			snprintf(all_why, sizeof(all_why), "all: %d rows of %d", n, pg->nrows);
			all_ok = false;
		}
		for (i = 0; all_ok && i < n; i++)
		{
			all_ok = o->lineoffs[i] == pg->rows[i].lineoff &&
				pd_row_ok(&s, pg, o, i, &pg->rows[i], all_why, sizeof(all_why));
		}
		rows += pg->nrows;
	}
	report(list_ok, "page decoder: %s pages from a list of visible tuples %s", "random", why);
	report(all_ok, "page decoder: %s pages, every LP_NORMAL tuple %s", "random", all_why);
	printf("# %d pages, %lld tuples, %lld of the schemas at fixed offsets\n", p, (long long) rows,
		   (long long) fast);
	free(pg);
	free(o);
}

/* One page of (int4, text, int8) tuples, damaged as damage says. */
typedef void (*PdDamage) (PdPage *pg, uint8_t *tup);

static void
pd_damage_hoff_small(PdPage *pg, uint8_t *tup)
{
	tup[GJ_TUPLE_INFOMASK_OFF] |= GJ_HEAP_HASNULL;
	pd_put16(tup + GJ_TUPLE_INFOMASK2_OFF, 200);	/* a bitmap of 25 bytes: t_hoff 24 too small */
}

static void
pd_damage_hoff_unaligned(PdPage *pg, uint8_t *tup)
{
	tup[GJ_TUPLE_HOFF_OFF] = 28;
}

static void
pd_damage_short_len(PdPage *pg, uint8_t *tup)
{
	uint8_t    *page = pd_bytes(pg);
	uint32_t	lp = gj_page_load32(page + GJ_PAGE_HEADER_SIZE);

	/* the line pointer ends inside the int8 */
	pd_set_lp(pg, 1, lp & 0x7FFF, GJ_LP_NORMAL, (lp >> 17) - 3);
}

static void
pd_damage_toast_tag(PdPage *pg, uint8_t *tup)
{
	tup[24 + 4] = 0x01;			/* the text: a TOAST pointer ... */
	tup[24 + 5] = 1;			/* ... VARTAG_INDIRECT, which lives only in memory */
}

static void
pd_damage_varlena_long(PdPage *pg, uint8_t *tup)
{
	pd_put32(tup + 24 + 4, 4000 << 2);	/* a 4-byte header past the tuple's end */
}

static void
pd_damage_unaligned_lp(PdPage *pg, uint8_t *tup)
{
	uint8_t    *page = pd_bytes(pg);
	uint32_t	lp = gj_page_load32(page + GJ_PAGE_HEADER_SIZE);

	pd_set_lp(pg, 1, (lp & 0x7FFF) + 4, GJ_LP_NORMAL, (lp >> 17) - 4);
}

static void
pd_damage_not_normal(PdPage *pg, uint8_t *tup)
{
	pd_set_lp(pg, 1, 0, GJ_LP_DEAD, 0);
}

static void
pd_damage_pd_lower(PdPage *pg, uint8_t *tup)
{
	pd_put16(pd_bytes(pg) + GJ_PAGE_PD_LOWER_OFF, GJ_PAGE_HEADER_SIZE);
}

static void
pd_damage_none(PdPage *pg, uint8_t *tup)
{
}

/* The damages, and whether the first tuple must come back flagged. */
typedef struct PdDamageCase
{
	const char *name;
	PdDamage	damage;
	bool		flagged;
} PdDamageCase;

static const PdDamageCase pd_damages[] = {
	{"an undamaged tuple", pd_damage_none, false},
	{"t_hoff too small for the NULL bitmap", pd_damage_hoff_small, true},
	{"t_hoff not maximally aligned", pd_damage_hoff_unaligned, true},
	{"a line pointer shorter than the attributes", pd_damage_short_len, true},
	{"a TOAST pointer that is not on disk", pd_damage_toast_tag, true},
	{"a varlena longer than the tuple", pd_damage_varlena_long, true},
	{"a line pointer not maximally aligned", pd_damage_unaligned_lp, true},
	{"a listed line pointer that is not LP_NORMAL", pd_damage_not_normal, true},
	{"pd_lower below the line pointers", pd_damage_pd_lower, true},
};
#define PD_NDAMAGES	((int) (sizeof(pd_damages) / sizeof(pd_damages[0])))

/*
 * A page of two tuples (int4 7, text 'hello', int8 -2) of schema *s, the
 * first damaged; the int4 and the int8 are needed.
 */
static void
pd_damaged_page(PdPage *pg, PdSchema *s, PdDamage damage)
{
	int			needed[] = {1, 3};
	uint8_t    *first = NULL;
	int			t;

	memset(s, 0, sizeof(PdSchema));
	s->natts = 3;
	s->types[0] = &pd_types[2];
	s->types[1] = &pd_types[7];
	s->types[2] = &pd_types[3];
	pd_schema_spec(s, needed, 2);
	s->cols[0].missing_host = s->cols[1].missing_host = false;
	pd_page_init(pg);
	for (t = 0; t < 2; t++)
	{
		uint32_t	off;
		int			lineoff = pd_add_lp(pg, GJ_LP_NORMAL, 24 + 16 + 8, &off);
		uint8_t    *tup = pd_bytes(pg) + off;

		pd_put16(tup + GJ_TUPLE_INFOMASK2_OFF, 3);
		tup[GJ_TUPLE_HOFF_OFF] = 24;
		pd_put32(tup + 24, 7);
		tup[24 + 4] = (6 << 1) | 0x01;
		memcpy(tup + 24 + 5, "hello", 5);
		pd_put32(tup + 24 + 16, UINT32_MAX - 1);
		pd_put32(tup + 24 + 20, UINT32_MAX);
		if (lineoff == 1)
			first = tup;
	}
	damage(pg, first);
}

/*
 * Each damage to the first of the two tuples flags it, and only it (the
 * whole page for a bad pd_lower).
 */
static void
pd_test_damage(const PdDamageCase *c)
{
	PdPage	   *pg = xmalloc(sizeof(PdPage));
	PdOut	   *o = xmalloc(sizeof(PdOut));
	PdSchema	s;
	uint16_t	list[] = {1, 2};
	PdDamage	damage = c->damage;
	bool		flagged = c->flagged;
	int			n,
				nhost;
	bool		ok;

	pd_damaged_page(pg, &s, damage);
	pd_out_init(o);
	n = gj_page_decode((const uint8_t *) pg->words, PD_REF_BASE, &s.spec, list, 2, &o->out, &nhost);
	ok = n == 2 && o->host[0] == flagged && nhost == (flagged ? 1 : 0) + (damage == pd_damage_pd_lower) &&
		(damage == pd_damage_pd_lower ||
		 (o->host[1] == 0 && o->values[0][1] == 7 && o->values[1][1] == (uint64_t) -2 &&
		  !o->isnull[0][1] && !o->isnull[1][1]));
	if (!flagged)
		ok &= o->values[0][0] == 7 && o->values[1][0] == (uint64_t) -2;
	report(ok, "page decoder: %s%s", c->name, flagged ? " flags the tuple for the host" : " decodes");
	free(pg);
	free(o);
}

/* Values of 1, 2 and 4 bytes come back sign-extended, as fetch_att's Datums. */
static void
pd_test_sign_extension(void)
{
	uint8_t		bytes[8] __attribute__((aligned(8))) = {0xFE, 0xFF, 0xFF, 0xFF, 0x80, 0, 0, 0};

	report(gj_page_fetch_byval(bytes, 4) == (uint64_t) (int64_t) -2 &&
		   gj_page_fetch_byval(bytes, 2) == (uint64_t) (int64_t) -2 &&
		   gj_page_fetch_byval(bytes, 1) == (uint64_t) (int64_t) (char) 0xFE &&
		   gj_page_fetch_byval(bytes + 4, 4) == 0x80 &&
		   gj_page_fetch_byval(bytes, 8) == UINT64_C(0x80FFFFFFFE),
		   "page decoder: %s values as fetch_att's Datums%s", "by-value", "");
}

/* ---------------------------------------------------------------------
 * Batches of pages: the device's decoder (cuda/cuda_page_decode.cu) and
 * its host counterpart (cpu/cpu_page_decode.c) against gj_page_decode
 *
 * Both decode batches of pages, every LP_NORMAL tuple, into columns that
 * grow batch by batch, up to two batches in flight; gj_page_decode, run
 * page after page on the same pages (GJ_PAGE_ALL_NORMAL, each by-reference
 * value at its page's offset in its batch), is the reference: the same
 * rows in the same order, the same flags, the values and NULLs of every
 * row not flagged, and each batch's flagged list the flagged rows with
 * their pages and line pointers.  The host's counterpart runs everywhere
 * (it checks these checks too); the device's skips without a GPU.
 * ---------------------------------------------------------------------
 */

/* The test hooks of cuda/cuda_page_decode.cu (cuda_stub.c without nvcc). */
extern void *gj_cuda_test_page_begin(const GjPageSpec *spec, int64_t rows_hint, GjError *err);
extern bool gj_cuda_test_page_append(void *pc, const uint8_t *pages, int64_t npages,
									 int64_t rows_bound, GjError *err);
extern bool gj_cuda_test_page_wait(void *pc, GjPageBatch *batch, GjStats *stats, GjError *err);
extern bool gj_cuda_test_page_download(void *pc, uint64_t *const *values, bool *const *isnull,
									   uint8_t *host, GjError *err);
extern bool gj_cuda_test_page_reset(void *pc, GjError *err);
extern void gj_cuda_test_page_end(void *pc);

/* A batch decoder under test. */
typedef struct PdDecoder
{
	const char *name;
	void	   *(*begin) (const GjPageSpec *spec, int64_t rows_hint, GjError *err);
	bool		(*append) (void *dec, const uint8_t *pages, int64_t npages, int64_t rows_bound,
						   GjError *err);
	bool		(*wait) (void *dec, GjPageBatch *batch, GjStats *stats, GjError *err);
	/* rows [0, rows) of every column, and the flags */
	bool		(*download) (void *dec, uint64_t *const *values, bool *const *isnull,
							 uint8_t *host, GjError *err);
	void		(*end) (void *dec);
} PdDecoder;

static void *
pd_cpu_begin(const GjPageSpec *spec, int64_t rows_hint, GjError *err)
{
	return gj_cpu_page_columns_begin(spec, rows_hint, err);
}

static bool
pd_cpu_append(void *dec, const uint8_t *pages, int64_t npages, int64_t rows_bound, GjError *err)
{
	return gj_cpu_page_columns_append(dec, pages, npages, rows_bound, err);
}

static bool
pd_cpu_wait(void *dec, GjPageBatch *batch, GjStats *stats, GjError *err)
{
	return gj_cpu_page_columns_wait(dec, batch, err);
}

static bool
pd_cpu_download(void *dec, uint64_t *const *values, bool *const *isnull, uint8_t *host,
				GjError *err)
{
	int64_t		rows = gj_cpu_page_columns_rows(dec);
	const uint64_t *v;
	const bool *n;
	const uint8_t *h = NULL;
	int			k;

	for (k = 0; k < PD_MAX_ATTS && values[k] != NULL; k++)
	{
		gj_cpu_page_columns_column(dec, k, &v, &n, &h);
		memcpy(values[k], v, sizeof(uint64_t) * rows);
		memcpy(isnull[k], n, sizeof(bool) * rows);
	}
	if (h != NULL)
		memcpy(host, h, rows);
	return true;
}

static void
pd_cpu_end(void *dec)
{
	gj_cpu_page_columns_end(dec);
}

static const PdDecoder pd_cpu_decoder = {
	"in batches on the host", pd_cpu_begin, pd_cpu_append, pd_cpu_wait, pd_cpu_download,
	pd_cpu_end
};

static const PdDecoder pd_cuda_decoder = {
	"on the device", gj_cuda_test_page_begin, gj_cuda_test_page_append, gj_cuda_test_page_wait,
	gj_cuda_test_page_download, gj_cuda_test_page_end
};

/* The batch checks a decoder runs: a damaged page each, and four more. */
#define PD_BATCH_TESTS	(PD_NDAMAGES + 4)

/* Rows of pages as gj_page_decode gives them, page after page. */
typedef struct PdRows
{
	int			ncols;
	int64_t		nrows;
	int64_t		cap;
	uint64_t   *values[PD_MAX_ATTS + 1];	/* NULL after the last */
	bool	   *isnull[PD_MAX_ATTS + 1];
	uint8_t    *host;
	int32_t    *page;			/* the row's page in its batch */
	int32_t    *lineoff;
} PdRows;

static void
pd_rows_init(PdRows *rows, int ncols)
{
	memset(rows, 0, sizeof(PdRows));
	rows->ncols = ncols;
}

static void
pd_rows_reserve(PdRows *rows, int64_t need)
{
	int			k;

	if (need <= rows->cap)
		return;
	rows->cap = need > 2 * rows->cap ? need : 2 * rows->cap;
	for (k = 0; k < rows->ncols; k++)
	{
		rows->values[k] = realloc(rows->values[k], sizeof(uint64_t) * rows->cap);
		rows->isnull[k] = realloc(rows->isnull[k], sizeof(bool) * rows->cap);
		if (rows->values[k] == NULL || rows->isnull[k] == NULL)
			abort();
	}
	rows->host = realloc(rows->host, rows->cap);
	rows->page = realloc(rows->page, sizeof(int32_t) * rows->cap);
	rows->lineoff = realloc(rows->lineoff, sizeof(int32_t) * rows->cap);
	if (rows->host == NULL || rows->page == NULL || rows->lineoff == NULL)
		abort();
}

static void
pd_rows_free(PdRows *rows)
{
	int			k;

	for (k = 0; k < rows->ncols; k++)
	{
		free(rows->values[k]);
		free(rows->isnull[k]);
	}
	free(rows->host);
	free(rows->page);
	free(rows->lineoff);
}

/* gj_page_decode on a batch of npages pages, after the rows before. */
static void
pd_rows_decode(PdRows *rows, const GjPageSpec *spec, const uint8_t *pages, int npages,
			   PdOut *o)
{
	int			p,
				i,
				k;

	for (p = 0; p < npages; p++)
	{
		int			nhost;
		int			n;

		pd_out_init(o);
		n = gj_page_decode(pages + (size_t) p * PD_PAGE_SIZE, (uint64_t) p * PD_PAGE_SIZE, spec,
						   NULL, GJ_PAGE_ALL_NORMAL, &o->out, &nhost);
		pd_rows_reserve(rows, rows->nrows + n);
		for (i = 0; i < n; i++)
		{
			int64_t		r = rows->nrows + i;

			for (k = 0; k < rows->ncols; k++)
			{
				rows->values[k][r] = o->values[k][i];
				rows->isnull[k][r] = o->isnull[k][i];
			}
			rows->host[r] = o->host[i];
			rows->page[r] = p;
			rows->lineoff[r] = o->lineoffs[i];
		}
		rows->nrows += n;
	}
}

/*
 * Whether a batch the decoder waited for is rows [first, end) of the
 * reference, its flagged list the reference's flagged rows among them.
 */
static bool
pd_batch_ok(const PdRows *ref, int64_t first, int64_t end, const GjPageBatch *batch,
			char *why, size_t whylen)
{
	int64_t		r,
				i = 0;

	if (batch->first_row != first || batch->nrows != end - first)
	{
		snprintf(why, whylen, "a batch of rows %lld .. %lld, expected %lld .. %lld",
				 (long long) batch->first_row, (long long) (batch->first_row + batch->nrows),
				 (long long) first, (long long) end);
		return false;
	}
	for (r = first; r < end; r++)
	{
		if (!ref->host[r])
			continue;
		if (i >= batch->nflagged || batch->flagged[i].row != r ||
			batch->flagged[i].page != ref->page[r] ||
			batch->flagged[i].lineoff != ref->lineoff[r])
		{
			snprintf(why, whylen, "flagged entry %lld is not row %lld (page %d, line pointer %d)",
					 (long long) i, (long long) r, ref->page[r], ref->lineoff[r]);
			return false;
		}
		i++;
	}
	if (i != batch->nflagged)
	{
		snprintf(why, whylen, "%lld rows flagged, expected %lld", (long long) batch->nflagged,
				 (long long) i);
		return false;
	}
	return true;
}

/* Whether the decoder's rows (downloaded into got) are the reference's. */
static bool
pd_rows_equal(const PdRows *ref, const PdRows *got, char *why, size_t whylen)
{
	int64_t		r;
	int			k;

	for (r = 0; r < ref->nrows; r++)
	{
		if (got->host[r] != ref->host[r])
		{
			snprintf(why, whylen, "row %lld (page %d, line pointer %d) %sflagged", (long long) r,
					 ref->page[r], ref->lineoff[r], got->host[r] ? "" : "not ");
			return false;
		}
		for (k = 0; !ref->host[r] && k < ref->ncols; k++)
		{
			if (got->isnull[k][r] != ref->isnull[k][r] ||
				(!ref->isnull[k][r] && got->values[k][r] != ref->values[k][r]))
			{
				snprintf(why, whylen, "row %lld (page %d, line pointer %d) column %d: %s %llx, expected %s %llx",
						 (long long) r, ref->page[r], ref->lineoff[r], k,
						 got->isnull[k][r] ? "NULL" : "value",
						 (unsigned long long) got->values[k][r],
						 ref->isnull[k][r] ? "NULL" : "value",
						 (unsigned long long) ref->values[k][r]);
				return false;
			}
		}
	}
	return true;
}

/*
 * Decode pages with d in batches of batch_pages[] pages, two in flight,
 * its columns room for rows_hint rows to begin with (so that they grow
 * while batches are in flight), and compare everything with the
 * reference; false with why set at the first difference.
 */
static bool
pd_batches_compare(const PdDecoder *d, const GjPageSpec *spec, const uint8_t *pages,
				   const int *batch_pages, int nbatches, int64_t rows_hint,
				   int64_t *flagged, char *why, size_t whylen)
{
	PdOut	   *o = xmalloc(sizeof(PdOut));
	int64_t    *first = xmalloc(sizeof(int64_t) * (nbatches + 1));
	int64_t    *page0 = xmalloc(sizeof(int64_t) * (nbatches + 1));
	PdRows		ref,
				got;
	GjError		err;
	void	   *dec;
	int			appended = 0,
				waited = 0,
				b;
	bool		ok;

	memset(&err, 0, sizeof(err));
	pd_rows_init(&ref, spec->ncols);
	pd_rows_init(&got, spec->ncols);
	page0[0] = 0;
	for (b = 0; b < nbatches; b++)
	{
		first[b] = ref.nrows;
		pd_rows_decode(&ref, spec, pages + page0[b] * PD_PAGE_SIZE, batch_pages[b], o);
		page0[b + 1] = page0[b] + batch_pages[b];
	}
	first[nbatches] = ref.nrows;
	for (b = 0; flagged != NULL && b < ref.nrows; b++)
		*flagged += ref.host[b];

	dec = d->begin(spec, rows_hint, &err);
	ok = dec != NULL;
	if (!ok)
		snprintf(why, whylen, "begin: %.200s", err.message);
	while (ok && waited < nbatches)
	{
		GjPageBatch batch;

		if (appended < nbatches && appended - waited < 2)
		{
			ok = d->append(dec, pages + page0[appended] * PD_PAGE_SIZE, batch_pages[appended],
						   -1, &err);
			if (!ok)
				snprintf(why, whylen, "append: %.200s", err.message);
			appended++;
			continue;
		}
		ok = d->wait(dec, &batch, NULL, &err);
		if (!ok)
			snprintf(why, whylen, "wait: %.200s", err.message);
		else
			ok = pd_batch_ok(&ref, first[waited], first[waited + 1], &batch, why, whylen);
		waited++;
	}
	if (ok)
	{
		pd_rows_reserve(&got, gj_max64(ref.nrows, 1));
		ok = d->download(dec, got.values, got.isnull, got.host, &err);
		if (!ok)
			snprintf(why, whylen, "download: %.200s", err.message);
		else
			ok = pd_rows_equal(&ref, &got, why, whylen);
	}
	if (dec != NULL)
		d->end(dec);
	pd_rows_free(&ref);
	pd_rows_free(&got);
	free(first);
	free(page0);
	free(o);
	return ok;
}

/* Report a batch check of decoder d. */
static void
pd_batch_report(const PdDecoder *d, bool ok, const char *what, const char *why)
{
	char		name[256];

	snprintf(name, sizeof(name), "page decoder %s: %s", d->name, what);
	report(ok, "%s %s", name, why);
}

/* The damaged pages of pd_test_damage, a batch each. */
static void
pd_batch_test_damage(const PdDecoder *d, const PdDamageCase *c)
{
	PdPage	   *pg = xmalloc(sizeof(PdPage));
	PdSchema	s;
	int			one = 1;
	char		why[256] = "";
	bool		ok;

	pd_damaged_page(pg, &s, c->damage);
	ok = pd_batches_compare(d, &s.spec, pd_bytes(pg), &one, 1, 0, NULL, why, sizeof(why));
	pd_batch_report(d, ok, c->name, why);
	free(pg);
}

/*
 * Random schemas of every type (fixed_only: fixed-width types alone), up to
 * PD_BATCH_MAX_PAGES pages each with random tuple counts (none, a few,
 * full), cut into random batches (empty ones too); clean: no NULLs and no
 * short tuples, every tuple at the decoder's fixed offsets where the
 * schema has them.
 */
#define PD_BATCH_MAX_PAGES	24

static void
pd_batch_test_random(const PdDecoder *d, const char *what, int nschemas, bool fixed_only,
					 bool clean)
{
	PdPage	   *pg = xmalloc(sizeof(PdPage));
	uint8_t    *pages = xmalloc((size_t) PD_BATCH_MAX_PAGES * PD_PAGE_SIZE);
	int			batch_pages[PD_BATCH_MAX_PAGES];
	PdSchema	s;
	char		why[256] = "";
	int64_t		tuples = 0,
				flagged = 0;
	int			npages_all = 0,
				nbatches_all = 0;
	bool		ok = true;
	int			i;

	for (i = 0; i < nschemas && ok; i++)
	{
		int			npages = 1 + (int) (rng() % PD_BATCH_MAX_PAGES);
		int			nbatches = 0,
					left,
					p;

		pd_random_schema(&s, fixed_only || rng() % 3 == 0);
		for (p = 0; p < npages; p++)
		{
			uint64_t	shape = rng() % 8;
			int			max_tuples = shape == 0 ? 0 :
				shape < 3 ? 1 + (int) (rng() % 40) : PD_MAX_ROWS;

			pd_fill_page(pg, &s, max_tuples, clean);
			/* as the visibility map would have it (the decoders do not look) */
			pd_put16(pd_bytes(pg) + GJ_PAGE_PD_FLAGS_OFF, GJ_PAGE_ALL_VISIBLE);
			memcpy(pages + (size_t) p * PD_PAGE_SIZE, pg->words, PD_PAGE_SIZE);
			tuples += pg->nrows;
		}
		/* batches of 0 to all of the pages left, the last taking the rest */
		for (left = npages; left > 0 && nbatches < PD_BATCH_MAX_PAGES - 1; nbatches++)
		{
			int			n = rng() % 6 == 0 ? 0 : 1 + (int) (rng() % (uint64_t) left);

			batch_pages[nbatches] = n;
			left -= n;
		}
		if (left > 0 || rng() % 4 == 0)
			batch_pages[nbatches++] = left;
		npages_all += npages;
		nbatches_all += nbatches;
		ok = pd_batches_compare(d, &s.spec, pages, batch_pages, nbatches,
								(int64_t) (rng() % 300), &flagged, why, sizeof(why));
	}
	pd_batch_report(d, ok, what, why);
	printf("# %d schemas, %d pages in %d batches, %lld tuples, %lld flagged\n", i, npages_all,
		   nbatches_all, (long long) tuples, (long long) flagged);
	free(pg);
	free(pages);
}

/*
 * Thousands of pages of (int4, int8, float8, text), every other one with
 * NULLs and short tuples, in one batch: thousands of warps on the device,
 * rows far past the columns' first size.
 */
static void
pd_batch_test_many_pages(const PdDecoder *d)
{
	enum
	{
		NPAGES = 5000
	};
	PdPage	   *pg = xmalloc(sizeof(PdPage));
	uint8_t    *pages = xmalloc((size_t) NPAGES * PD_PAGE_SIZE);
	PdSchema	s;
	int			needed[] = {1, 2, 3};
	int			npages = NPAGES;
	char		why[256] = "";
	int			p;
	bool		ok;

	memset(&s, 0, sizeof(s));
	s.natts = 4;
	s.types[0] = &pd_types[2];
	s.types[1] = &pd_types[3];
	s.types[2] = &pd_types[4];
	s.types[3] = &pd_types[7];
	pd_schema_spec(&s, needed, 3);
	for (p = 0; p < NPAGES; p++)
	{
		pd_fill_page(pg, &s, PD_MAX_ROWS, p % 2 == 0);
		memcpy(pages + (size_t) p * PD_PAGE_SIZE, pg->words, PD_PAGE_SIZE);
	}
	ok = pd_batches_compare(d, &s.spec, pages, &npages, 1, 1000, NULL, why, sizeof(why));
	pd_batch_report(d, ok, "5000 pages of (int4, int8, float8, text) in one batch", why);
	free(pg);
	free(pages);
}

/*
 * A batch whose pages have more rows than the bound its caller gave: no
 * row is written past the bound, and the wait says so.
 */
static void
pd_batch_test_bound(const PdDecoder *d)
{
	PdPage	   *pg = xmalloc(sizeof(PdPage));
	PdSchema	s;
	GjPageBatch batch;
	GjError		err;
	void	   *dec;
	bool		ok;

	memset(&err, 0, sizeof(err));
	pd_random_schema(&s, true);
	pd_fill_page(pg, &s, PD_MAX_ROWS, true);
	dec = d->begin(&s.spec, 0, &err);
	ok = dec != NULL && pg->nrows > 2 &&
		d->append(dec, pd_bytes(pg), 1, 1, &err) &&
		!d->wait(dec, &batch, NULL, &err) &&
		strstr(err.message, "more rows than its bound") != NULL;
	if (dec != NULL)
		d->end(dec);
	pd_batch_report(d, ok, "a batch with more rows than its bound is an error", err.message);
	free(pg);
}

/* The batch checks of decoder d. */
static void
pd_batch_tests(const PdDecoder *d)
{
	int			i;

	for (i = 0; i < PD_NDAMAGES; i++)
		pd_batch_test_damage(d, &pd_damages[i]);
	pd_batch_test_random(d, "random pages of random schemas, NULLs, short tuples", 150, false,
						 false);
	pd_batch_test_random(d, "random pages of fixed-width schemas without NULLs", 60, true, true);
	pd_batch_test_many_pages(d);
	pd_batch_test_bound(d);
}

int
page_decode_test_count(void)
{
	return 3 + PD_NDAMAGES + PD_BATCH_TESTS;
}

/* The decoder on the host: gj_page_decode, and the batches of cpu_page_decode.c. */
void
run_page_decode_tests(void)
{
	int			i;

	pd_test_random_pages();
	pd_test_sign_extension();
	for (i = 0; i < PD_NDAMAGES; i++)
		pd_test_damage(&pd_damages[i]);
	pd_batch_tests(&pd_cpu_decoder);
}

int
page_decode_cuda_test_count(void)
{
	return PD_BATCH_TESTS;
}

/* The device's decoder; each check skips without a device. */
void
run_page_decode_cuda_tests(void)
{
	GjDeviceInfo info;
	GjError		err;
	int			i;

	memset(&err, 0, sizeof(err));
	if (!gj_cuda_probe(&info, &err))
	{
		for (i = 0; i < PD_BATCH_TESTS; i++)
			printf("ok %d - page decoder on the device # SKIP no CUDA device: %s\n",
				   ++test_number, err.message);
		return;
	}
	pd_batch_tests(&pd_cuda_decoder);
}

/* kernel_test page-decode: the decoder on the host, then on the device. */
int
run_page_decode_only(void)
{
	printf("1..%d\n", page_decode_test_count() + page_decode_cuda_test_count());
	run_page_decode_tests();
	run_page_decode_cuda_tests();
	printf("kernel_test: %d passed, %d failed\n", test_number - failures, failures);
	return failures > 0 ? 1 : 0;
}

/* ---------------------------------------------------------------------
 * bench-page-decode: rows decoded a second, on the host and the device
 * ---------------------------------------------------------------------
 */

#define PD_BENCH_REPS		5
#define PD_BENCH_BATCH		2048	/* pages (16 MB) a batch when copies overlap */

/* The tables of the bench: their attributes, every one of them needed. */
typedef struct PdBenchTable
{
	const char *name;
	int			natts;
	int			types[2];		/* of pd_types */
} PdBenchTable;

static const PdBenchTable pd_bench_tables[] = {
	{"int4", 1, {2}},
	{"int8", 1, {3}},
	{"float8", 1, {4}},
	{"int4, float8", 2, {2, 4}},
};

/*
 * nrows tuples of the table's all-visible pages, filled as heap_insert
 * fills them (no NULLs, committed hint bits, a line pointer each), random
 * values; *npages and *per_page say how many pages and rows a page.
 */
static uint8_t *
pd_bench_pages(const PdSchema *s, int64_t nrows, int64_t *npages, int *per_page)
{
	uint32_t	hoff = 24;			/* MAXALIGN(SizeofHeapTupleHeader), no bitmap */
	uint32_t	tup_len = hoff + s->spec.fixed_end;
	uint32_t	space = (tup_len + 7) & ~7u;
	uint8_t    *pages;
	int64_t		p,
				row = 0;

	*per_page = (int) ((PD_PAGE_SIZE - GJ_PAGE_HEADER_SIZE) / (space + GJ_ITEMID_SIZE));
	*npages = (nrows + *per_page - 1) / *per_page;
	pages = aligned_alloc(4096, (size_t) gj_max64(*npages, 1) * PD_PAGE_SIZE);
	if (pages == NULL)
		abort();
	memset(pages, 0, (size_t) *npages * PD_PAGE_SIZE);
	for (p = 0; p < *npages; p++)
	{
		uint8_t    *page = pages + (size_t) p * PD_PAGE_SIZE;
		uint32_t	upper = PD_PAGE_SIZE;
		int			i,
					k,
					n = (int) gj_min64(*per_page, nrows - row);

		for (i = 0; i < n; i++)
		{
			uint8_t    *tup;

			upper -= space;
			tup = page + upper;
			pd_put32(page + GJ_PAGE_HEADER_SIZE + i * GJ_ITEMID_SIZE,
					 upper | (GJ_LP_NORMAL << 15) | (tup_len << 17));
			pd_put16(tup + GJ_TUPLE_INFOMASK2_OFF, (uint32_t) s->natts);
			pd_put16(tup + GJ_TUPLE_INFOMASK_OFF, 0x0900);	/* xmin committed, xmax invalid */
			tup[GJ_TUPLE_HOFF_OFF] = (uint8_t) hoff;
			for (k = 0; k < s->spec.ncols; k++)
			{
				uint8_t    *v = tup + hoff + s->cols[k].fixed_off;
				uint64_t	r = rng();

				if (s->cols[k].attlen == 4)
					pd_put32(v, (uint32_t) r);
				else
				{
					double		d = (double) (int32_t) r / 7.0;

					if (strcmp(s->types[s->cols[k].attno - 1]->name, "float8") == 0)
						memcpy(&r, &d, sizeof(r));
					memcpy(v, &r, sizeof(r));
				}
			}
		}
		pd_put16(page + GJ_PAGE_PD_LOWER_OFF, GJ_PAGE_HEADER_SIZE + n * GJ_ITEMID_SIZE);
		pd_put16(page + GJ_PAGE_PD_UPPER_OFF, upper);
		pd_put16(page + GJ_PAGE_PD_FLAGS_OFF, GJ_PAGE_ALL_VISIBLE);
		row += n;
	}
	return pages;
}

/* One pass of pd_bench_cpu; milliseconds. */
static double
pd_bench_cpu_once(const PdSchema *s, const uint8_t *pages, int64_t npages, PdRows *rows)
{
	uint64_t   *values[PD_MAX_ATTS];
	bool	   *isnull[PD_MAX_ATTS];
	uint8_t		host[PD_MAX_ROWS];
	uint16_t	lineoffs[PD_MAX_ROWS];
	uint32_t	data_offs[PD_MAX_ROWS];
	GjPageOutput out = {values, isnull, host, lineoffs, data_offs};
	double		t0 = gj_clock_ms();
	int64_t		p;
	int			k;

	rows->nrows = 0;
	for (p = 0; p < npages; p++)
	{
		int			nhost;
		int			n;

		for (k = 0; k < s->spec.ncols; k++)
		{
			values[k] = rows->values[k] + rows->nrows;
			isnull[k] = rows->isnull[k] + rows->nrows;
		}
		n = gj_page_decode(pages + (size_t) p * PD_PAGE_SIZE, 0, &s->spec, NULL,
						   GJ_PAGE_ALL_NORMAL, &out, &nhost);
		memcpy(rows->host + rows->nrows, host, n);
		rows->nrows += n;
	}
	return gj_clock_ms() - t0;
}

/*
 * The host's decoder, one core, over every page into whole columns (as
 * the heap reader's page at a time, without the copy into its buffer);
 * milliseconds, best of PD_BENCH_REPS (the first faults the columns in).
 */
static double
pd_bench_cpu(const PdSchema *s, const uint8_t *pages, int64_t npages, PdRows *rows)
{
	double		best = 1e30;
	int			rep;

	for (rep = 0; rep < PD_BENCH_REPS; rep++)
	{
		double		ms = pd_bench_cpu_once(s, pages, npages, rows);

		best = ms < best ? ms : best;
	}
	return best;
}

/*
 * The device: the table's pages in one batch (copy, then decode: the
 * events time each), best of PD_BENCH_REPS; then in PD_BENCH_BATCH-page
 * batches, two in flight (the copy of one overlaps the decode of the one
 * before), wall clock.  The columns are compared with the host's.
 */
static bool
pd_bench_cuda(const PdSchema *s, uint8_t *pages, int64_t npages, int64_t nrows,
			  const PdRows *ref, double *decode_ms, double *copy_ms, double *overlap_ms,
			  char *why, size_t whylen)
{
	int64_t		nbatches = (npages + PD_BENCH_BATCH - 1) / PD_BENCH_BATCH;
	int64_t    *bounds = xmalloc(sizeof(int64_t) * gj_max64(nbatches, 1));
	GjError		err;
	PdRows		dev;
	void	   *dec = NULL;
	GjPageBatch batch;
	int64_t		p;
	bool		ok;
	int			rep;

	memset(&err, 0, sizeof(err));
	*decode_ms = *copy_ms = *overlap_ms = 1e30;
	if (npages > ((int64_t) 1 << 20))
	{
		snprintf(why, whylen, "more than 2^20 pages: a smaller N");
		free(bounds);
		return false;
	}
	/* each batch's line pointers, which the staging side counts as it copies */
	memset(bounds, 0, sizeof(int64_t) * gj_max64(nbatches, 1));
	for (p = 0; p < npages; p++)
		bounds[p / PD_BENCH_BATCH] += gj_page_item_count(pages + (size_t) p * PD_PAGE_SIZE,
														 PD_PAGE_SIZE);
	ok = gj_cuda_pin_host(pages, (size_t) npages * PD_PAGE_SIZE, &err);
	if (ok)
		ok = (dec = gj_cuda_test_page_begin(&s->spec, nrows, &err)) != NULL;
	for (rep = 0; ok && rep < PD_BENCH_REPS; rep++)
	{
		GjStats		stats;

		memset(&stats, 0, sizeof(stats));
		ok = gj_cuda_test_page_reset(dec, &err) &&
			gj_cuda_test_page_append(dec, pages, npages, nrows, &err) &&
			gj_cuda_test_page_wait(dec, &batch, &stats, &err);
		if (ok && batch.nrows != nrows)
		{
			snprintf(err.message, sizeof(err.message), "%lld rows decoded, expected %lld",
					 (long long) batch.nrows, (long long) nrows);
			ok = false;
		}
		*decode_ms = stats.kernel_ms < *decode_ms ? stats.kernel_ms : *decode_ms;
		*copy_ms = stats.transfer_ms < *copy_ms ? stats.transfer_ms : *copy_ms;
	}
	for (rep = 0; ok && rep < PD_BENCH_REPS; rep++)
	{
		int64_t		appended = 0,
					waited = 0;
		double		t0;

		ok = gj_cuda_test_page_reset(dec, &err);
		t0 = gj_clock_ms();
		while (ok && waited < nbatches)
		{
			if (appended < nbatches && appended - waited < 2)
			{
				int64_t		n = gj_min64(PD_BENCH_BATCH, npages - appended * PD_BENCH_BATCH);

				ok = gj_cuda_test_page_append(dec, pages + (size_t) appended * PD_BENCH_BATCH *
											  PD_PAGE_SIZE, n, bounds[appended], &err);
				appended++;
				continue;
			}
			ok = gj_cuda_test_page_wait(dec, &batch, NULL, &err);
			waited++;
		}
		if (ok)
		{
			double		ms = gj_clock_ms() - t0;

			*overlap_ms = ms < *overlap_ms ? ms : *overlap_ms;
		}
	}
	if (!ok)
		snprintf(why, whylen, "%.200s", err.message);

	/* the last run's columns, row for row */
	pd_rows_init(&dev, s->spec.ncols);
	if (ok)
	{
		pd_rows_reserve(&dev, nrows);
		ok = gj_cuda_test_page_download(dec, dev.values, dev.isnull, dev.host, &err);
		if (!ok)
			snprintf(why, whylen, "download: %.200s", err.message);
		else
			ok = pd_rows_equal(ref, &dev, why, whylen);
	}
	pd_rows_free(&dev);
	gj_cuda_test_page_end(dec);
	gj_cuda_unpin_host(pages);
	free(bounds);
	return ok;
}

int
bench_page_decode(int64_t nrows)
{
	GjDeviceInfo info;
	GjError		err;
	bool		cuda;
	int			failed = 0;
	int			t;

	memset(&info, 0, sizeof(info));
	memset(&err, 0, sizeof(err));
	cuda = gj_cuda_probe(&info, &err);
	printf("page decode: %lld rows a table, all-visible 8 kB pages, every attribute decoded; %s\n",
		   (long long) nrows, cuda ? info.name : "no CUDA device");
	printf("# cpu: gj_page_decode, one core; decode: the device's count, scan and decode kernels\n"
		   "# (events, pages on the device); copy: the pages from pinned host memory (events);\n"
		   "# copy+decode: the two one after the other; overlapped: %d-page batches, two in\n"
		   "# flight (wall clock); best of %d\n", PD_BENCH_BATCH, PD_BENCH_REPS);
	printf("%-13s %9s %11s %20s %21s %11s %20s\n", "table", "rows/page", "cpu", "decode",
		   "copy", "copy+decode", "overlapped");
	for (t = 0; t < (int) (sizeof(pd_bench_tables) / sizeof(pd_bench_tables[0])); t++)
	{
		const PdBenchTable *bt = &pd_bench_tables[t];
		PdSchema	s;
		PdRows		ref;
		int			needed[2] = {1, 2};
		int64_t		npages;
		int			per_page,
					k;
		uint8_t    *pages;
		double		cpu_ms,
					decode_ms,
					copy_ms,
					overlap_ms;
		char		why[256] = "";

		memset(&s, 0, sizeof(s));
		s.natts = bt->natts;
		for (k = 0; k < bt->natts; k++)
			s.types[k] = &pd_types[bt->types[k]];
		pd_schema_spec(&s, needed, bt->natts);
		pages = pd_bench_pages(&s, nrows, &npages, &per_page);
		pd_rows_init(&ref, s.spec.ncols);
		pd_rows_reserve(&ref, nrows);
		cpu_ms = pd_bench_cpu(&s, pages, npages, &ref);
		if (ref.nrows != nrows)
		{
			printf("not ok - %s: the host decoded %lld rows of %lld\n", bt->name,
				   (long long) ref.nrows, (long long) nrows);
			failed++;
		}
		else if (!cuda)
			printf("%-13s %9d %7.1f M/s  # SKIP cuda: %s\n", bt->name, per_page,
				   nrows / cpu_ms / 1e3, err.message);
		else if (!pd_bench_cuda(&s, pages, npages, nrows, &ref, &decode_ms, &copy_ms,
								&overlap_ms, why, sizeof(why)))
		{
			printf("not ok - %s on the device: %s\n", bt->name, why);
			failed++;
		}
		else
			printf("%-13s %9d %7.1f M/s %6.2f G/s %6.2f ms %6.1f GB/s %6.2f ms %7.2f G/s %6.2f G/s %6.2f ms\n",
				   bt->name, per_page, nrows / cpu_ms / 1e3, nrows / decode_ms / 1e6, decode_ms,
				   npages * (double) PD_PAGE_SIZE / copy_ms / 1e6, copy_ms,
				   nrows / (copy_ms + decode_ms) / 1e6, nrows / overlap_ms / 1e6, overlap_ms);
		pd_rows_free(&ref);
		free(pages);
	}
	return failed > 0 ? 1 : 0;
}
