import sys

from warehouse.cli import main

sys.exit(main())
