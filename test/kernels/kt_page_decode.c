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
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_common.h"
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

static void
pd_random_schema(PdSchema *s)
{
	int			needed[PD_MAX_ATTS];
	int			nneeded = 0;
	int			attno;
	bool		fixed_only = rng() % 3 == 0;

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
 * page is full.  Tuples may be shorter than the schema (written before
 * columns were added) and hold NULLs.
 */
static bool
pd_add_tuple(PdPage *pg, const PdSchema *s)
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

	if (rng() % 4 == 0)
		natts = 1 + (int) (rng() % s->natts);
	for (attno = 1; attno <= natts; attno++)
	{
		nulls[attno - 1] = rng() % 5 == 0;
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

		pd_random_schema(&s);
		pd_page_init(pg);
		for (;;)
		{
			uint32_t	off;
			int			lineoff;

			/* unused, dead and redirect line pointers among the tuples */
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
			if (!pd_add_tuple(pg, &s))
				break;
		}
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

/*
 * Each damage to the first of two tuples (int4 7, text 'hello', int8 -2)
 * flags it, and only it (the whole page for a bad pd_lower).
 */
static void
pd_test_damage(const char *name, PdDamage damage, bool flagged)
{
	PdPage	   *pg = xmalloc(sizeof(PdPage));
	PdOut	   *o = xmalloc(sizeof(PdOut));
	PdSchema	s;
	int			needed[] = {1, 3};
	uint16_t	list[] = {1, 2};
	uint8_t    *first = NULL;
	int			t,
				n,
				nhost;
	bool		ok;

	memset(&s, 0, sizeof(s));
	s.natts = 3;
	s.types[0] = &pd_types[2];
	s.types[1] = &pd_types[7];
	s.types[2] = &pd_types[3];
	pd_schema_spec(&s, needed, 2);
	s.cols[0].missing_host = s.cols[1].missing_host = false;
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
	pd_out_init(o);
	n = gj_page_decode((const uint8_t *) pg->words, PD_REF_BASE, &s.spec, list, 2, &o->out, &nhost);
	ok = n == 2 && o->host[0] == flagged && nhost == (flagged ? 1 : 0) + (damage == pd_damage_pd_lower) &&
		(damage == pd_damage_pd_lower ||
		 (o->host[1] == 0 && o->values[0][1] == 7 && o->values[1][1] == (uint64_t) -2 &&
		  !o->isnull[0][1] && !o->isnull[1][1]));
	if (!flagged)
		ok &= o->values[0][0] == 7 && o->values[1][0] == (uint64_t) -2;
	report(ok, "page decoder: %s%s", name, flagged ? " flags the tuple for the host" : " decodes");
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

int
page_decode_test_count(void)
{
	return 3 + 10;
}

void
run_page_decode_tests(void)
{
	pd_test_random_pages();
	pd_test_sign_extension();
	pd_test_damage("an undamaged tuple", pd_damage_none, false);
	pd_test_damage("t_hoff too small for the NULL bitmap", pd_damage_hoff_small, true);
	pd_test_damage("t_hoff not maximally aligned", pd_damage_hoff_unaligned, true);
	pd_test_damage("a line pointer shorter than the attributes", pd_damage_short_len, true);
	pd_test_damage("a TOAST pointer that is not on disk", pd_damage_toast_tag, true);
	pd_test_damage("a varlena longer than the tuple", pd_damage_varlena_long, true);
	pd_test_damage("a line pointer not maximally aligned", pd_damage_unaligned_lp, true);
	pd_test_damage("a listed line pointer that is not LP_NORMAL", pd_damage_not_normal, true);
	pd_test_damage("pd_lower below the line pointers", pd_damage_pd_lower, true);
}
