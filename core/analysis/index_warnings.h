#pragma once
// Which index warnings mean data could not be read. Some only note how the index coped with
// something it read in full (ops ordered by file name, a duplicate row kept once, an unknown
// column ignored): counting those as unreadable files would turn a complete read into "clean
// among N readable tensors; K files could not be read".
#include <string_view>

namespace dl {

bool warningMeansUnreadable(std::string_view reason);

}  // namespace dl
