-- an equi-join in the GPU service (gpujoin.device = service) where the
-- cluster runs it, beside the joins in the backends: the service answers
-- the requests of many clients, each with its own rows
\set lo random(1, 15000)
SELECT set_config('gpujoin.device', 'service', false) WHERE current_setting('gpujoin.service') = 'on';
SELECT count(*), sum(ls.v) FROM lr JOIN ls ON lr.k = ls.k WHERE lr.id BETWEEN :lo AND :lo + 300;
RESET gpujoin.device;
