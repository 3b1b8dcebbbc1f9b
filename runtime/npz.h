// NumPy .npy and .npz files <-> NDArray, for `tessel run --inputs in.npz --outputs out.npz`.
// Dtypes: float16/32/64, int8/16/32/64, uint8/16/32/64 and bool ('|b1'), little-endian, C order.
// Every failure throws tessel::Error naming the file and the array.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "runtime/ndarray.h"

namespace tessel::runtime {

// The arrays of an .npz archive (numpy.savez or numpy.savez_compressed) by name, the ".npy"
// suffix dropped, in archive order. An entry that is not a .npy file is an error.
std::vector<std::pair<std::string, NDArray>> load_npz(const std::string& path);

// Writes an uncompressed .npz (what numpy.savez writes) atomically: to a temporary file in the same
// directory, then renamed over `path`; nothing is left behind on failure. Names must be distinct
// and there must be at least one array.
void save_npz(const std::string& path, const std::vector<std::pair<std::string, NDArray>>& arrays);

// One .npy payload -> NDArray. Reads format versions 1.0, 2.0 and 3.0. `what` names the array in
// error messages (e.g. "'in.npz' array 'x'").
NDArray parse_npy(const std::string& bytes, const std::string& what);

// NDArray -> one .npy payload: format 1.0, or 2.0 when the header does not fit 1.0's 16-bit length.
// The header is padded so the data starts 64-byte aligned, as numpy does.
std::string to_npy(const NDArray& a);

// The zip layer beneath load_npz/save_npz, with raw entry bytes (entry names keep their suffix).
// read_zip reads stored and deflated entries; write_zip stores them uncompressed, atomically as
// save_npz describes.
std::vector<std::pair<std::string, std::string>> read_zip(const std::string& path);
void write_zip(const std::string& path,
               const std::vector<std::pair<std::string, std::string>>& entries);

}  // namespace tessel::runtime
