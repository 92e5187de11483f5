// Compiled only by the layer_probe test (tests/layering/CMakeLists.txt) as part of a target that
// links dumplens_util alone: util sits at the bottom of the layer table, so the include of the
// index layer below must fail to compile. The test passes when it fails for exactly that reason.
#include "core/index/dump_indexer.h"
#include "core/util/half.h"

float layerProbe() { return dl::kFp16Max; }
