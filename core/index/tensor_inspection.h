#pragma once
// One tensor file examined on its own (`dumplens-cli inspect FILE`): name fields, header, stats
// and histogram, rendered as text or JSON.
#include <string>

#include "core/formats/mindspore/dump_file_name.h"
#include "core/index/stats_job.h"

namespace dl {

struct TensorInspection {
    std::string path;
    DumpFileName name;  // kind Unknown when the name is not a dump name (plain .npy)
    StatsJobResult data;
};

bool inspectTensorFile(const std::string& path, TensorInspection& out, std::string& error);
std::string inspectionText(const TensorInspection& t);
std::string inspectionJson(const TensorInspection& t);
// Text lines of a log2|x| histogram with bars, fp16 limits marked; shared by inspect and reports.
std::string histogramText(const Log2Histogram& h, int width = 40);
// "%g"-like compact number, "n/a" for unknown.
std::string formatStat(double v, bool known);

}  // namespace dl
