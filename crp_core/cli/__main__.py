"""``python -m crp_core.cli``."""

import sys

from crp_core.cli import main

sys.exit(main())
