"""Writes <version>/<dump>/expected.json: what NumPy and Python's csv module read from the dump's
files, the independent answers DumpLens's tests check against. Usage: python expected.py <version dir>"""
import csv
import json
import math
import os
import sys

import numpy as np


def finite_or_none(v):
    return None if v is None or not math.isfinite(v) else float(v)


def tensor_facts(path):
    a = np.load(path)
    f = a.astype(np.float64).ravel()
    fin = f[np.isfinite(f)]
    return {
        "dtype": str(a.dtype),
        "shape": list(a.shape),
        "count": int(f.size),
        "nan": int(np.isnan(f).sum()),
        "pos_inf": int(np.isposinf(f).sum()),
        "neg_inf": int(np.isneginf(f).sum()),
        "finite_min": finite_or_none(fin.min()) if fin.size else None,
        "finite_max": finite_or_none(fin.max()) if fin.size else None,
        "finite_mean": finite_or_none(fin.mean()) if fin.size else None,
        # Over every element: inf as soon as one element is +-inf (what statistic.csv 2.3+ says).
        "l2_all": "inf" if np.isinf(f).any() else (None if np.isnan(f).any() else float(np.sqrt((f * f).sum()))),
        "max_abs_finite": float(np.abs(fin).max()) if fin.size else None,
    }


def split_name(fname):
    """op_type, op_name, task, stream, timestamp, io, slot, format, dtype-or-None (8 or 9 fields)."""
    parts = fname[:-len(".npy")].split(".")
    nine = parts[-4] in ("input", "output")
    io_at = len(parts) - (4 if nine else 3)
    return {
        "op_type": parts[0],
        "op_name": ".".join(parts[1:io_at - 3]),
        "timestamp": int(parts[io_at - 1]),
        "io": parts[io_at],
        "slot": int(parts[io_at + 1]),
        "format": parts[io_at + 2],
        "name_dtype": parts[-1] if nine else None,
    }


def one_dump(root):
    tensors, constants, stats, exec_order, graphs, metadata = [], [], [], {}, [], {}
    for d, _, files in os.walk(root):
        for fn in sorted(files):
            p = os.path.join(d, fn)
            rel = os.path.relpath(p, root)
            parts = rel.split(os.sep)
            if fn.endswith(".npy"):
                e = {"path": rel, **split_name(fn), **tensor_facts(p)}
                if "constants" in parts:
                    constants.append(e)
                else:
                    # rank_0/<net>/<graph>/<iteration>/<file>
                    e["graph"] = int(parts[-3])
                    e["iteration"] = int(parts[-2])
                    tensors.append(e)
            elif fn == "statistic.csv":
                with open(p, newline="") as fh:
                    rows = list(csv.reader(fh))
                header = rows[0]
                for r in rows[1:]:
                    stats.append({"path": rel, **{h: r[i] for i, h in enumerate(header) if i < len(r)},
                                  "fields": len(r)})
            elif parts[-2:-1] == ["execution_order"]:
                with open(p) as fh:
                    exec_order[fn] = [ln.rstrip("\n") for ln in fh if ln.strip()]
            elif parts[-2:-1] == ["graphs"]:
                graphs.append(rel)
            elif parts[-2:-1] == [".dump_metadata"]:
                with open(p) as fh:
                    metadata[fn] = json.load(fh) if fn.endswith(".json") else fh.read()
    tensors.sort(key=lambda e: (e["iteration"], e["timestamp"], e["path"]))
    first = next((e for e in tensors if e["io"] == "output" and (e["nan"] or e["pos_inf"] or e["neg_inf"])), None)
    return {
        "tensor_files": len(tensors),
        "constant_files": len(constants),
        "tensors": tensors,
        "constants": constants,
        "statistic_rows": stats,
        "execution_order": exec_order,
        "graph_files": sorted(graphs),
        "dump_metadata": metadata,
        "iterations": sorted({e["iteration"] for e in tensors}),
        "first_nonfinite_output": None if first is None else
            {k: first[k] for k in ("path", "op_type", "op_name", "iteration", "slot", "dtype")},
    }


def main():
    vdir = sys.argv[1]
    for name in sorted(os.listdir(vdir)):
        root = os.path.join(vdir, name)
        if os.path.isdir(root):
            with open(os.path.join(root, "expected.json"), "w") as fh:
                json.dump(one_dump(root), fh, indent=1, sort_keys=True)
                fh.write("\n")


if __name__ == "__main__":
    main()
