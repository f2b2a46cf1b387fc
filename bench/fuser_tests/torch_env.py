"""What the fuser-test scripts need before importing PyTorch's test helpers, and the table's encoding.

torch.testing._internal.common_utils imports expecttest, which Debian's PyTorch does not depend on: only its
names are needed, so a stand-in is installed when it is missing. encode and flatten are tests/data/gen's
(audit.py), so every table has one format.
"""
import os
import sys
import types
import unittest

if "expecttest" not in sys.modules:
    try:
        import expecttest  # noqa: F401
    except ImportError:
        stub = types.ModuleType("expecttest")
        stub.ACCEPT = False
        stub.TestCase = unittest.TestCase
        sys.modules["expecttest"] = stub

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "data", "gen"))
from audit import encode, flatten  # noqa: E402,F401
