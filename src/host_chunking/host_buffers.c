/*-------------------------------------------------------------------------
 *
 * host_buffers.c
 *	  Drains one join input into host memory: each tuple is copied once as a
 *	  MinimalTuple into large arena blocks (the executor forms result tuples
 *	  from them), and the key columns the device program reads are extracted
 *	  into typed arrays, structure-of-arrays, ready to copy to the device.
 *
 * All memory belongs to the buffer's own context, so a rescan or the end of
 * the query frees it in one step, on success and on ERROR alike.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/date.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "host_chunking/host_buffers.h"
#include "kernels/backend.h"

/* Tuples are copied into blocks of this size (bigger tuples get their own). */
#define ARENA_BLOCK_SIZE	((Size) 1024 * 1024)
#define INITIAL_ROWS		1024

void
host_buffer_init(HostSideBuffer *buf, MemoryContext parent, const char *name,
				 List *key_attnos, List *key_types)
{
	ListCell   *la,
			   *lt;

	memset(buf, 0, sizeof(HostSideBuffer));
	buf->cxt = AllocSetContextCreate(parent, "GpuJoin rows", ALLOCSET_DEFAULT_SIZES);
	MemoryContextSetIdentifier(buf->cxt, name);
	forboth(la, key_attnos, lt, key_types)
	{
		HostKeyColumn *key = &buf->keys[buf->nkeys++];

		key->attno = lfirst_int(la);
		key->type = lfirst_int(lt);
		buf->max_key_attno = Max(buf->max_key_attno, key->attno);
	}
}

void
host_buffer_reset(HostSideBuffer *buf)
{
	int			i;

	MemoryContextReset(buf->cxt);
	buf->nrows = 0;
	buf->capacity = 0;
	buf->tuples = NULL;
	buf->arena_next = NULL;
	buf->arena_left = 0;
	buf->tuple_bytes = 0;
	buf->complete = false;
	for (i = 0; i < buf->nkeys; i++)
	{
		buf->keys[i].values = NULL;
		buf->keys[i].isnull = NULL;
	}
}

static void
host_buffer_grow(HostSideBuffer *buf)
{
	int64		newcap = buf->capacity == 0 ? INITIAL_ROWS : buf->capacity * 2;
	int			i;

	if (buf->capacity >= GJ_MAX_SIDE_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("GpuJoin input has more than %lld rows",
						(long long) GJ_MAX_SIDE_ROWS),
				 errhint("Set gpujoin.enabled to off for this query.")));
	newcap = Min(newcap, GJ_MAX_SIDE_ROWS);

	if (buf->tuples == NULL)
		buf->tuples = MemoryContextAllocHuge(buf->cxt, sizeof(MinimalTuple) * newcap);
	else
		buf->tuples = repalloc_huge(buf->tuples, sizeof(MinimalTuple) * newcap);

	for (i = 0; i < buf->nkeys; i++)
	{
		HostKeyColumn *key = &buf->keys[i];

		if (key->values == NULL)
			key->values = MemoryContextAllocHuge(buf->cxt, sizeof(int64) * newcap);
		else
			key->values = repalloc_huge(key->values, sizeof(int64) * newcap);
		if (key->isnull != NULL)
		{
			key->isnull = repalloc_huge(key->isnull, newcap);
			memset(key->isnull + buf->capacity, 0, newcap - buf->capacity);
		}
	}
	buf->capacity = newcap;
}

/* The 8-byte device representation of a non-NULL key datum. */
static inline int64
key_value(Datum d, int type)
{
	switch (type)
	{
		case GJT_BOOL:
			return DatumGetBool(d) ? 1 : 0;
		case GJT_INT2:
			return DatumGetInt16(d);
		case GJT_INT4:
			return DatumGetInt32(d);
		case GJT_DATE:
			return DatumGetDateADT(d);
		case GJT_FLOAT4:
			return gj_double_to_bits((double) DatumGetFloat4(d));
		case GJT_FLOAT8:
			return gj_double_to_bits(DatumGetFloat8(d));
		default:				/* int8, timestamp, timestamptz */
			return DatumGetInt64(d);
	}
}

void
host_buffer_append(HostSideBuffer *buf, TupleTableSlot *slot)
{
	bool		should_free;
	MinimalTuple mtup;
	Size		len;
	int64		row = buf->nrows;
	int			i;

	if (buf->nrows >= buf->capacity)
		host_buffer_grow(buf);

	/* copy the tuple into the arena */
	mtup = ExecFetchSlotMinimalTuple(slot, &should_free);
	len = MAXALIGN(mtup->t_len);
	if (len > buf->arena_left)
	{
		Size		block = Max(len, ARENA_BLOCK_SIZE);

		buf->arena_next = MemoryContextAllocHuge(buf->cxt, block);
		buf->arena_left = block;
	}
	memcpy(buf->arena_next, mtup, mtup->t_len);
	buf->tuples[row] = (MinimalTuple) buf->arena_next;
	buf->arena_next += len;
	buf->arena_left -= len;
	buf->tuple_bytes += len;
	if (should_free)
		pfree(mtup);

	/* extract the key columns */
	if (buf->nkeys > 0)
	{
		slot_getsomeattrs(slot, buf->max_key_attno);
		for (i = 0; i < buf->nkeys; i++)
		{
			HostKeyColumn *key = &buf->keys[i];

			if (slot->tts_isnull[key->attno - 1])
			{
				if (key->isnull == NULL)
					key->isnull = MemoryContextAllocZero(buf->cxt, buf->capacity);
				key->isnull[row] = 1;
				key->values[row] = 0;
			}
			else
				key->values[row] = key_value(slot->tts_values[key->attno - 1], key->type);
		}
	}
	buf->nrows++;
}

void
host_buffer_key_columns(const HostSideBuffer *buf, GjKeyColumns *out)
{
	int			i;

	memset(out, 0, sizeof(GjKeyColumns));
	out->ncols = buf->nkeys;
	for (i = 0; i < buf->nkeys; i++)
	{
		out->values[i] = buf->keys[i].values;
		out->isnull[i] = buf->keys[i].isnull;
	}
}

/* Bytes one row's key columns take on the device: value and null flag. */
int
host_buffer_key_row_bytes(const HostSideBuffer *buf)
{
	return buf->nkeys * (sizeof(int64) + 1);
}
