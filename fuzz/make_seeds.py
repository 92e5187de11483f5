#!/usr/bin/env python3
"""Writes the crafted seeds of fuzz/corpus/fuzz_torch_file and fuzz/corpus/fuzz_index_file.

They are the hostile cases of tests/core/test_torch_file.cpp (HostileTorch: ZIP sizes and pickle
bytes that lie) and tests/core/test_hostile_dlx.cpp (an index body whose sections declare 3 GB or
32 GB), so the fuzzers start at the length checks instead of having to find them. The valid seeds
(real .pt files, real index bodies) are committed beside them.

Usage: fuzz/make_seeds.py [INDEX.dlx ...]
  each INDEX.dlx (from `dumplens-cli index -o`) also becomes a seed: the file itself (read with its
  header) and its decompressed body (wrapped by the fuzz target). Needs the zstd command for those.
"""
import pathlib
import struct
import subprocess
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


# Sections of an index body in the order index_serializer writes them (see bodyLyingAt in
# tests/core/test_hostile_dlx.cpp).
SECTIONS = ["root", "blob", "offsets", "ranks", "ops", "tensors", "dims", "hist", "overflows", "wide",
            "warnings", "warningPath", "meta"]


def body_lying_at(huge, length):
    b = bytearray(struct.pack("<QQQ", 0, 0, 0))   # FolderFingerprint

    def put_len(section, honest):
        b.extend(struct.pack("<Q", length if section == huge else honest))
        return section == huge

    if put_len("root", 0) or put_len("blob", 0) or put_len("offsets", 2):
        return bytes(b)
    b.extend(struct.pack("<II", 0, 0))
    for s in ("ranks", "ops", "tensors", "dims", "hist", "overflows", "wide"):
        if put_len(s, 0):
            return bytes(b)
    if put_len("warnings", 1) or put_len("warningPath", 0):
        return bytes(b)
    put_len("meta", 0)
    return bytes(b)


def index_seeds(dlx_files):
    out = CORPUS / "fuzz_index_file"
    out.mkdir(parents=True, exist_ok=True)
    # First byte 1: the zstd frame claims 64 GiB of content, as in the test; 0: it is honest.
    for s in SECTIONS:
        (out / f"lying_{s}_3g").write_bytes(b"\x01" + body_lying_at(s, 3 << 30))
        (out / f"lying_{s}_32g_honest_frame").write_bytes(b"\x00" + body_lying_at(s, 32 << 30))
    (out / "honest_lengths_cut_short").write_bytes(b"\x00" + body_lying_at(None, 0))
    for path in map(pathlib.Path, dlx_files):
        data = path.read_bytes()
        assert data[:8] == b"DLINDEX\x1a", path
        (out / f"{path.stem}.dlx").write_bytes(data)
        body = subprocess.run(["zstd", "-dc"], input=data[40:], capture_output=True, check=True).stdout
        (out / f"{path.stem}.body").write_bytes(b"\x00" + body)


if __name__ == "__main__":
    torch_seeds()
    index_seeds(sys.argv[1:])
