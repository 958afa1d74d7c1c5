import sys

from ingestion.cli import main

sys.exit(main())
