#!/usr/bin/env python3
"""Writes two msprobe statistics captures (OUT/a/step0/rank0/dump.json, OUT/b/...) of N entries
(one input and one output tensor each, with md5) for timing `dumplens-cli compare` on large
statistics dumps. Run B's figures move by one bf16 rounding from entry N/2 on, and its output
turns inf at entry 3N/4 (not with "noinf": msprobe_dump.cpp's NaN/Infinity rewriting is
quadratic in the number of tokens when only one kind occurs). Usage:
make_msprobe_stats_pair.py OUT [N=100000] [noinf]"""
import json, math, os, sys, zlib

out = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
with_inf = not (len(sys.argv) > 3 and sys.argv[3] == "noinf")


def tensor(mx, mn, mean, norm, crc):
    return {"type": "torch.Tensor", "dtype": "torch.float16", "shape": [8, 48, 48], "Max": mx, "Min": mn,
            "Mean": mean, "Norm": norm, "requires_grad": False, "md5": f"{crc:08x}"}


for run in ("a", "b"):
    data = {}
    for k in range(n):
        mx, mn, mean, norm = 1.5 + k % 97, -0.5 - k % 13, 0.01 * (k % 7), 10.0 + k % 31
        omx = mx * 2
        if run == "b" and k >= n // 2:
            mx *= 1 + 2 ** -8
            omx *= 1 + 2 ** -8
        if with_inf and run == "b" and k >= 3 * n // 4:
            omx = math.inf
        crc_in = zlib.crc32(repr((k, mx, run == "b" and k >= n // 2)).encode())
        name = f"Functional.linear.{k}.{'forward' if k < n // 2 else 'backward'}"
        data[name] = {"input_args": [tensor(mx, mn, mean, norm, crc_in)], "input_kwargs": {},
                      "output": [tensor(omx, mn, mean, norm * 2, zlib.crc32(repr((k, omx)).encode()))]}
    d = os.path.join(out, run, "step0", "rank0")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "dump.json"), "w") as f:
        json.dump({"task": "statistics", "level": "L1", "framework": "pytorch", "dump_data_dir": None, "data": data},
                  f, indent=1)
