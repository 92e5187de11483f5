#!/usr/bin/env python3
"""Straightforward NumPy statistics over a folder of .npy files: the baseline DumpLens'
statistics engine is compared with (bench/bench_npy_folder.cpp computes the same figures).

Usage: numpy_stats_baseline.py FOLDER [--repeat N]
Per file: np.load, then over finite values min/max/mean/L2/maxAbs, counts of NaN, +Inf, -Inf,
zero, <0, >0, |x|>=65504, 0<|x|<2^-14, and a log2 histogram via np.frexp. Prints files/s, GB/s.
"""
import argparse
import os
import sys
import time

import numpy as np


def file_stats(path):
    a = np.load(path, mmap_mode=None, allow_pickle=False)
    x = a.astype(np.float64, copy=False).ravel()
    nan = np.isnan(x)
    posinf = np.isposinf(x)
    neginf = np.isneginf(x)
    finite = x[np.isfinite(x)]
    out = {
        "count": x.size,
        "nan": int(nan.sum()),
        "posinf": int(posinf.sum()),
        "neginf": int(neginf.sum()),
        "zero": int((finite == 0).sum()),
        "neg": int((x < 0).sum()),
        "pos": int((x > 0).sum()),
        "sat": int((np.abs(finite) >= 65504).sum()),
        "tiny": int(((finite != 0) & (np.abs(finite) < 2.0 ** -14)).sum()),
        "l2": float(np.linalg.norm(finite)),
    }
    if finite.size:
        out.update(min=float(finite.min()), max=float(finite.max()), mean=float(finite.mean()),
                   maxabs=float(np.abs(finite).max()))
    nz = finite[finite != 0]
    _, e = np.frexp(nz)
    out["hist"] = np.bincount(e - e.min(), minlength=1) if nz.size else np.zeros(0, np.int64)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    files = sorted(os.path.join(args.folder, f) for f in os.listdir(args.folder) if f.endswith(".npy"))
    if not files:
        sys.exit("no .npy files in " + args.folder)
    total = sum(os.path.getsize(f) for f in files)
    best = None
    for _ in range(args.repeat):  # first pass warms the page cache; report the best
        t0 = time.perf_counter()
        for f in files:
            file_stats(f)
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    print(f"{len(files)} files, {total / 1e9:.3f} GB: {best:.3f} s, "
          f"{len(files) / best:.1f} files/s, {total / best / 1e9:.3f} GB/s")


if __name__ == "__main__":
    main()
