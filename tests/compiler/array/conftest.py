import os
import sys

# (the tests of this package share array_cases.py)
sys.path.insert(0, os.path.dirname(__file__))
