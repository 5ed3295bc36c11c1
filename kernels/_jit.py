"""The two compilation modes used by refvi.kernels.

``jit``: ``numba.njit(cache=True, error_model="numpy")`` -- IEEE semantics for float division (no Python
ZeroDivisionError check, which would block SIMD vectorization); inputs are validated before any kernel runs.
``jit_reduce``: the same plus ``fastmath={"reassoc", "contract"}`` so dot products and sums vectorize.  Only
re-association and FMA contraction are allowed (no assumption that values are finite), and the tests in
``tests/kernels/test_kernels_estimators.py`` show agreement with the NumPy reference at rtol 1e-12.
"""

import numba

jit = numba.njit(cache=True, error_model="numpy")
jit_reduce = numba.njit(cache=True, error_model="numpy", fastmath={"reassoc", "contract"})
jit_nocache = numba.njit(error_model="numpy")  # for kernels that take a user's dispatcher as an argument
