#pragma once
// Reads the header of a single-tensor torch.save file (the .pt files msprobe writes for PyTorch):
// a ZIP archive of stored records, "<archive>/data.pkl" (the pickle naming
// torch._utils._rebuild_tensor_v2 with a storage, offset, size and stride) and "<archive>/data/<key>"
// (the storage's raw little-endian bytes). The result is the same NpyHeader the .npy reader gives,
// with dataOffset pointing into the archive, so statistics, replay and comparison read a .pt
// exactly like a .npy. Nothing in the pickle is executed.
#include <cstdint>
#include <string>

#include "core/io/npy_file.h"

namespace dl {

// From a file: reads only the archive directory, the pickle and one local header. Errors give the
// reason; the caller names the file (as for the .npy reader).
bool readTorchTensorHeader(const std::string& path, NpyHeader& out, std::string& error);
// From the bytes of a whole file (small files, fuzzing).
bool parseTorchTensorHeader(const std::uint8_t* data, std::size_t size, NpyHeader& out, std::string& error);

// "HalfStorage" -> Float16, ...; Unknown for a storage class it does not know.
DType torchStorageDType(const std::string& storageClass);

}  // namespace dl
