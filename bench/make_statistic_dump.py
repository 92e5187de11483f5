#!/usr/bin/env python3
"""Writes a big statistics-only MindSpore 2.4 dump (saved_data "statistic") for benchmarks.

A PP4 x TP2 cluster (8 ranks, rank = stage * 2 + lane) of a Baichuan2-13B-like model: 40 decoder
layers (10 per stage), hidden 5120, FFN 13696, vocabulary 125696, each TP lane holding half of the
column/row-parallel weights. Every rank writes rank_{r}/Baichuan2/0/{iter}/statistic.csv with the
2.3+ header (user categories, trailing comma on every data row), timestamps rising per tensor.
Iterations are added until the requested row count is reached (the op names repeat across
iterations, as in a real run). Iteration 1 carries an fp16 overflow: rank 6's SqrtGrad of the
final norm's backward writes inf, and everything after it on ranks 6 and 7 in that iteration and
on every rank in the next one shows inf/nan, so `analyze` has an origin that does not depend on
the size.

Usage: make_statistic_dump.py OUTDIR ROWS   (OUTDIR must not exist; nothing is written elsewhere)
"""
import os
import random
import sys

RANKS, TP, LAYERS_PER_STAGE = 8, 2, 10
HIDDEN, FFN, VOCAB, SEQ, MB = 5120, 13696, 125696, 4096, 1
HEADER = ("Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,"
          "Max Value,Min Value,Avg Value,NaN Count,Negative Inf Count,Positive Inf Count,L2Norm Value\n")
SCOPE = "Default_network-WithLossCell__backbone-Baichuan13BV2ForCausalLM_"


def nbytes(shape, dtype):
    n = 1
    for d in shape:
        n *= d
    return n * (2 if dtype in ("float16", "bfloat16") else 4)


def stage_ops(stage):
    """(op type, op name, [(io, slot, dtype, shape)]) in execution order for one stage."""
    ops, seq = [], [0]
    h, f, v = HIDDEN, FFN // TP, VOCAB // TP
    act = (MB, SEQ, h)

    def op(kind, scope, tensors):
        seq[0] += 1
        ops.append((kind, SCOPE + scope + "_" + kind + "-op" + str(seq[0] * 7 + stage), tensors))

    def io(ins, outs, dtype="float16"):
        return [("input", i, dtype, s) for i, s in enumerate(ins)] + [("output", i, dtype, s) for i, s in enumerate(outs)]

    first = stage * LAYERS_PER_STAGE
    if stage == 0:
        op("Gather", "model-Baichuan13BV2Model_tok_embeddings-VocabEmbedding", io([(v, h), (MB, SEQ)], [act]))
    else:
        op("Receive", "model-Baichuan13BV2Model_pipeline_recv", io([], [act]))
    for layer in range(first, first + LAYERS_PER_STAGE):
        base = "model-Baichuan13BV2Model_layers-CellList_%d-Baichuan13BDecodeLayer_" % layer
        att, mlp = base + "attention-Baichuan13BAttention_", base + "feed_forward-LlamaFeedForward_"
        op("RmsNorm", base + "attention_norm-LlamaRMSNorm", io([act, (h,)], [act, (MB, SEQ, 1)]))
        for w in ("wq", "wk", "wv"):
            op("MatMul", att + w + "-Linear", io([act, (h // TP, h)], [(MB, SEQ, h // TP)]))
        op("BatchMatMul", att + "bmm_qk", io([(MB, 20, SEQ, 128)] * 2, [(MB, 20, SEQ, SEQ)]))
        op("Add", att + "alibi_add", io([(MB, 20, SEQ, SEQ)] * 2, [(MB, 20, SEQ, SEQ)]))
        op("Softmax", att + "softmax-Softmax", io([(MB, 20, SEQ, SEQ)], [(MB, 20, SEQ, SEQ)]))
        op("BatchMatMul", att + "bmm_pv", io([(MB, 20, SEQ, SEQ), (MB, 20, SEQ, 128)], [(MB, 20, SEQ, 128)]))
        op("MatMul", att + "wo-Linear", io([(MB, SEQ, h // TP), (h, h // TP)], [act]))
        op("AllReduce", att + "wo-Linear_AllReduce", io([act], [act]))
        op("Add", base + "residual_add", io([act, act], [act]))
        op("RmsNorm", base + "ffn_norm-LlamaRMSNorm", io([act, (h,)], [act, (MB, SEQ, 1)]))
        for w in ("w1", "w3"):
            op("MatMul", mlp + w + "-Linear", io([act, (f, h)], [(MB, SEQ, f)]))
        op("SiLU", mlp + "silu-SiLU", io([(MB, SEQ, f)], [(MB, SEQ, f)]))
        op("Mul", mlp + "mul-Mul", io([(MB, SEQ, f)] * 2, [(MB, SEQ, f)]))
        op("MatMul", mlp + "w2-Linear", io([(MB, SEQ, f), (h, f)], [act]))
        op("AllReduce", mlp + "w2-Linear_AllReduce", io([act], [act]))
        op("Add", base + "residual_add_1", io([act, act], [act]))
    if stage == 3:
        op("RmsNorm", "model-Baichuan13BV2Model_norm_out-LlamaRMSNorm", io([act, (h,)], [act]))
        op("MatMul", "lm_head-NormHead", io([act, (v, h)], [(MB, SEQ, v)]))
        op("SoftmaxCrossEntropyWithLogits", "loss-CrossEntropyLoss", io([(MB, SEQ, v)], [(1,)], "float32"))
        op("SqrtGrad", "Gradients_lm_head-NormHead_gradSqrt", io([(v, h), (v, h)], [(v, h)]))
    else:
        op("Send", "model-Baichuan13BV2Model_pipeline_send", io([act], []))
    forward = len(ops)
    for kind, name, tensors in list(reversed(ops[:forward])):  # backward: one grad op per forward op
        if kind in ("Send", "Receive"):
            continue
        op(kind + "Grad", "Gradients_" + name[len(SCOPE):].rsplit("_", 1)[0] + "_grad", tensors)
    if stage != 0:
        op("Send", "Gradients_pipeline_send_grad", io([act], []))
    for layer in range(first, first + LAYERS_PER_STAGE):
        base = "optimizer-AdamWeightDecay_layers_%d_" % layer
        for w, shp in (("wq", (h // TP, h)), ("wo", (h, h // TP)), ("w1", (f, h)), ("w2", (h, f))):
            op("AdamWeightDecay", base + w, io([shp] * 4, [shp], "float32"))
    return ops


def stat_cells(rng, n):
    """A pool of realistic statistic cells (%g, 6 significant digits) to draw rows from."""
    pool = []
    for _ in range(n):
        mx = rng.uniform(0.01, 300.0)
        mn = -rng.uniform(0.01, 300.0)
        pool.append("%g,%g,%g,0,0,0,%g," % (mx, mn, rng.uniform(-0.5, 0.5), rng.uniform(10.0, 9000.0)))
    return pool


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    out, rows = sys.argv[1], int(float(sys.argv[2]))
    if os.path.exists(out):
        sys.exit("make_statistic_dump.py: %s exists; give a new folder" % out)
    rng = random.Random(13)
    pool = stat_cells(rng, 4099)
    templates = []  # per stage: (prefix "type,name,0,stream,", suffix ",io,slot,bytes,dtype,shape,")
    for stage in range(4):
        t = []
        for kind, name, tensors in stage_ops(stage):
            stream = 1 if kind in ("AllReduce", "Send", "Receive") else 0
            for io, slot, dtype, shape in tensors:
                shp = '"(' + ",".join(str(d) for d in shape) + ')"'
                t.append((kind, "%s,%s,0,%d," % (kind, name, stream),
                          ",%s,%d,%d,%s,%s," % (io, slot, nbytes(shape, dtype), dtype, shp)))
        templates.append(t)
    per_iter = sum(len(templates[r // TP]) for r in range(RANKS))
    iterations = max(1, -(-rows // per_iter))
    written, total_bytes = 0, 0
    for it in range(iterations):
        for r in range(RANKS):
            t = templates[r // TP]
            take = min(len(t), rows - written)
            if take <= 0:
                break
            d = os.path.join(out, "rank_%d" % r, "Baichuan2", "0", str(it))
            os.makedirs(d)
            ts = 1733905446819790 + it * 4000000 + r * 317
            lines = [HEADER]
            bad = it == 2 or (it == 1 and r in (6, 7))  # from the origin on
            seen_origin = False
            for k in range(take):
                kind, pre, suf = t[k]
                if it == 1 and r == 6 and kind == "SqrtGrad":
                    seen_origin = True
                if bad and (it == 2 or seen_origin or (r == 7 and k > len(t) * 9 // 10)):
                    cells = "inf,-3.5,inf,0,0,1,inf," if it == 1 else "nan,nan,nan,1,0,0,nan,"
                else:
                    cells = pool[(k * 131 + it * 17 + r) % len(pool)]
                lines.append(pre + str(ts + 3 * k) + suf + cells + "\n")
            body = "".join(lines).encode()
            with open(os.path.join(d, "statistic.csv"), "wb") as f:
                f.write(body)
            written += take
            total_bytes += len(body)
    for r in range(RANKS):
        md = os.path.join(out, "rank_%d" % r, ".dump_metadata")
        os.makedirs(md, exist_ok=True)
        with open(os.path.join(md, "config.json"), "w") as f:
            f.write('{"device_target": "Ascend", "ms_version": "2.4.1"}\n')
    print("%s: %d rows, %d iterations, %d bytes of statistic.csv" % (out, written, iterations, total_bytes))


if __name__ == "__main__":
    main()
