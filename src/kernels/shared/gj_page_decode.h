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
 * What the cuda page path needs next (issue 36):
 *	- staging: a block range copied as raw pages into pinned memory, each
 *	  page pinned and under its share lock while its bytes are copied (as
 *	  heapgetpage reads it); a page where PageIsAllVisible(page) &&
 *	  !snapshot->takenDuringRecovery (heapgetpage's all_visible rule) can be
 *	  decoded on the device with GJ_PAGE_ALL_NORMAL and no per-tuple check;
 *	  any other page is decoded on the host after heapgetpage as now (its
 *	  visible offsets could also be staged with it, as a list); a scan with
 *	  quals keeps the host path until the quals run on the device;
 *	- a kernel: one thread per (page, line pointer), calling
 *	  gj_page_decode_tuple with ref_base 0 (by-reference attributes are not
 *	  kept on the device; keys of such types are hashed on the host today),
 *	  then a compaction of the decoded rows (a CUB select over the
 *	  GJ_PAGE_ROW results) into the device key columns; the flagged rows'
 *	  line pointers come back to the host, which deforms them;
 *	- where the columns land: the key columns of the input's HostSideBuffer
 *	  (host_buffers.h) are what side_drain.c hands the backend today; the
 *	  decoded columns would be device key columns the backend interface
 *	  (kernels/backend.h) takes in place of the copied host ones, with the
 *	  host buffer keeping only the returned columns.
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
} GjPageOutput;

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
 * Decode the tuple at line pointer lineoff (from 1) into row `row` of out:
 * GJ_PAGE_ROW, GJ_PAGE_HOST (host[row] set, the values unset), or
 * GJ_PAGE_NOT_NORMAL (nothing written).  ref_base + a value's offset in
 * the page is what a by-reference attribute gets.
 */
GJ_HD int
gj_page_decode_tuple(const uint8_t *page, uint64_t ref_base, const GjPageSpec *spec,
					 int lineoff, const GjPageOutput *out, uint32_t row)
{
	uint32_t	lp;
	uint32_t	lp_off,
				lp_len,
				natts,
				infomask,
				hoff,
				data_off,
				data_len;
	const uint8_t *tup;
	const uint8_t *data;
	bool		hasnull;
	int			k;

	if (lineoff < 1 || lineoff > gj_page_item_count(page, spec->page_size))
		goto host;
	lp = gj_page_load32(page + GJ_PAGE_HEADER_SIZE + (lineoff - 1) * GJ_ITEMID_SIZE);
	if (((lp >> 15) & 0x03) != GJ_LP_NORMAL)
		return GJ_PAGE_NOT_NORMAL;
	lp_off = lp & 0x7FFF;
	lp_len = lp >> 17;

	/* the tuple and its header, where and as PostgreSQL lays them out */
	if (lp_off % GJ_MAXALIGN != 0 || lp_len < GJ_TUPLE_BITS_OFF ||
		lp_off + lp_len > spec->page_size)
		goto host;
	tup = page + lp_off;
	natts = gj_page_load16(tup + GJ_TUPLE_INFOMASK2_OFF) & GJ_HEAP_NATTS_MASK;
	infomask = gj_page_load16(tup + GJ_TUPLE_INFOMASK_OFF);
	hoff = tup[GJ_TUPLE_HOFF_OFF];
	hasnull = (infomask & GJ_HEAP_HASNULL) != 0;
	if (hoff % GJ_MAXALIGN != 0 || hoff > lp_len ||
		hoff < GJ_TUPLE_BITS_OFF + (hasnull ? (natts + 7) / 8 : 0))
		goto host;
	data_off = lp_off + hoff;
	data = page + data_off;
	data_len = lp_len - hoff;

	/* no NULLs, long enough, every needed attribute at its fixed offset */
	if (spec->all_fixed && !hasnull && natts >= (uint32_t) spec->walk_natts)
	{
		if (spec->fixed_end > data_len)
			goto host;
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
		const uint8_t *bits = tup + GJ_TUPLE_BITS_OFF;
		uint32_t	walk = natts < (uint32_t) spec->walk_natts ? natts : (uint32_t) spec->walk_natts;
		uint32_t	off = 0;
		uint32_t	attno;

		k = 0;
		for (attno = 1; attno <= walk; attno++)
		{
			const GjPageAttr *att = &spec->attrs[attno - 1];
			uint32_t	size;

			if (hasnull && (bits[(attno - 1) >> 3] & (1 << ((attno - 1) & 0x07))) == 0)
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

/*
 * Decode a page's tuples into rows 0, 1, ...: those at the nitems offsets of
 * lineoffs (a line pointer there that is not LP_NORMAL is flagged for the
 * host), or, with nitems GJ_PAGE_ALL_NORMAL, every LP_NORMAL line pointer of
 * the page in order (out->lineoffs gets their offsets).  Returns the rows
 * written; *nhost says how many of them are flagged.  The host's loop; a
 * device kernel would run gj_page_decode_tuple a thread per line pointer.
 */
GJ_HD int
gj_page_decode(const uint8_t *page, uint64_t ref_base, const GjPageSpec *spec,
			   const uint16_t *lineoffs, int nitems, const GjPageOutput *out, int *nhost)
{
	int			nrows = 0;
	int			flagged = 0;
	int			i;

	if (nitems == GJ_PAGE_ALL_NORMAL)
	{
		int			nlp = gj_page_item_count(page, spec->page_size);

		for (i = 1; i <= nlp; i++)
		{
			int			r = gj_page_decode_tuple(page, ref_base, spec, i, out, (uint32_t) nrows);

			if (r == GJ_PAGE_NOT_NORMAL)
				continue;
			flagged += r == GJ_PAGE_HOST;
			out->lineoffs[nrows++] = (uint16_t) i;
		}
	}
	else
	{
		for (i = 0; i < nitems; i++)
		{
			int			r = gj_page_decode_tuple(page, ref_base, spec, lineoffs[i], out,
												 (uint32_t) nrows);

			if (r == GJ_PAGE_NOT_NORMAL)
			{
				out->host[nrows] = 1;
				r = GJ_PAGE_HOST;
			}
			flagged += r == GJ_PAGE_HOST;
			nrows++;
		}
	}
	*nhost = flagged;
	return nrows;
}

#endif							/* GPUJOIN_GJ_PAGE_DECODE_H */
