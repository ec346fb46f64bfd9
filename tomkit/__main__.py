import sys

from tomkit.cli import main

sys.exit(main())
