/* gpujoin--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION gpujoin" to load this file. \quit

-- What this backend process can run GpuJoin on, and which backend
-- gpujoin.device selects now.  Calling it opens CUDA in this backend.
CREATE FUNCTION gpujoin_devices(
    OUT backend text,
    OUT name text,
    OUT total_memory bigint,
    OUT free_memory bigint,
    OUT sm_count integer,
    OUT compute_capability text,
    OUT selected boolean,
    OUT status text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpujoin_devices'
LANGUAGE C VOLATILE STRICT;
