// The graph IR's edges at scale (issue 30): writes a kernel graph of N kernels (default 100,000)
// in MindSpore's text IR with core/demo's writer (Load for every parameter, TupleGetItem for the
// outputs of a two-output kernel, an UpdateState per optimizer kernel, residual edges), then times
// readGraphIrDataflow on it, the name look-up of every kernel and a path query across the whole
// graph, and prints the peak RSS of the reading process (the writer runs apart: its text would
// count). Usage: bench_graph_ir write KERNELS FILE; bench_graph_ir read FILE
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/demo/graph_ir_writer.h"
#include "core/formats/mindspore/graph_ir_edges.h"

namespace {

double seconds(std::chrono::steady_clock::time_point a) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

long peakRssKb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

int readBench(const std::string& file) {
    const auto bytes = std::filesystem::file_size(file);
    const long rssBefore = peakRssKb();
    auto t0 = std::chrono::steady_clock::now();
    dl::IrDataflow flow;
    std::string error;
    if (!dl::readGraphIrDataflow(file, 0, flow, error)) {
        std::fprintf(stderr, "%s\n", error.c_str());
        return 1;
    }
    flow.finish();
    const double readS = seconds(t0);
    const long rssRead = peakRssKb();

    t0 = std::chrono::steady_clock::now();
    std::size_t found = 0;
    for (std::uint32_t k = 0; k < flow.kernels.size(); ++k)
        found += flow.find(0, flow.kernels[k].name) == std::int64_t(k);
    const double findS = seconds(t0);

    t0 = std::chrono::steady_clock::now();
    const auto path = flow.path(0, std::uint32_t(flow.kernels.size() - 2), 1u << 20);
    const double pathS = seconds(t0);

    std::printf("read + finish: %.3f s (%.1f MB/s), %zu data edges, %zu control edges, %zu parameter/constant inputs\n",
                readS, double(bytes) / 1e6 / readS, flow.edges.size(), flow.controlEdges.size(), flow.sources.size());
    std::printf("find every kernel by name: %.3f s (%zu found)\n", findS, found);
    std::printf("path kernel 0 -> kernel %zu: %zu edges in %.3f s\n", flow.kernels.size() - 2, path.size(), pathS);
    std::printf("peak RSS: %ld KB before reading, %ld KB after reading, %ld KB at the end\n", rssBefore, rssRead,
                peakRssKb());
    return found == flow.kernels.size() && !path.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if ((mode != "write" || argc != 4) && (mode != "read" || argc != 3)) {
        std::fprintf(stderr, "usage: bench_graph_ir write KERNELS FILE | read FILE\n");
        return 2;
    }
    const std::string file = argv[argc - 1];
    if (mode == "read") return readBench(file);
    const std::size_t n = std::strtoull(argv[2], nullptr, 10);
    // A layer of 10 kernels: Split (2 outputs) -> MatMul(a) , MatMul(b) -> Mul -> Add(residual) -> Cast ...
    static const char* const types[] = {"Split",   "MatMul", "MatMul",   "Mul",    "Add",
                                        "RmsNorm", "Cast",   "FastGeLU", "MatMul", "ApplyMomentum"};
    std::vector<dl::demo::KernelSpec> kernels(n);
    std::vector<dl::demo::KernelEdge> edges;
    for (std::uint32_t k = 0; k < n; ++k) {
        const int t = int(k % 10);
        auto& s = kernels[k];
        s.type = types[t];
        s.fullName = "Default/network-Net/layers-CellList/" + std::to_string(k / 10) + "-Layer/" + s.type + "-op" +
            std::to_string(k);
        s.inputs = 2;
        s.outputs = t == 0 ? 2 : 1;
        s.updatesState = t == 9;
        if (k == 0) continue;
        const std::uint32_t prev = k - 1;
        if (t == 1 || t == 2)
            edges.push_back({k - std::uint32_t(t), k, std::uint16_t(t - 1), 0});  // the Split's two outputs
        else
            edges.push_back({prev, k, 0, 0});
        if (t == 4 && k >= 6) edges.push_back({k - 6, k, 0, 1});  // the residual
        if (t == 3) edges.push_back({k - 1 - 1, k, 0, 1});        // Mul(MatMul a, MatMul b)
    }
    auto t0 = std::chrono::steady_clock::now();
    {
        std::ofstream out(file, std::ios::binary);
        out << dl::demo::kernelGraphIr(0, kernels, edges);
    }
    std::printf("IR: %zu kernels, %.1f MB, written in %.2f s (%s)\n", n, double(std::filesystem::file_size(file)) / 1e6,
                seconds(t0), file.c_str());
    return 0;
}
