"""Building blocks with no CRP meaning, one home each: safe file reading and atomic writing, content
digests, the one-BLAS-thread guard, memoisation, immutable record helpers. The lowest layer of
``crp_core`` above ``errors``: nothing here imports any other part of the package."""
