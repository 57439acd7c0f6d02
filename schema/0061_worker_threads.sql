-- How many worker threads a worker process runs (Dramatiq's --threads), written with each
-- heartbeat: the operator view counts its busy threads (the messages it holds) against it
-- and shows the rest idle. NULL: the process did not say (it consumes outside a Dramatiq
-- Worker, or its broker was built without the WorkerThreads middleware).
ALTER TABLE citeq_workers ADD COLUMN threads integer CHECK (threads >= 0);
