// Inner products of gathered table rows with query vectors: the re-ranking step of an
// approximate search (each query's candidate ids, scored exactly against the stored vectors).
#pragma once
#include <ATen/ATen.h>

namespace xling {

// scores[i, j] = <table[ids[i, j]], q[i]> for table [N, d] (float16 or float32, contiguous),
// ids [n, K] (int64; a negative id, faiss's "no result", gives -inf), q [n, d] float32.
// Rows are read with software prefetches a few candidates ahead (a candidate list is N random
// rows of a table far larger than the caches: the cost is memory latency, not arithmetic), each
// query's sum over d in order (float32). Queries are split over the intra-op threads. Ids >= N
// are refused before any row is read.
at::Tensor gatherDot(const at::Tensor& table, const at::Tensor& ids, const at::Tensor& q);

}  // namespace xling
