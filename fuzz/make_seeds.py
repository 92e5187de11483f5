#!/usr/bin/env python3
"""Writes the crafted seeds of fuzz/corpus/fuzz_torch_file and fuzz/corpus/fuzz_index_file.

They are the hostile cases of tests/core/io/test_torch_file.cpp (HostileTorch: ZIP sizes and pickle
bytes that lie) and tests/core/index/test_hostile_dlx.cpp (index sections that declare 3 GB or 32 GB, a
file cut short), so the fuzzers start at the length checks instead of having to find them. The
valid seeds (real .pt files, real index files) are committed beside them.

Usage: fuzz/make_seeds.py [INDEX.dlx ...]
  each INDEX.dlx (from `dumplens-cli index -o`) becomes a seed, the first one (give the smallest)
  also with its lying and cut variants (the fuzz target reseals their checksums). The committed
  seeds: an index of tests/data/samples/mindinsight/Ascend_async (no tensors) and one of the
  demo's bf16_fix variant (`dumplens-cli demo`).
"""
import pathlib
import struct
import sys
import zipfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"
TORCH = ROOT / "tests" / "data" / "samples" / "torch"


def with_record_sizes(data, name, compressed, size):
    """fp16_2x3.pt with the sizes of record `name` set in its central directory and local header."""
    b = bytearray(data)
    patched = False
    p = 0
    while True:
        p = b.find(b"PK\x01\x02", p)
        if p < 0 or p + 46 > len(b):
            break
        name_len = struct.unpack_from("<H", b, p + 28)[0]
        if b[p + 46:p + 46 + name_len] == name.encode():
            struct.pack_into("<II", b, p + 20, compressed, size)
            local = struct.unpack_from("<I", b, p + 42)[0]
            struct.pack_into("<II", b, local + 18, compressed, size)
            patched = True
        p += 4
    assert patched, name
    return bytes(b)


def with_pickle_bytes(data, old, new):
    assert len(old) == len(new) and old in data, old
    return data.replace(old, new, 1)


def torch_seeds():
    out = CORPUS / "fuzz_torch_file"
    pt = (TORCH / "fp16_2x3.pt").read_bytes()
    seeds = {
        "lying_storage_4k_for_12.pt": with_record_sizes(pt, "fp16_2x3/data/0", 12, 4096),
        "lying_storage_4g.pt": with_record_sizes(pt, "fp16_2x3/data/0", 12, 0xFFFFFFF0),
        "lying_storage_both_4k.pt": with_record_sizes(pt, "fp16_2x3/data/0", 4096, 4096),
        "lying_pickle_4g.pt": with_record_sizes(pt, "fp16_2x3/data.pkl", 0xFFFFFFF0, 0xFFFFFFF0),
        "lying_numel_255.pt": with_pickle_bytes(pt, b"cpuq\x04K\x06", b"cpuq\x04K\xff"),
        "lying_offset_5.pt": with_pickle_bytes(pt, b"QK\x00K\x02", b"QK\x05K\x02"),
    }
    # The pickles alone: the target also unpickles its whole input.
    for name in ("fp16_2x3", "dict", "param"):
        with zipfile.ZipFile(TORCH / f"{name}.pt") as z:
            pkl = [n for n in z.namelist() if n.endswith("/data.pkl")][0]
            seeds[f"{name}.pkl"] = z.read(pkl)
    for name, data in seeds.items():
        (out / name).write_bytes(data)


# Format 8 (docs/formats.md 9.1): a 64-byte header, 48-byte section entries, 32-byte chunk entries.
# A seed only needs the structure: the fuzz target reseals every checksum before it reads.
HEADER, SECTION, CHUNK = 64, 48, 32


def lying_variants(data):
    """The file with each section's record count claiming 3 GB and 32 GB (test_hostile_dlx's cases)."""
    sections, = struct.unpack_from("<I", data, 12)
    for i in range(sections):
        at = HEADER + i * SECTION
        sid, _, elem = struct.unpack_from("<III", data, at)
        for gb in (3, 32):
            b = bytearray(data)
            struct.pack_into("<Q", b, at + 16, (gb << 30) // elem)
            yield f"section{sid}_{gb}g", bytes(b)


def index_seeds(dlx_files):
    out = CORPUS / "fuzz_index_file"
    out.mkdir(parents=True, exist_ok=True)
    for old in out.iterdir():   # earlier formats' seeds
        old.unlink()
    for k, path in enumerate(map(pathlib.Path, dlx_files)):
        data = path.read_bytes()
        assert data[:8] == b"DLINDEX\x1a", path
        (out / f"{path.stem}.dlx").write_bytes(data)
        if k:   # the variants of the first (smallest) file only: the corpus stays small
            continue
        for name, variant in lying_variants(data):
            (out / f"{path.stem}_lying_{name}.dlx").write_bytes(variant)
        (out / f"{path.stem}_cut_short.dlx").write_bytes(data[: len(data) // 2])


if __name__ == "__main__":
    torch_seeds()
    index_seeds(sys.argv[1:])
