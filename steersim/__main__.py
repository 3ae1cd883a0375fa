"""`python -m steersim` runs the command line, as the `steersim` script does."""

import sys

from steersim.cli import main

sys.exit(main())
