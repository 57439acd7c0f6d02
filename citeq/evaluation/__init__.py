"""The verdict-quality harness (`harness`: the labelled corpus through the real pipeline) and the
measure of how far lexical evidence separates the offline judge's uncertain pool (`uncertain_pool`).
The command lines are thin: scripts/eval_verdicts.py and scripts/uncertain_pool.py."""
