"""Environment set-up done before sympy is imported anywhere in exactattn.

SYMPY_GROUND_TYPES is set explicitly (to "python" unless the user chose otherwise): with
python-flint installed, sympy's ground types decide whether sympy's own integers are flint
objects, which changes sympy internals and the types that leak out of sympy.  exactattn does
its fast exact work in python-flint directly and uses sympy only for symbolic proofs, where
the pure-Python ground types are predictable.  It has no effect if sympy was imported first.
"""

import os

os.environ.setdefault("SYMPY_GROUND_TYPES", "python")
