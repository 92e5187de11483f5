#pragma once
// Readable op names. Kernel-by-kernel dumps (MindSpore 2.3+, CANN) name every op by its whole scope
// joined with '_' ("Gradients_Default_network-MFTrainOneStepCell_..._SqrtGrad-op520"), so a
// column of them shows the same prefix on every row. This splits a name into the op itself (its
// last scope component, "SqrtGrad-op520") and the scope before it, for every name form the
// indexer meets:
//   /-joined full scopes (execution_order, graph IR, CANN)  Default/network/conv1/Conv2D-op12
//   --joined names (MindSpore <= 1.2 .bin)                   Default--network-WithLossCell--Conv2D-op107
//   _-joined names (MindSpore 2.3+, CANN)                    Default_network-WithLossCell__backbone_Conv2D-op12
//   short names (MindSpore 1.3-2.2)                          Conv2D-op12 (no scope)
//   msprobe module calls                                     Module.layers.0.RMSNorm.forward.0
//   msprobe API calls                                        Functional.linear.3.forward (kept whole)
// The views returned point into the strings passed in.
#include <string_view>

namespace dl {

struct OpNameParts {
    std::string_view scope;      // without the trailing separator; empty when the name has none
    std::string_view shortName;  // never empty for a non-empty name
};

// Splits one name (a dump's op name or a full scoped name).
OpNameParts splitOpName(std::string_view name);

struct OpDisplayName {
    std::string_view shortName;  // what a row, a label or the banner shows
    std::string_view scope;      // shown dimmed, elided from the left
    std::string_view full;       // tooltip, "Copy full name", what a search of the dump finds
};

// From an op's dump name and its full scoped name (OpRecord::name, OpRecord::scope; scope may be
// empty). The short name and scope come from the dump name when it carries its scope, else from
// the full scoped name (a <= 2.2 short name placed by execution_order). `full` is the dump name
// when it already is scoped or is msprobe's own key, else the scoped name.
OpDisplayName opDisplayName(std::string_view name, std::string_view scope);

// What a timeline slice is labelled with: the API of an msprobe call ("relu" for
// "Functional.relu.0.forward", "conv2d" for "Functional.conv2d.3.backward", "RMSNorm" for the
// short name "RMSNorm.forward.0" of a module call, "Linear" for its "….Linear.parameters_grad.0"),
// else the short name itself.
std::string_view sliceLabel(std::string_view shortName);

}  // namespace dl
