#!/usr/bin/python3
# Writes the torch.save samples in this folder with a real PyTorch (Debian 12's python3-torch,
# 1.13.1): `apt-get install python3-torch && /usr/bin/python3 make_samples.py`. The files are
# committed; the tests read them and check the values printed in expected.txt.
import torch

torch.manual_seed(0)
samples = {
    "fp16_2x3": (torch.randn(2, 3) * 1000).half(),
    "bf16_4x5": torch.randn(4, 5).bfloat16(),
    "fp32_scalar": torch.tensor(3.5),
    "fp32_offset_view": torch.arange(12, dtype=torch.float32).reshape(3, 4)[1:],      # storage offset 4
    "fp32_transposed": torch.arange(12, dtype=torch.float32).reshape(3, 4).t(),       # column-major
    "fp32_strided": torch.arange(12, dtype=torch.float32)[::2],                        # not dense
    "i64": torch.arange(6, dtype=torch.int64),
    "fp16_special": torch.tensor([1.0, float("inf"), float("nan"), -65504.0]).half(),
    "param": torch.nn.Parameter(torch.ones(3)),
}
with open("expected.txt", "w") as out:
    for name, t in samples.items():
        torch.save(t, name + ".pt")
        flat = t.detach().float().t().flatten() if name == "fp32_transposed" else t.detach().float().flatten()
        out.write(f"{name} {t.dtype} {list(t.shape)} {flat.tolist()}\n")
torch.save({"a": torch.ones(2)}, "dict.pt")   # not a single tensor
