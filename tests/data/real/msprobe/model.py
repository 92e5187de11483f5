"""Small model dumped with msprobe for DumpLens's real-capture corpus (tests/data/real/msprobe).

Two transformer blocks and a head; one step of forward, backward and SGD, wrapped in msprobe's
PrecisionDebugger. Variants (argv[1]):
  fp16_overflow  bf16 model whose attention logits are scaled by 4096 in fp16 (overflows to inf)
  fp32_fix       the same code computed in fp32 (the fix)
  softmax_bad    fp32, softmax over dim=-2 (the bug)
  softmax_good   fp32, softmax over dim=-1
argv[2] is msprobe's config.json. Seeds are fixed so the pairs differ only by the variant.
"""
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F
from msprobe.pytorch import PrecisionDebugger

# Shim for Debian's torch 1.13: msprobe's md5 (crc32) path calls Tensor.untyped_storage(), added in torch 2.0.
if not hasattr(torch.Tensor, "untyped_storage"):
    torch.Tensor.untyped_storage = lambda self: self._storage()

VARIANT, CONFIG = sys.argv[1], sys.argv[2]
D, T, B = 16, 8, 1


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = nn.LayerNorm(D)
        self.q = nn.Linear(D, D)
        self.k = nn.Linear(D, D)
        self.v = nn.Linear(D, D)
        self.o = nn.Linear(D, D)

    def forward(self, x):
        h = self.ln(x)
        q, k, v = self.q(h), self.k(h), self.v(h)
        logits = torch.matmul(q, k.transpose(-1, -2))
        if VARIANT == "fp16_overflow":
            logits = (logits.to(torch.float16) * 4096.0).to(x.dtype)
        elif VARIANT == "fp32_fix":
            logits = (logits.float() * 4096.0).to(x.dtype)
        else:
            logits = logits * 0.25
        dim = -2 if VARIANT == "softmax_bad" else -1
        attn = F.softmax(logits, dim=dim)
        return x + self.o(torch.matmul(attn, v))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(), Block())
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        return self.head(self.blocks(x))


torch.manual_seed(0)
net = Net()
x = torch.randn(B, T, D)
y = torch.randint(0, 4, (B * T,))
if VARIANT == "fp16_overflow":
    net = net.to(torch.bfloat16)
    x = x.to(torch.bfloat16)
opt = torch.optim.SGD(net.parameters(), lr=0.1)

debugger = PrecisionDebugger(config_path=CONFIG)
debugger.start(net)
out = net(x)
loss = F.cross_entropy(out.reshape(-1, 4).float(), y)
loss.backward()
opt.step()
debugger.stop()
debugger.step()
print(VARIANT, "loss", float(loss))
