"""How far lexical evidence can go on the claims the offline judge leaves `uncertain`.

The harness lives in citeq/evaluation/uncertain_pool.py; this is its command line.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from citeq.evaluation.uncertain_pool import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
