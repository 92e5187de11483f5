#!/usr/bin/env python3
"""Test data for DeviceLayout (core/formats/cann/device_layout.*): logical tensors and the same
values stored in Ascend device layouts, built here with NumPy from the layouts' definitions (pad,
reshape, transpose: the direction CANN writes, the opposite of what DumpLens undoes), so the C++
gather is checked against an independent construction. Padding holds 9999 (never a value), so a
reader that keeps it is caught. Each case is checked here against msaccucmp-style inverse
conversions too (reshape, transpose, crop).

Run by hand with Debian's NumPy (python3-numpy):  /usr/bin/python3 make_cases.py
Writes cases.txt ("name format stored_shape original_shape reading") and {name}.stored.npy /
{name}.nd.npy (float32) beside this script.
"""
import os
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
PAD = np.float32(9999)


def ceil(a, b):
    return -(-a // b)


def pad_axis(x, axis, to):
    widths = [(0, 0)] * x.ndim
    widths[axis] = (0, to - x.shape[axis])
    return np.pad(x, widths, constant_values=PAD)


def to_nz(x, m0=16, n0=16):
    """(..., M, N) -> (..., N1, M1, M0, N0); a 1-D (N) is one row."""
    if x.ndim == 1:
        x = x.reshape(1, -1)
    *batch, m, n = x.shape
    m1, n1 = ceil(m, m0), ceil(n, n0)
    y = pad_axis(pad_axis(x, -2, m1 * m0), -1, n1 * n0)
    y = y.reshape(*batch, m1, m0, n1, n0)
    nb = len(batch)
    return y.transpose(*range(nb), nb + 2, nb, nb + 1, nb + 3)


def to_nc1hwc0(nchw, c0=16):
    n, c, h, w = nchw.shape
    c1 = ceil(c, c0)
    return pad_axis(nchw, 1, c1 * c0).reshape(n, c1, c0, h, w).transpose(0, 1, 3, 4, 2)


def to_fractal_z(nchw, c0=16, n0=16):
    n, c, h, w = nchw.shape
    c1, n1 = ceil(c, c0), ceil(n, n0)
    y = pad_axis(pad_axis(nchw, 0, n1 * n0), 1, c1 * c0).reshape(n1, n0, c1, c0, h, w)
    return y.transpose(2, 4, 5, 0, 1, 3).reshape(c1 * h * w, n1, n0, c0)


def to_ndc1hwc0(ncdhw, c0=16):
    n, c, d, h, w = ncdhw.shape
    c1 = ceil(c, c0)
    return pad_axis(ncdhw, 1, c1 * c0).reshape(n, c1, c0, d, h, w).transpose(0, 3, 1, 4, 5, 2)


def to_fractal_z_3d(ncdhw, c0=16, n0=16):
    n, c, d, h, w = ncdhw.shape
    c1, n1 = ceil(c, c0), ceil(n, n0)
    y = pad_axis(pad_axis(ncdhw, 0, n1 * n0), 1, c1 * c0).reshape(n1, n0, c1, c0, d, h, w)
    return y.transpose(4, 2, 5, 6, 0, 1, 3).reshape(d * c1 * h * w, n1, n0, c0)


def to_c1hwncoc0(nchw, c0=16):
    n, c, h, w = nchw.shape
    c1 = ceil(c, c0)
    y = pad_axis(nchw, 1, c1 * c0).reshape(n, c1, c0, h, w)
    out = np.full((c1, h, w, n, c0, c0), PAD, dtype=np.float32)
    for k in range(c0):
        out[:, :, :, :, k, k] = y[:, :, k, :, :].transpose(1, 2, 3, 0)
    return out


# msaccucmp-style inverses (reshape, transpose, crop), for the script's own check.
def from_nz(s, shape):
    m = shape[-2] if len(shape) >= 2 else 1
    n1, m1, m0, n0 = s.shape[-4:]
    b = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    y = s.reshape(b, n1, m1, m0, n0).transpose(0, 2, 3, 1, 4).reshape(b, m1 * m0, n1 * n0)
    return y[:, :m, :shape[-1]].reshape(shape)


def from_nc1hwc0(s, c):
    n, c1, h, w, c0 = s.shape
    return s.transpose(0, 1, 4, 2, 3).reshape(n, c1 * c0, h, w)[:, :c]


def from_fractal_z(s, nchw):
    n, c, h, w = nchw
    _, n1, n0, c0 = s.shape
    c1 = s.shape[0] // (h * w)
    y = s.reshape(c1, h, w, n1, n0, c0).transpose(3, 4, 0, 5, 1, 2).reshape(n1 * n0, c1 * c0, h, w)
    return y[:n, :c]


def from_ndc1hwc0(s, c):
    n, d, c1, h, w, c0 = s.shape
    return s.transpose(0, 2, 5, 1, 3, 4).reshape(n, c1 * c0, d, h, w)[:, :c]


def from_fractal_z_3d(s, ncdhw):
    n, c, d, h, w = ncdhw
    _, n1, n0, c0 = s.shape
    c1 = s.shape[0] // (d * h * w)
    y = s.reshape(d, c1, h, w, n1, n0, c0).transpose(4, 5, 1, 6, 0, 2, 3).reshape(n1 * n0, c1 * c0, d, h, w)
    return y[:n, :c]


def from_c1hwncoc0(s, c):
    c1, h, w, n, co, c0 = s.shape
    diag = np.stack([s[:, :, :, :, k, k] for k in range(c0)], axis=1)  # (C1, C0, H, W, N)
    return diag.reshape(c1 * c0, h, w, n).transpose(3, 0, 1, 2)[:, :c]


def values(shape, seed):
    # Distinct, exactly representable, signed; never 9999.
    rng = np.random.default_rng(seed)
    x = (np.arange(int(np.prod(shape)), dtype=np.float32) + 1) * np.float32(0.5)
    rng.shuffle(x)
    x[::3] *= -1
    return x.reshape(shape)


def main():
    cases = []

    def add(name, fmt, stored, nd, reading, inverse):
        assert np.array_equal(inverse, nd), name
        assert not np.isin(PAD, nd), name
        np.save(os.path.join(HERE, name + ".stored.npy"), np.ascontiguousarray(stored, dtype=np.float32))
        np.save(os.path.join(HERE, name + ".nd.npy"), np.ascontiguousarray(nd, dtype=np.float32))
        cases.append("%s %s %s %s %s" % (name, fmt, ",".join(map(str, stored.shape)), ",".join(map(str, nd.shape)), reading))

    x = values((3, 20), 1)
    add("nz_2d", "FRACTAL_NZ", to_nz(x), x, "ND", from_nz(to_nz(x), x.shape))
    x = values((2, 3, 17, 5), 2)
    add("nz_batch", "FRACTAL_NZ", to_nz(x), x, "ND", from_nz(to_nz(x), x.shape))
    s = to_nz(x).reshape(6, 1, 2, 16, 16)   # batch stored flattened
    add("nz_batch_flat", "FRACTAL_NZ", s, x, "ND", from_nz(s, x.shape))
    x = values((20,), 3)
    add("nz_1d", "FRACTAL_NZ", to_nz(x), x, "ND", from_nz(to_nz(x), x.shape))
    x = values((40, 33), 13)
    add("nz_fp16_tiles", "FRACTAL_NZ", to_nz(x), x, "ND", from_nz(to_nz(x), x.shape))

    x = values((2, 20, 3, 2), 4)
    add("nc1hwc0_nchw", "NC1HWC0", to_nc1hwc0(x), x, "NCHW", from_nc1hwc0(to_nc1hwc0(x), 20))
    x = values((20,), 5)   # MindSpore pads (C) to (1, C, 1, 1)
    s = to_nc1hwc0(x.reshape(1, 20, 1, 1))
    add("nc1hwc0_1d", "NC1HWC0", s, x, "NCHW", from_nc1hwc0(s, 20).reshape(20))
    x = values((2, 3, 2, 20), 6)   # NHWC
    s = to_nc1hwc0(x.transpose(0, 3, 1, 2))
    add("nc1hwc0_nhwc", "NC1HWC0", s, x, "NHWC", from_nc1hwc0(s, 20).transpose(0, 2, 3, 1))
    x = values((1, 3, 2, 2), 7)
    s = to_nc1hwc0(x, c0=4)
    add("nc1hwc0_c04", "NC1HWC0_C04", s, x, "NCHW", from_nc1hwc0(s, 3))

    x = values((20, 18, 1, 2), 8)
    add("fractal_z_nchw", "FRACTAL_Z", to_fractal_z(x), x, "NCHW", from_fractal_z(to_fractal_z(x), x.shape))
    x = values((2, 1, 18, 20), 9)   # HWCN
    s = to_fractal_z(x.transpose(3, 2, 0, 1))
    add("fractal_z_hwcn", "FRACTAL_Z", s, x, "HWCN", from_fractal_z(s, (20, 18, 2, 1)).transpose(2, 3, 1, 0))

    x = values((2, 20, 3, 2, 2), 10)
    add("ndc1hwc0_ncdhw", "NDC1HWC0", to_ndc1hwc0(x), x, "NCDHW", from_ndc1hwc0(to_ndc1hwc0(x), 20))
    x = values((2, 3, 2, 4, 20), 14)   # NDHWC
    s = to_ndc1hwc0(x.transpose(0, 4, 1, 2, 3))
    add("ndc1hwc0_ndhwc", "NDC1HWC0", s, x, "NDHWC", from_ndc1hwc0(s, 20).transpose(0, 2, 3, 4, 1))

    x = values((18, 17, 1, 2, 2), 11)
    add("fractal_z_3d_ncdhw", "FRACTAL_Z_3D", to_fractal_z_3d(x), x, "NCDHW",
        from_fractal_z_3d(to_fractal_z_3d(x), x.shape))
    x = values((1, 2, 2, 17, 18), 15)   # DHWCN
    s = to_fractal_z_3d(x.transpose(4, 3, 0, 1, 2))
    add("fractal_z_3d_dhwcn", "FRACTAL_Z_3D", s, x, "DHWCN",
        from_fractal_z_3d(s, (18, 17, 1, 2, 2)).transpose(2, 3, 4, 1, 0))

    x = values((2, 17, 2, 1), 12)
    add("c1hwncoc0_nchw", "C1HWNCoC0", to_c1hwncoc0(x), x, "NCHW", from_c1hwncoc0(to_c1hwncoc0(x), 17))
    x = values((1, 2, 20, 3), 16)   # HWCN
    s = to_c1hwncoc0(x.transpose(3, 2, 0, 1))
    add("c1hwncoc0_hwcn", "C1HWNCoC0", s, x, "HWCN", from_c1hwncoc0(s, 20).transpose(2, 3, 1, 0))

    with open(os.path.join(HERE, "cases.txt"), "w") as f:
        f.write("# name format stored_shape original_shape reading (written by make_cases.py)\n")
        f.write("\n".join(cases) + "\n")


if __name__ == "__main__":
    main()
