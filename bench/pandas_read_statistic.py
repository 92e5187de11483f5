#!/usr/bin/python3
"""What a user would run instead of DumpLens: pandas.read_csv of every statistic.csv under DIR.
Prints rows and seconds (the reference for bench_statistic_csv.sh)."""
import os
import sys
import time

import pandas as pd

t0 = time.perf_counter()
rows = 0
for top, _, files in os.walk(sys.argv[1]):
    if "statistic.csv" in files:
        rows += len(pd.read_csv(os.path.join(top, "statistic.csv"), index_col=False))
print("rows %d seconds %.3f" % (rows, time.perf_counter() - t0))
