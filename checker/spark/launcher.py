"""The script ``spark-submit`` runs for a scan (it takes a Python file, not a module):

    spark-submit --master URL --py-files tomkit-0.1.0-py3-none-any.whl \
        "$(tomkit scan --launcher)" DIR --out OUT [tomkit scan's options]

Run as a script, Python puts this file's folder first on ``sys.path``, where the scan's
own modules (``read``, ``report``, ``session`` ...) would shadow top-level modules of the
same names; so it takes that entry out before importing anything else.
"""

import os
import sys

if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]

from tomkit.checker.spark.job import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
