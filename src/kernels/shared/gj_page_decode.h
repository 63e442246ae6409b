/*-------------------------------------------------------------------------
 *
 * gj_page_decode.h
 *	  The heap page decoder: from the raw bytes of one 8 kB heap page, the
 *	  attributes a join needs, a column of 8-byte values and a column of
 *	  null flags per attribute, with one source for the host (the columnar
 *	  heap reader, C) and, later, the device (a CUDA kernel decoding pages
 *	  staged raw; issue 36).
 *
 * What it decodes.  The tuples of a page are named by their line pointers:
 * either a list of offsets (the visible ones, as heapgetpage put them in
 * rs_vistuples) or every LP_NORMAL line pointer of the page (a page the
 * visibility map marks all-visible, where heapgetpage itself checks
 * nothing per tuple).  For each tuple and each needed attribute it writes
 * the same Datum bits PostgreSQL's fetch_att gives (by-value attributes of
 * 1, 2 and 4 bytes sign-extended, as CharGetDatum, Int16GetDatum and
 * Int32GetDatum do; 8-byte ones as they are), or, for an attribute passed
 * by reference, the address of the value in the page (ref_base plus its
 * offset: the page's own address on the host).  It walks the attributes as
 * slot_deform_heap_tuple does: the NULL bitmap, att_align_nominal for
 * fixed-width attributes, att_align_pointer for varlena ones (no padding
 * before a 1-byte header, VARATT_NOT_PAD_BYTE), att_addlength_pointer for
 * their lengths (1-byte, 4-byte and on-disk TOAST pointer headers; cstrings
 * to their terminator); attributes a tuple is too short for (added by ALTER
 * TABLE after it was written) take their missing value.  Nothing is
 * detoasted: a TOAST pointer is returned as a seq scan would return it.
 *
 * What it leaves to the host.  A tuple the decoder cannot read exactly is
 * flagged (host[row] = 1) and its values left unset; the caller deforms it
 * itself.  That is conservative, never a guess: a line pointer in the list
 * that is not LP_NORMAL, a tuple or a value that does not fit in its line
 * pointer's length, a header whose t_hoff is too small for its bitmap or
 * not maximally aligned, a by-value load at an address not aligned to its
 * width, a TOAST pointer whose tag is not VARTAG_ONDISK (the others exist
 * only in memory), a cstring without its terminator, and a missing value
 * passed by reference (it lives in the table's descriptor, not the page).
 * On a valid page only the last happens.
 *
 * Layout.  The few constants of PostgreSQL's page and tuple layout are
 * re-derived here, since this header must stay free of PostgreSQL headers
 * (nvcc compiles it as C++ for the device); heap_reader.c checks them
 * against PostgreSQL's at compile time (StaticAssertDecl) and the
 * ItemIdData bit fields at run time, and uses the decoder only on a
 * little-endian build with 8-byte Datums and 8-byte maximal alignment.
 *
 * The cuda page path (issue 36).  cuda/cuda_page_decode.cu decodes batches
 * of raw pages on the device with this code, a warp per page: every
 * LP_NORMAL line pointer of a page (GJ_PAGE_ALL_NORMAL, the pages the
 * visibility map marks all-visible) through gj_page_decode_tuple, into
 * device columns in page and line pointer order, the rows gj_page_decode
 * gives page after page; the rows it flags come back as GjPageFlagged.
 * Its header comment says how the heap reader is to hand it pages.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUJOIN_GJ_PAGE_DECODE_H
#define GPUJOIN_GJ_PAGE_DECODE_H

#include <stdint.h>
#include <stdbool.h>

#include "kernels/device_program.h"	/* GJ_HD */

/*
 * PostgreSQL's layout (storage/bufpage.h, storage/itemid.h,
 * access/htup_details.h, postgres.h), checked in heap_reader.c.
 */
#define GJ_PAGE_HEADER_SIZE		24	/* SizeOfPageHeaderData: pd_linp[] starts here */
#define GJ_PAGE_PD_LOWER_OFF	12	/* offsetof(PageHeaderData, pd_lower) */
#define GJ_PAGE_PD_FLAGS_OFF	10	/* offsetof(PageHeaderData, pd_flags) */
#define GJ_PAGE_PD_UPPER_OFF	14	/* offsetof(PageHeaderData, pd_upper) */
#define GJ_PAGE_ALL_VISIBLE		0x0004	/* PD_ALL_VISIBLE */
#define GJ_ITEMID_SIZE			4	/* sizeof(ItemIdData): lp_off:15 lp_flags:2 lp_len:15 */
#define GJ_LP_NORMAL			1
#define GJ_LP_REDIRECT			2
#define GJ_LP_DEAD				3
#define GJ_TUPLE_INFOMASK2_OFF	18	/* offsetof(HeapTupleHeaderData, t_infomask2) */
#define GJ_TUPLE_INFOMASK_OFF	20	/* offsetof(HeapTupleHeaderData, t_infomask) */
#define GJ_TUPLE_HOFF_OFF		22	/* offsetof(HeapTupleHeaderData, t_hoff) */
#define GJ_TUPLE_BITS_OFF		23	/* offsetof(HeapTupleHeaderData, t_bits) */
#define GJ_HEAP_NATTS_MASK		0x07FF
#define GJ_HEAP_HASNULL			0x0001
#define GJ_MAXALIGN				8	/* MAXIMUM_ALIGNOF */
#define GJ_VARTAG_ONDISK		18
#define GJ_TOAST_POINTER_SIZE	18	/* VARHDRSZ_EXTERNAL + sizeof(varatt_external) */

/* Layout of one attribute of the table, for the walk. */
typedef struct GjPageAttr
{
	int16_t		attlen;			/* > 0 fixed, -1 varlena, -2 cstring */
	uint8_t		align;			/* attalign in bytes: 1, 2, 4 or 8 */
} GjPageAttr;

/* One attribute the join needs. */
typedef struct GjPageColumn
{
	int			attno;			/* of the table, from 1 */
	int16_t		attlen;
	bool		byval;			/* attlen 1, 2, 4 or 8 */
	int32_t		fixed_off;		/* offset in a tuple without NULLs, or -1 */
	/* for a tuple with fewer attributes than attno */
	uint64_t	missing_value;	/* a by-value attmissingval's Datum */
	bool		missing_isnull; /* no missing value: NULL */
	bool		missing_host;	/* a non-NULL missing value by reference */
} GjPageColumn;

/* What to decode; built once per scan (heap_reader.c). */
typedef struct GjPageSpec
{
	uint32_t	page_size;		/* BLCKSZ */
	int			walk_natts;		/* attributes to walk: the last needed attno */
	const GjPageAttr *attrs;	/* [walk_natts], attribute 1 first */
	int			ncols;
	const GjPageColumn *cols;	/* [ncols], ascending attno */
	/* every column has a fixed_off, and fixed_end = max(fixed_off + attlen) */
	bool		all_fixed;
	uint32_t	fixed_end;
} GjPageSpec;

/* Where decoded row `row` goes. */
typedef struct GjPageOutput
{
	uint64_t  **values;			/* [ncols][rows]: Datum bits, or ref_base + offset */
	bool	  **isnull;			/* [ncols][rows] */
	uint8_t    *host;			/* [rows]: 1 where the host must deform the tuple */
	uint16_t   *lineoffs;		/* [rows]: GJ_PAGE_ALL_NORMAL fills it in */
	uint32_t   *data_offs;		/* [rows]: gj_page_decode's scratch */
} GjPageOutput;

/* Where a tuple's data is, from its line pointer and header. */
typedef struct GjPageTuple
{
	uint32_t	tup_off;		/* offset of the tuple's header in the page */
	uint32_t	data_off;		/* offset of the data (t_hoff on) in the page */
	uint32_t	data_len;
	uint32_t	natts;
	bool		hasnull;
} GjPageTuple;

/*
 * A row the device's decoder flagged for the host (cuda_page_decode.cu):
 * its row in the decoded columns, and where its tuple is, the page of its
 * batch (from 0) and the line pointer (from 1).
 */
typedef struct GjPageFlagged
{
	int64_t		row;
	int32_t		page;
	int32_t		lineoff;
} GjPageFlagged;

/*
 * What a batch of pages decoded in batch mode (cuda_page_decode.cu and its
 * host counterpart, cpu_page_decode.c): its rows, and the rows flagged,
 * ascending.
 */
typedef struct GjPageBatch
{
	int64_t		first_row;		/* its rows: [first_row, first_row + nrows) */
	int64_t		nrows;
	int64_t		nflagged;
	const GjPageFlagged *flagged;	/* until the decoder's next wait */
} GjPageBatch;

/* What gj_page_decode_tuple made of one line pointer. */
#define GJ_PAGE_ROW			0	/* decoded */
#define GJ_PAGE_HOST		1	/* the host must deform it */
#define GJ_PAGE_NOT_NORMAL	2	/* unused, redirect or dead: no tuple */

/* gj_page_decode's mode: every LP_NORMAL line pointer, no list */
#define GJ_PAGE_ALL_NORMAL	(-1)

GJ_HD uint32_t
gj_page_load16(const uint8_t *p)
{
	return (uint32_t) p[0] | ((uint32_t) p[1] << 8);
}

GJ_HD uint32_t
gj_page_load32(const uint8_t *p)
{
	return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16) |
		((uint32_t) p[3] << 24);
}

GJ_HD uint32_t
gj_page_align(uint32_t off, uint32_t align)
{
	return (off + align - 1) & ~(align - 1);
}

/* Line pointer lineoff (from 1, at most the page's count) as its 32 bits. */
GJ_HD uint32_t
gj_page_lp(const uint8_t *page, int lineoff)
{
	return gj_page_load32(page + GJ_PAGE_HEADER_SIZE + (lineoff - 1) * GJ_ITEMID_SIZE);
}

GJ_HD bool
gj_page_lp_is_normal(uint32_t lp)
{
	return ((lp >> 15) & 0x03) == GJ_LP_NORMAL;
}

/* Line pointers on the page (PageGetMaxOffsetNumber), 0 if pd_lower is bad. */
GJ_HD int
gj_page_item_count(const uint8_t *page, uint32_t page_size)
{
	uint32_t	lower = gj_page_load16(page + GJ_PAGE_PD_LOWER_OFF);

	if (lower <= GJ_PAGE_HEADER_SIZE || lower > page_size)
		return 0;
	return (int) ((lower - GJ_PAGE_HEADER_SIZE) / GJ_ITEMID_SIZE);
}

GJ_HD bool
gj_page_is_all_visible(const uint8_t *page)
{
	return (gj_page_load16(page + GJ_PAGE_PD_FLAGS_OFF) & GJ_PAGE_ALL_VISIBLE) != 0;
}

/*
 * The Datum bits of a by-value attribute of attlen bytes at p, which is
 * aligned to attlen: fetch_att's.
 */
GJ_HD uint64_t
gj_page_fetch_byval(const uint8_t *p, int attlen)
{
	switch (attlen)
	{
		case 8:
			return *(const uint64_t *) p;
		case 4:
			return (uint64_t) (int64_t) *(const int32_t *) p;
		case 2:
			return (uint64_t) (int64_t) *(const int16_t *) p;
		default:
			/* CharGetDatum(*(char *)): char's signedness is the host's */
			return (uint64_t) (int64_t) *(const char *) p;
	}
}

/*
 * Store column k of row `row` from the value at data + off (off within the
 * tuple's data, data_page_off the data's offset in the page); false when a
 * by-value load would be misaligned.
 */
GJ_HD bool
gj_page_store_value(const GjPageColumn *col, const uint8_t *data, uint32_t data_page_off,
					uint32_t off, uint64_t ref_base, uint64_t *values, bool *isnull,
					uint32_t row)
{
	if (col->byval)
	{
		if (((data_page_off + off) & (uint32_t) (col->attlen - 1)) != 0)
			return false;
		values[row] = gj_page_fetch_byval(data + off, col->attlen);
	}
	else
		values[row] = ref_base + data_page_off + off;
	isnull[row] = false;
	return true;
}

/*
 * The length of the varlena at p (att_addlength_pointer's VARSIZE_ANY, on
 * a little-endian build), at most `room` bytes being there; 0 when it does
 * not fit or is a TOAST pointer other than an on-disk one.
 */
GJ_HD uint32_t
gj_page_varlena_size(const uint8_t *p, uint32_t room)
{
	uint32_t	size;

	if (room < 1)
		return 0;
	if (p[0] == 0x01)
	{
		/* VARATT_IS_1B_E: a TOAST pointer, its tag in the second byte */
		if (room < 2 || p[1] != GJ_VARTAG_ONDISK)
			return 0;
		size = GJ_TOAST_POINTER_SIZE;
	}
	else if ((p[0] & 0x01) == 0x01)
		size = (p[0] >> 1) & 0x7F;	/* VARSIZE_1B */
	else
	{
		if (room < 4)
			return 0;
		size = (gj_page_load32(p) >> 2) & 0x3FFFFFFF;	/* VARSIZE_4B */
	}
	return size >= 1 && size <= room ? size : 0;
}

/*
 * Find the tuple at line pointer lineoff (from 1; the page has nlp line
 * pointers): GJ_PAGE_ROW with *t filled in, GJ_PAGE_NOT_NORMAL, or
 * GJ_PAGE_HOST where the line pointer or the header is not laid out as
 * PostgreSQL lays them out.
 */
GJ_HD int
gj_page_find_tuple(const uint8_t *page, uint32_t page_size, int nlp, int lineoff,
				   GjPageTuple *t)
{
	uint32_t	lp,
				lp_off,
				lp_len,
				hoff;
	const uint8_t *tup;

	if (lineoff < 1 || lineoff > nlp)
		return GJ_PAGE_HOST;
	lp = gj_page_lp(page, lineoff);
	if (!gj_page_lp_is_normal(lp))
		return GJ_PAGE_NOT_NORMAL;
	lp_off = lp & 0x7FFF;
	lp_len = lp >> 17;
	if (lp_off % GJ_MAXALIGN != 0 || lp_len < GJ_TUPLE_BITS_OFF || lp_off + lp_len > page_size)
		return GJ_PAGE_HOST;
	tup = page + lp_off;
	t->natts = gj_page_load16(tup + GJ_TUPLE_INFOMASK2_OFF) & GJ_HEAP_NATTS_MASK;
	t->hasnull = (gj_page_load16(tup + GJ_TUPLE_INFOMASK_OFF) & GJ_HEAP_HASNULL) != 0;
	hoff = tup[GJ_TUPLE_HOFF_OFF];
	if (hoff % GJ_MAXALIGN != 0 || hoff > lp_len ||
		hoff < GJ_TUPLE_BITS_OFF + (t->hasnull ? (t->natts + 7) / 8 : 0))
		return GJ_PAGE_HOST;
	t->tup_off = lp_off;
	t->data_off = lp_off + hoff;
	t->data_len = lp_len - hoff;
	return GJ_PAGE_ROW;
}

/* Whether a found tuple has every needed attribute at its fixed offset. */
GJ_HD bool
gj_page_tuple_fixed(const GjPageSpec *spec, const GjPageTuple *t)
{
	return spec->all_fixed && !t->hasnull && t->natts >= (uint32_t) spec->walk_natts &&
		spec->fixed_end <= t->data_len;
}

/*
 * Decode the tuple at line pointer lineoff (from 1; the page has nlp line
 * pointers) into row `row` of out: GJ_PAGE_ROW, GJ_PAGE_HOST (host[row]
 * set, the values unset), or GJ_PAGE_NOT_NORMAL (nothing written).
 * ref_base + a value's offset in the page is what a by-reference attribute
 * gets.
 */
GJ_HD int
gj_page_decode_tuple(const uint8_t *page, uint64_t ref_base, const GjPageSpec *spec,
					 int nlp, int lineoff, const GjPageOutput *out, uint32_t row)
{
	GjPageTuple t;
	const uint8_t *data;
	uint32_t	data_off,
				data_len;
	int			k;
	int			found = gj_page_find_tuple(page, spec->page_size, nlp, lineoff, &t);

	if (found == GJ_PAGE_NOT_NORMAL)
		return GJ_PAGE_NOT_NORMAL;
	if (found == GJ_PAGE_HOST)
		goto host;
	data_off = t.data_off;
	data = page + data_off;
	data_len = t.data_len;

	/* no NULLs, long enough, every needed attribute at its fixed offset */
	if (gj_page_tuple_fixed(spec, &t))
	{
		for (k = 0; k < spec->ncols; k++)
		{
			if (!gj_page_store_value(&spec->cols[k], data, data_off, spec->cols[k].fixed_off,
									 ref_base, out->values[k], out->isnull[k], row))
				goto host;
		}
		out->host[row] = 0;
		return GJ_PAGE_ROW;
	}

	/* the walk of slot_deform_heap_tuple, up to the last needed attribute */
	{
		const uint8_t *bits = page + t.tup_off + GJ_TUPLE_BITS_OFF;
		uint32_t	walk = t.natts < (uint32_t) spec->walk_natts ? t.natts : (uint32_t) spec->walk_natts;
		uint32_t	off = 0;
		uint32_t	attno;

		k = 0;
		for (attno = 1; attno <= walk; attno++)
		{
			const GjPageAttr *att = &spec->attrs[attno - 1];
			uint32_t	size;

			if (t.hasnull && (bits[(attno - 1) >> 3] & (1 << ((attno - 1) & 0x07))) == 0)
			{
				for (; k < spec->ncols && spec->cols[k].attno == (int) attno; k++)
				{
					out->values[k][row] = 0;
					out->isnull[k][row] = true;
				}
				continue;
			}
			if (att->attlen > 0)
			{
				off = gj_page_align(off, att->align);
				size = (uint32_t) att->attlen;
				if (off + size > data_len)
					goto host;
			}
			else if (att->attlen == -1)
			{
				/* att_align_pointer: a nonzero byte is a header, not padding */
				if (off >= data_len)
					goto host;
				if (data[off] == 0)
					off = gj_page_align(off, att->align);
				if (off >= data_len)
					goto host;
				size = gj_page_varlena_size(data + off, data_len - off);
				if (size == 0)
					goto host;
			}
			else if (att->attlen == -2)
			{
				/* a cstring, aligned as attalign says (att_align_nominal) */
				off = gj_page_align(off, att->align);
				for (size = 0; off + size < data_len && data[off + size] != 0; size++)
					;
				if (off + size >= data_len)
					goto host;
				size++;
			}
			else
				goto host;
			for (; k < spec->ncols && spec->cols[k].attno == (int) attno; k++)
			{
				if (!gj_page_store_value(&spec->cols[k], data, data_off, off, ref_base,
										 out->values[k], out->isnull[k], row))
					goto host;
			}
			off += size;
		}

		/* attributes added after the tuple was written */
		for (; k < spec->ncols; k++)
		{
			if (spec->cols[k].missing_host)
				goto host;
			out->values[k][row] = spec->cols[k].missing_isnull ? 0 :
				spec->cols[k].missing_value;
			out->isnull[k][row] = spec->cols[k].missing_isnull;
		}
	}
	out->host[row] = 0;
	return GJ_PAGE_ROW;

host:
	out->host[row] = 1;
	return GJ_PAGE_HOST;
}

#ifndef __CUDA_ARCH__
/*
 * On the host: ask for the cache lines of an all-visible page's tuples,
 * pd_upper to the end of the page.  The heap reader calls it a page ahead of
 * the decoding, so that the tuple headers gj_page_decode loads are in the
 * cache by then.  The serial drain of bench_equi.sh's 10M rows on the
 * 2-core machine: no prefetch 170 ms; the lines asked for on the page about
 * to be decoded 123 ms, a page ahead 118 ms; asked for backwards (the order
 * the decoder reads them in) 143 ms, as the hardware prefetchers take over
 * an ascending run of lines.
 */
static inline void
gj_page_prefetch_tuples(const uint8_t *page, uint32_t page_size)
{
	uint32_t	upper = gj_page_load16(page + GJ_PAGE_PD_UPPER_OFF);
	uint32_t	line;

	if (upper > page_size)
		return;
#ifdef __GNUC__
	for (line = upper & ~63u; line < page_size; line += 64)
		__builtin_prefetch(page + line);
#else
	(void) line;
#endif
}
#endif

/*
 * Rows 0 .. n - 1 of the tuples whose data starts at data_offs[] (0: not on
 * the fixed path, overwritten later), every needed attribute at its fixed
 * offset: a loop per column and width, one load per value.  Each column's
 * fixed_off is aligned to its width (checked by the caller), and so is
 * every tuple's data, maximally aligned.
 */
GJ_HD void
gj_page_decode_fixed_rows(const uint8_t *page, uint64_t ref_base, const GjPageSpec *spec,
						  const uint32_t *data_offs, int n, const GjPageOutput *out)
{
	int			k,
				i;

	for (k = 0; k < spec->ncols; k++)
	{
		const GjPageColumn *col = &spec->cols[k];
		const uint8_t *base = page + col->fixed_off;
		uint64_t   *values = out->values[k];
		bool	   *isnull = out->isnull[k];

		if (!col->byval)
			for (i = 0; i < n; i++)
				values[i] = ref_base + data_offs[i] + (uint32_t) col->fixed_off;
		else if (col->attlen == 8)
			for (i = 0; i < n; i++)
				values[i] = *(const uint64_t *) (base + data_offs[i]);
		else if (col->attlen == 4)
			for (i = 0; i < n; i++)
				values[i] = (uint64_t) (int64_t) *(const int32_t *) (base + data_offs[i]);
		else
			for (i = 0; i < n; i++)
				values[i] = gj_page_fetch_byval(base + data_offs[i], col->attlen);
		for (i = 0; i < n; i++)
			isnull[i] = false;
	}
}

/*
 * Decode a page's tuples into rows 0, 1, ...: those at the nitems offsets of
 * lineoffs (a line pointer there that is not LP_NORMAL is flagged for the
 * host), or, with nitems GJ_PAGE_ALL_NORMAL, every LP_NORMAL line pointer of
 * the page in order (out->lineoffs gets their offsets).  Returns the rows
 * written; *nhost says how many of them are flagged.
 *
 * The host's loop: where every needed attribute has a fixed offset, it
 * first finds each tuple, then reads the tuples on the fixed path a column
 * at a time (gj_page_decode_fixed_rows), then decodes the others one at a
 * time.  A device kernel would rather run gj_page_decode_tuple a thread
 * per line pointer.
 */
GJ_HD int
gj_page_decode(const uint8_t *page, uint64_t ref_base, const GjPageSpec *spec,
			   const uint16_t *lineoffs, int nitems, const GjPageOutput *out, int *nhost)
{
	/* in locals: a store through a uint8_t pointer may alias anything */
	const uint32_t page_size = spec->page_size;
	const uint32_t walk_natts = (uint32_t) spec->walk_natts;
	const uint32_t fixed_end = spec->fixed_end;
	uint8_t    *host = out->host;
	uint32_t   *data_offs = out->data_offs;
	uint16_t   *row_lineoffs = out->lineoffs;
	const int	nlp = gj_page_item_count(page, page_size);
	const bool	all_normal = nitems == GJ_PAGE_ALL_NORMAL;
	bool		batch = spec->all_fixed && fixed_end <= page_size;
	int			nrows = 0;
	int			flagged = 0;
	int			nfixed = 0;
	int			i,
				k;

	/* by-value columns at offsets aligned to their width (a type could do otherwise) */
	for (k = 0; batch && k < spec->ncols; k++)
		batch = !spec->cols[k].byval ||
			(spec->cols[k].fixed_off & (spec->cols[k].attlen - 1)) == 0;

	if (all_normal)
		nitems = nlp;
	for (i = 0; i < nitems; i++)
	{
		int			lineoff = all_normal ? i + 1 : lineoffs[i];
		GjPageTuple t = {0, 0, 0, 0, false};
		int			found;

		/* on the batch path only find the tuple; else decode it now */
		if (batch)
			found = gj_page_find_tuple(page, page_size, nlp, lineoff, &t);
		else
			found = gj_page_decode_tuple(page, ref_base, spec, nlp, lineoff, out,
										 (uint32_t) nrows);
		if (found == GJ_PAGE_NOT_NORMAL && all_normal)
			continue;
		if (all_normal)
			row_lineoffs[nrows] = (uint16_t) lineoff;
		if (!batch)
		{
			host[nrows] = found != GJ_PAGE_ROW;
			flagged += found != GJ_PAGE_ROW;
		}
		else if (found == GJ_PAGE_ROW && !t.hasnull && t.natts >= walk_natts &&
				 fixed_end <= t.data_len)
		{
			/* gj_page_tuple_fixed */
			data_offs[nrows] = t.data_off;
			host[nrows] = 0;
			nfixed++;
		}
		else
			data_offs[nrows] = 0;	/* decoded one at a time below */
		nrows++;
	}
	if (!batch)
	{
		*nhost = flagged;
		return nrows;
	}

	if (nfixed > 0)
		gj_page_decode_fixed_rows(page, ref_base, spec, data_offs, nrows, out);
	for (i = 0; nfixed < nrows && i < nrows; i++)
	{
		if (data_offs[i] == 0 &&
			gj_page_decode_tuple(page, ref_base, spec, nlp,
								 all_normal ? row_lineoffs[i] : lineoffs[i], out,
								 (uint32_t) i) != GJ_PAGE_ROW)
		{
			host[i] = 1;
			flagged++;
		}
	}
	*nhost = flagged;
	return nrows;
}

#endif							/* GPUJOIN_GJ_PAGE_DECODE_H */
