"""A small Dramatiq application of message groups, and the checks of what its messages
recorded: what scripts/bench_groups.py and scripts/chaos_groups.py run, and the e2e tests of
groups with them (tests/e2e/test_groups_processes.py)."""
