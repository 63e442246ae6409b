/*-------------------------------------------------------------------------
 *
 * cpu_page_decode.c
 *	  The host's counterpart of the cuda backend's page decoder
 *	  (../cuda/cuda_page_decode.cu): batches of raw heap pages decoded by
 *	  ../shared/gj_page_decode.h into columns that grow batch by batch,
 *	  every LP_NORMAL tuple of every page, with the same calls and the same
 *	  results, row for row, flag for flag, flagged list for flagged list.
 *
 * It is what the cpu backend will run where the cuda backend decodes pages
 * on the device (the next step, which cuda_page_decode.cu's header comment
 * describes), so that CI runs the path; today kernel_test checks it, and
 * the device's decoder, against gj_page_decode page by page.  A batch is
 * decoded when it is appended; the wait hands back its result.  It calls
 * gj_page_decode_tuple a line pointer at a time, as the device does, not
 * gj_page_decode's loop for the host (which the heap reader uses), so
 * that the two paths check each other.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"
#include "kernels/shared/gj_page_decode.h"

/* Batches a caller may have appended and not waited for, as on the device. */
#define CPU_PAGE_SLOTS		2

/* One batch decoded and not waited for. */
typedef struct CpuPageSlot
{
	bool		in_flight;
	int64_t		first_row;
	int64_t		nrows;
	bool		overflow;		/* more rows than the caller's bound */
	GjPageFlagged *flagged;
	int64_t		nflagged;
	int64_t		flagged_cap;
} CpuPageSlot;

struct GjCpuPageColumns
{
	GjPageSpec	spec;			/* attrs and cols: copies of the caller's */
	GjPageAttr *attrs;
	GjPageColumn *cols;
	bool		failed;

	/* the columns: rows [0, nrows) are the batches waited for */
	uint64_t  **values;
	bool	  **isnull;
	uint8_t    *host;
	int64_t		capacity;
	int64_t		decoded;		/* rows of the batches appended */
	int64_t		nrows;

	CpuPageSlot slots[CPU_PAGE_SLOTS];
	int64_t		appended;
	int64_t		waited;
};

static bool
cpu_page_fail(GjError *err, int code, const char *message)
{
	if (err != NULL)
	{
		err->code = code;
		snprintf(err->message, sizeof(err->message), "%s", message);
	}
	return false;
}

/* Grow the columns to hold need rows. */
static bool
cpu_page_grow(GjCpuPageColumns *pc, int64_t need, GjError *err)
{
	int64_t		cap;
	int			k;

	if (need <= pc->capacity)
		return true;
	cap = gj_min64(gj_max64(need, 2 * pc->capacity), GJ_MAX_SIDE_ROWS);
	for (k = 0; k < pc->spec.ncols; k++)
	{
		uint64_t   *values = realloc(pc->values[k], sizeof(uint64_t) * cap);
		bool	   *isnull;

		if (values == NULL)
			return cpu_page_fail(err, GJ_ERR_OUT_OF_MEMORY, "out of memory");
		pc->values[k] = values;
		isnull = realloc(pc->isnull[k], sizeof(bool) * cap);
		if (isnull == NULL)
			return cpu_page_fail(err, GJ_ERR_OUT_OF_MEMORY, "out of memory");
		pc->isnull[k] = isnull;
	}
	{
		uint8_t    *host = realloc(pc->host, cap);

		if (host == NULL)
			return cpu_page_fail(err, GJ_ERR_OUT_OF_MEMORY, "out of memory");
		pc->host = host;
	}
	pc->capacity = cap;
	return true;
}

/*
 * A decoder of pages by spec, its columns room for rows_hint rows to begin
 * with; NULL with *err set.
 */
GjCpuPageColumns *
gj_cpu_page_columns_begin(const GjPageSpec *spec, int64_t rows_hint, GjError *err)
{
	GjCpuPageColumns *pc = calloc(1, sizeof(GjCpuPageColumns));

	if (pc == NULL)
	{
		cpu_page_fail(err, GJ_ERR_OUT_OF_MEMORY, "out of memory");
		return NULL;
	}
	pc->spec = *spec;
	pc->attrs = malloc(sizeof(GjPageAttr) * gj_max64(spec->walk_natts, 1));
	pc->cols = malloc(sizeof(GjPageColumn) * gj_max64(spec->ncols, 1));
	pc->values = calloc(gj_max64(spec->ncols, 1), sizeof(uint64_t *));
	pc->isnull = calloc(gj_max64(spec->ncols, 1), sizeof(bool *));
	if (pc->attrs == NULL || pc->cols == NULL || pc->values == NULL || pc->isnull == NULL)
	{
		gj_cpu_page_columns_end(pc);
		cpu_page_fail(err, GJ_ERR_OUT_OF_MEMORY, "out of memory");
		return NULL;
	}
	memcpy(pc->attrs, spec->attrs, sizeof(GjPageAttr) * spec->walk_natts);
	memcpy(pc->cols, spec->cols, sizeof(GjPageColumn) * spec->ncols);
	pc->spec.attrs = pc->attrs;
	pc->spec.cols = pc->cols;
	if (!cpu_page_grow(pc, gj_max64(rows_hint, 1), err))
	{
		gj_cpu_page_columns_end(pc);
		return NULL;
	}
	return pc;
}

/* Add a flagged row to the slot's list. */
static bool
cpu_page_flag(CpuPageSlot *slot, int64_t row, int page, int lineoff, GjError *err)
{
	if (slot->nflagged == slot->flagged_cap)
	{
		int64_t		cap = gj_max64(64, 2 * slot->flagged_cap);
		GjPageFlagged *flagged = realloc(slot->flagged, sizeof(GjPageFlagged) * cap);

		if (flagged == NULL)
			return cpu_page_fail(err, GJ_ERR_OUT_OF_MEMORY, "out of memory");
		slot->flagged = flagged;
		slot->flagged_cap = cap;
	}
	slot->flagged[slot->nflagged].row = row;
	slot->flagged[slot->nflagged].page = page;
	slot->flagged[slot->nflagged].lineoff = lineoff;
	slot->nflagged++;
	return true;
}

/*
 * Decode a batch of npages raw pages at pages, whose line pointers number
 * rows_bound at most (-1: count them here), after the rows of the batches
 * before: every LP_NORMAL line pointer in page and line pointer order, a
 * by-reference value at its page's offset in the batch.  As on the device,
 * at most two batches wait to be waited for, and a batch with more rows
 * than its bound is an error at its wait.
 */
bool
gj_cpu_page_columns_append(GjCpuPageColumns *pc, const uint8_t *pages, int64_t npages,
						   int64_t rows_bound, GjError *err)
{
	CpuPageSlot *slot = &pc->slots[pc->appended % CPU_PAGE_SLOTS];
	const uint32_t page_size = pc->spec.page_size;
	GjPageOutput out;
	int64_t		row = pc->decoded;
	int64_t		end;
	int64_t		p;

	if (pc->failed)
		return cpu_page_fail(err, GJ_ERR_DEVICE, "the page decoder failed before");
	if (slot->in_flight)
		return cpu_page_fail(err, GJ_ERR_DEVICE, "two batches of pages are in flight already");
	if (rows_bound < 0)
	{
		rows_bound = 0;
		for (p = 0; p < npages; p++)
			rows_bound += gj_page_item_count(pages + p * page_size, page_size);
	}
	if (pc->decoded + rows_bound > GJ_MAX_SIDE_ROWS)
		return cpu_page_fail(err, GJ_ERR_OVER_BUDGET, "too many rows of pages for one side");
	if (!cpu_page_grow(pc, pc->decoded + rows_bound, err))
	{
		pc->failed = true;
		return false;
	}
	end = pc->decoded + rows_bound;

	out.values = pc->values;
	out.isnull = pc->isnull;
	out.host = pc->host;
	out.lineoffs = NULL;
	out.data_offs = NULL;
	slot->first_row = pc->decoded;
	slot->nflagged = 0;
	slot->overflow = false;
	for (p = 0; p < npages && !slot->overflow; p++)
	{
		const uint8_t *page = pages + p * page_size;
		int			nlp = gj_page_item_count(page, page_size);
		int			lineoff;

		for (lineoff = 1; lineoff <= nlp; lineoff++)
		{
			if (!gj_page_lp_is_normal(gj_page_lp(page, lineoff)))
				continue;
			if (row >= end)
			{
				slot->overflow = true;
				break;
			}
			if (gj_page_decode_tuple(page, (uint64_t) p * page_size, &pc->spec, nlp, lineoff,
									 &out, (uint32_t) row) == GJ_PAGE_HOST &&
				!cpu_page_flag(slot, row, (int) p, lineoff, err))
			{
				pc->failed = true;
				return false;
			}
			row++;
		}
	}
	slot->nrows = row - pc->decoded;
	slot->in_flight = true;
	pc->decoded = row;
	pc->appended++;
	return true;
}

/*
 * The oldest batch appended and not waited for: its rows and its flagged
 * rows, ascending, in batch->flagged until the next wait.
 */
bool
gj_cpu_page_columns_wait(GjCpuPageColumns *pc, GjPageBatch *batch, GjError *err)
{
	CpuPageSlot *slot = &pc->slots[pc->waited % CPU_PAGE_SLOTS];

	memset(batch, 0, sizeof(GjPageBatch));
	if (pc->failed)
		return cpu_page_fail(err, GJ_ERR_DEVICE, "the page decoder failed before");
	if (!slot->in_flight)
		return cpu_page_fail(err, GJ_ERR_DEVICE, "no batch of pages in flight");
	slot->in_flight = false;
	pc->waited++;
	if (slot->overflow)
	{
		pc->failed = true;
		return cpu_page_fail(err, GJ_ERR_DEVICE, "a batch of pages had more rows than its bound");
	}
	batch->first_row = slot->first_row;
	batch->nrows = slot->nrows;
	batch->nflagged = slot->nflagged;
	batch->flagged = slot->flagged;
	pc->nrows = slot->first_row + slot->nrows;
	return true;
}

/* Rows of the batches waited for, and column k of them. */
int64_t
gj_cpu_page_columns_rows(const GjCpuPageColumns *pc)
{
	return pc->nrows;
}

void
gj_cpu_page_columns_column(const GjCpuPageColumns *pc, int k, const uint64_t **values,
						   const bool **isnull, const uint8_t **host)
{
	*values = pc->values[k];
	*isnull = pc->isnull[k];
	*host = pc->host;
}

void
gj_cpu_page_columns_end(GjCpuPageColumns *pc)
{
	int			k;

	if (pc == NULL)
		return;
	for (k = 0; pc->values != NULL && k < pc->spec.ncols; k++)
		free(pc->values[k]);
	for (k = 0; pc->isnull != NULL && k < pc->spec.ncols; k++)
		free(pc->isnull[k]);
	for (k = 0; k < CPU_PAGE_SLOTS; k++)
		free(pc->slots[k].flagged);
	free(pc->values);
	free(pc->isnull);
	free(pc->host);
	free(pc->attrs);
	free(pc->cols);
	free(pc);
}
