"""Counting: tokens by the documented formula (tokens.py), long texts in pieces and in parallel
(pieces.py), the offline encodings (encodings.py), image estimates (images.py), context windows
and the 0.8 / 0.1 ratios (windows.py), and the persistent count cache (cache.py, its fixed-size
table: table.py; counts of joined texts: join.py).
"""
