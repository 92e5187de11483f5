"""Small MindSpore networks whose dumps are DumpLens's real-writer test corpus.

Run by make.sh inside a venv that has one MindSpore version installed:
    python nets.py <net> <dump_config.json>
MINDSPORE_DUMP_CONFIG must already name the config (MindSpore reads it at import).
Every network runs in graph mode on CPU and is small on purpose: each dump stays far under 1 MB.
"""
import sys

import numpy as np
import mindspore as ms
from mindspore import nn, ops, Tensor, Parameter


def set_cpu_graph_mode():
    # 2.7+ prefers ms.set_device; 2.0 only knows set_context(device_target=...).
    if hasattr(ms, "set_device"):
        ms.set_context(mode=ms.GRAPH_MODE)
        ms.set_device("CPU")
    else:
        ms.set_context(mode=ms.GRAPH_MODE, device_target="CPU")


class ForwardMul(nn.Cell):
    """fp16 forward net: Mul of 300*300 = 90000 > 65504, so Mul's output is the first inf."""

    def __init__(self):
        super().__init__()
        self.mul = ops.Mul()
        self.add = ops.Add()
        self.relu = ops.ReLU()

    def construct(self, x, y):
        h = self.add(x, y)          # finite: 301, 2, ...
        p = self.mul(h, h)          # overflows in fp16 where |h| > 255.9
        return self.relu(p)         # carries the inf on


def run_forward():
    net = ForwardMul()
    x = Tensor(np.array([300.0, 1.0, -2.0, 0.5, 250.0, 3.0], np.float16))
    y = Tensor(np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0], np.float16))
    out = net(x, y)
    print("forward out", out.asnumpy())


class SqrtNet(nn.Cell):
    """loss = scale * sum(sqrt(w * x)). With fixed=False the Sqrt runs in fp16, and its gradient
    SqrtGrad = dy / (2 * sqrt(w*x)) overflows fp16 where w*x is tiny (iteration 1 feeds 1e-6).
    With fixed=True the Sqrt runs in float32 on w*x + 1, so the gradient stays finite, and a
    larger loss scale makes the float32 loss (~9e4) legitimately far above 65504: it never goes
    through fp16, so it is no overflow."""

    def __init__(self, fixed):
        super().__init__()
        self.fixed = fixed
        self.w = Parameter(Tensor(np.full((4,), 1.0, np.float16)), name="w")
        self.mul = ops.Mul()
        self.sqrt = ops.Sqrt()
        self.sum = ops.ReduceSum()
        self.cast = ops.Cast()

    def construct(self, x):
        wx = self.mul(self.w, x)
        if self.fixed:
            s = self.sqrt(self.cast(wx, ms.float32) + 1.0)
        else:
            s = self.cast(self.sqrt(wx), ms.float32)
        return self.sum(s) * (8192.0 if self.fixed else 1024.0)


class TrainStep(nn.Cell):
    """Forward, backward and a plain SGD update w -= lr * grad written with Assign. nn.SGD is not
    used: on CPU its kernel updates w in place and leaves its own output buffer unwritten, so the
    dumped SGD output is whatever memory held (NaN in one run), which would make the clean run
    look broken for a reason that is not in the network."""

    def __init__(self, net):
        super().__init__()
        self.net = net
        self.params = ms.ParameterTuple(net.trainable_params())
        self.grad = ops.GradOperation(get_by_list=True)
        self.assign = ops.Assign()
        self.lr = Tensor(1e-6, ms.float16)

    def construct(self, x):
        loss = self.net(x)
        grads = self.grad(self.net, self.params)(x)
        w = self.params[0]
        return ops.depend(loss, self.assign(w, w - grads[0] * self.lr))


def run_train(fixed):
    step = TrainStep(SqrtNet(fixed))
    step.set_train()
    batches = [
        np.array([4.0, 1.0, 9.0, 16.0], np.float16),   # iteration 0: clean
        np.array([4.0, 1e-6, 9.0, 16.0], np.float16),  # iteration 1: SqrtGrad = 1024/(2*1e-3) > 65504
        np.array([1.0, 1.0, 1e-6, 1.0], np.float16),   # iteration 2: again
    ]
    for b in batches:
        loss = step(Tensor(b))
        print("loss", loss.asnumpy())


class Branchy(nn.Cell):
    """Control flow on a tensor value: graph mode compiles the branches and the loop body into
    subgraphs of the kernel graph."""

    def __init__(self):
        super().__init__()
        self.k = Parameter(Tensor(np.array([2.0, 3.0], np.float32)), name="k")

    def construct(self, x, n):
        i = Tensor(0, ms.int32)
        while i < n:
            x = x * self.k
            i = i + 1
        if x.sum() > 10.0:
            y = x - 1.0
        else:
            y = x + 1.0
        return y


class Plain(nn.Cell):
    def __init__(self):
        super().__init__()
        self.b = Parameter(Tensor(np.array([0.5, -0.5], np.float32)), name="b")

    def construct(self, x):
        return ops.tanh(x + self.b)


def run_multigraph():
    plain = Plain()
    branchy = Branchy()
    x = Tensor(np.array([1.0, 2.0], np.float32))
    print("plain", plain(x).asnumpy())
    print("branchy", branchy(x, Tensor(3, ms.int32)).asnumpy())
    print("plain again", plain(x * 2).asnumpy())


def main():
    set_cpu_graph_mode()
    which = sys.argv[1]
    {"forward_mul": run_forward,
     "train_sqrtgrad": lambda: run_train(False),
     "train_fixed": lambda: run_train(True),
     "multigraph": run_multigraph}[which]()


if __name__ == "__main__":
    main()
