#pragma once
// What the overflow report says, as plain data (no layout, no Qt): built once from the index and
// the analysis, then drawn by the PDF renderer (ui/report) and checked by tests without a PDF.
#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/analysis_result.h"
#include "core/model/dump_index.h"

namespace dl {

struct ReportField {
    std::string label, value;
};

struct ReportTable {
    std::vector<std::string> columns;
    std::vector<std::vector<std::string>> rows;
    std::vector<bool> emphasis;  // per row: the row the reader should look at (origin, overflow)
    bool empty() const { return rows.empty(); }
};

struct ReportChainStep {
    std::uint32_t op = kNoIndex;
    std::string role, opType, opName, kind, note;
    std::uint32_t rank = 0, iteration = 0;
    int causedBy = -1;  // chain step index it came from
    std::string via;    // "send_receive", "collective", "weight_update", ... ("" for the first step)
};

// Consecutive chain steps in one pipeline stage and iteration: one box of the chain diagram.
struct ReportChainBox {
    int stage = -1;
    std::uint32_t iteration = 0;
    std::string via;  // how the box's first step was reached (the arrow into the box)
    std::vector<ReportChainStep> steps;
};

struct ReportHistogramTensor {
    std::uint32_t tensor = kNoIndex;
    std::string label;  // "input.0"
    std::string dtype;
    double maxAbs = -1;  // -1 when unknown
    bool anomalous = false;
};

struct ReportOptions {
    bool readGraphIr = true;  // look up source lines in rank_N/graphs/*.ir
    std::size_t nearLimitRows = 15;
    std::size_t warningRows = 30;
    std::size_t unreadableRows = 200;
    std::size_t timelineNeighbours = 6;  // ops shown before and after the origin on its rank
};

struct ReportContent {
    bool overflow = false;
    std::string verdict;               // headline sentence
    std::vector<std::string> summary;  // short paragraph lines under the headline

    // First overflow (empty when clean).
    std::uint32_t originOp = kNoIndex, originTensor = kNoIndex;
    std::uint32_t iteration = 0;           // iteration the chain, timeline and histograms are from
    std::vector<ReportField> origin;       // op type, scope, rank, stage, iteration, kind, source...
    std::vector<std::string> sourceLines;  // "In file model.py:123/ code/" from the graph IR

    std::vector<ReportField> run;       // dump root, framework, device, ranks, stages, ...
    std::vector<ReportField> headroom;  // clean runs: how far the largest value is from 65504

    std::vector<ReportChainBox> chain;  // diagram boxes in chain order
    ReportTable chainTable;
    ReportTable timelineNeighbours;                       // ops around the origin on its rank, in execution order
    std::vector<ReportHistogramTensor> histogramTensors;  // the origin op's inputs then outputs

    ReportTable replay;
    std::string replayStatus;  // "fp16 replay reproduces the overflow" / unavailable reason
    std::vector<std::string> replayNotes;
    std::string recommendation;
    bool recommendationFromReplay = false;

    ReportTable iterations;  // iteration -> ok/overflow
    ReportTable nearLimit;
    std::uint64_t nearLimitTotal = 0;
    double nearLimitThreshold = 0.5;
    std::vector<std::string> evidence;
    std::vector<std::string> warnings;    // analysis warnings (capped)
    std::vector<std::string> unreadable;  // appendix: "path: reason" of every file the index could not read (capped)
    std::size_t unreadableTotal = 0;
    std::uint64_t warningsTotal = 0;

    std::vector<std::string> comparison;  // filled by the caller when --compare is given
};

ReportContent buildReportContent(const DumpIndex& index, const AnalysisResult& result,
                                 const ReportOptions& options = {});

// "%.6g" with "inf"/"nan" spelled out; shared by the renderer so the tables and text agree.
std::string reportNumber(double v);

}  // namespace dl
