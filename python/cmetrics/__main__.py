"""``python -m cmetrics`` runs the command line."""

import sys

from cmetrics.cli import main

sys.exit(main())
