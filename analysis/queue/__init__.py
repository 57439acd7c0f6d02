"""The per-user job queue: admission, the jobs' states, credits, held runs, the sweeps."""
