// Exact k-nearest-neighbour search of packed binary codes by Hamming distance (faiss's
// IndexBinaryFlat search): plain arrays in and out, no index object, no model semantics.
#pragma once
#include <cstdint>

namespace xling {

// The k nearest base codes of each query code, ascending by (distance, id): ties go to the smaller
// id, exactly as sorting every base row by (distance, id) and keeping the first k.
// queries [nq, bytes], base [nb, bytes] (any bytes >= 1, no alignment needed); 1 <= k <= nb.
// distances and labels are [nq, k]. threads >= 1: OpenMP threads over blocks of queries (and over
// slices of the base when there are fewer queries than threads).
void hammingKnn(const uint8_t* queries, int64_t nq, const uint8_t* base, int64_t nb, int64_t bytes, int64_t k, int threads,
                int32_t* distances, int64_t* labels);

}  // namespace xling
