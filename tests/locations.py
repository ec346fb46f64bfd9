"""Where the tests find the repository and their data, from any test folder."""

from pathlib import Path

#: the tests' own folder
TESTS = Path(__file__).resolve().parent
#: the repository's root
ROOT = TESTS.parent
#: the tests' data files
DATA = TESTS / "data"
