// LSTM kernels: the inference encoder over token tables, and the recurrence of a training LSTM
// layer as one autograd node. Both are tensor primitives like aten::lstm: no model logic here.
#include "lstm.h"

#include "sgemm.h"

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>

namespace xling {
namespace {

// Splits rows across threads (inner mode) or runs them on the calling thread.
void forRows(bool inner, int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& f) {
  if (inner) at::parallel_for(0, n, grain, f);
  else f(0, n);
}

// C[M, N] = beta*C + A[M, K]·op(B) on row-major blocks: oneDNN on the calling thread, or ATen.
void gemm(Sgemm sg, bool transB, int64_t M, int64_t N, int64_t K, const float* A, int64_t lda,
          const float* Bm, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (sg) {
    TORCH_CHECK(sg('N', transB ? 'T' : 'N', M, N, K, 1.0f, A, lda, Bm, ldb, beta, C, ldc) == 0, "xling lstm: dnnl_sgemm failed");
    return;
  }
  auto a = at::from_blob(const_cast<float*>(A), {M, K}, {lda, 1}, at::kFloat);
  auto b = transB ? at::from_blob(const_cast<float*>(Bm), {N, K}, {ldb, 1}, at::kFloat).t()
                  : at::from_blob(const_cast<float*>(Bm), {K, N}, {ldb, 1}, at::kFloat);
  auto c = at::from_blob(C, {M, N}, {ldc, 1}, at::kFloat);
  if (beta == 0.0f) c.copy_(at::mm(a, b));
  else c.addmm_(a, b);
}

// Runs f(d, inner) for each direction. Two directions run side by side on two threads, each with
// single-threaded GEMMs, when oneDNN's sgemm is at hand: per-step work is too small to split across
// cores without paying more in wake-ups than it saves (measured on 2 cores: 1550 sentences/s with
// every op on 2 threads, 1700 with ATen ops on 1). Inside the region ATen runs its ops inline.
// inner = true: one direction after the other, each step's rows and GEMMs split across threads.
// maxThreads: above it, inner mode (a caller whose GEMMs are most of the work and big enough to
// use more than two cores).
template <typename F>
void forDirections(int64_t D, F&& f, int maxThreads = std::numeric_limits<int>::max()) {
  const int nt = at::get_num_threads();
  const bool byDirection = D == 2 && oneDnnSgemm() != nullptr && nt >= 2 && nt <= maxThreads && !at::in_parallel_region();
  if (byDirection) {
    at::parallel_for(0, 2, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t d = lo; d < hi; d++) f(d, false);
    });
  } else {
    for (int64_t d = 0; d < D; d++) f(d, true);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Inference LSTM over token ids with per-vocabulary input projections.
//
// For a first layer fed by an embedding, W_ih·emb(v) + b_ih + b_hh depends on the token only,
// so it is one row of a table [V, 4H] computed once per model (a GEMM over the vocabulary).
// Each step then gathers table rows and adds the recurrent GEMM; gate nonlinearities run as
// vectorised ATen ops and the state update and pooling as one fused pass. Same arithmetic as
// aten::lstm (gate order i, f, g, o) minus the input GEMM over every token, which is about 40%
// of a 320→512 BiLSTM's FLOPs. A tensor primitive like aten::lstm: no model logic here.
//
// ids [B, T] int64 with rows sorted by decreasing length; lengths (B ints); tables and w_hh per
// direction (direction 1 runs backwards from each sequence's end). pooling: 0 = max over time,
// 1 = final state (forward: last real step; backward: first step). Returns [B, dirs*H] float32.
at::Tensor lstmTableEncode(const at::Tensor& ids, const std::vector<int64_t>& lengths,
                           const std::vector<at::Tensor>& tables, const std::vector<at::Tensor>& whh, int pooling) {
  TORCH_CHECK(ids.dim() == 2 && ids.scalar_type() == at::kLong, "lstmTableEncode: ids must be int64 [B, T]");
  const int64_t B = ids.size(0), T = ids.size(1);
  const size_t D = tables.size();
  TORCH_CHECK(D == 1 || D == 2, "lstmTableEncode: one or two directions");
  TORCH_CHECK(whh.size() == D, "lstmTableEncode: one w_hh per direction");
  TORCH_CHECK(static_cast<int64_t>(lengths.size()) == B, "lstmTableEncode: one length per row");
  const int64_t H = whh[0].size(1);
  for (size_t d = 0; d < D; d++) {
    TORCH_CHECK(tables[d].dim() == 2 && tables[d].size(1) == 4 * H && tables[d].scalar_type() == at::kFloat && tables[d].is_contiguous(),
                "lstmTableEncode: tables must be contiguous float32 [V, 4H]");
    TORCH_CHECK(whh[d].dim() == 2 && whh[d].size(0) == 4 * H && whh[d].size(1) == H && whh[d].scalar_type() == at::kFloat,
                "lstmTableEncode: w_hh must be float32 [4H, H]");
  }
  for (int64_t b = 0; b < B; b++) {
    TORCH_CHECK(lengths[b] >= 1 && lengths[b] <= T, "lstmTableEncode: length ", lengths[b], " out of range [1, ", T, "]");
    TORCH_CHECK(b == 0 || lengths[b] <= lengths[b - 1], "lstmTableEncode: rows must be sorted by decreasing length");
  }
  const int64_t V = tables[0].size(0);
  auto idsC = ids.contiguous();
  const int64_t* idp = idsC.data_ptr<int64_t>();
  for (int64_t i = 0; i < B * T; i++) {
    int64_t b = i / T, t = i % T;
    TORCH_CHECK(t >= lengths[b] || (idp[i] >= 0 && idp[i] < V), "lstmTableEncode: token id ", idp[i], " out of range [0, ", V, ")");
  }
  at::NoGradGuard noGrad;
  auto out = at::empty({B, static_cast<int64_t>(D) * H}, at::kFloat);
  float* op = out.data_ptr<float>();
  const int64_t ostride = static_cast<int64_t>(D) * H;
  forDirections(static_cast<int64_t>(D), [&](int64_t d, bool inner) {
    const Sgemm sg = inner ? nullptr : oneDnnSgemm();
    const bool reverse = d == 1;
    const float* tab = tables[d].data_ptr<float>();
    auto whhC = whh[d].contiguous();
    auto gates = at::empty({B, 4 * H}, at::kFloat);
    auto h = at::zeros({B, H}, at::kFloat), c = at::zeros({B, H}, at::kFloat), tc = at::empty({B, H}, at::kFloat);
    float* gp = gates.data_ptr<float>();
    float* cp = c.data_ptr<float>();
    float* hp = h.data_ptr<float>();
    const float* tcp = tc.data_ptr<float>();
    if (pooling == 0)
      for (int64_t b = 0; b < B; b++) std::fill(op + b * ostride + d * H, op + b * ostride + (d + 1) * H, -std::numeric_limits<float>::infinity());
    for (int64_t s = 0; s < T; s++) {
      const int64_t t = reverse ? T - 1 - s : s;
      int64_t bt = 0;  // active rows: a prefix, since lengths decrease
      while (bt < B && lengths[bt] > t) bt++;
      if (bt == 0) continue;
      forRows(inner, bt, std::max<int64_t>(1, 8192 / H), [&](int64_t lo, int64_t hi) {
        for (int64_t b = lo; b < hi; b++) std::memcpy(gp + b * 4 * H, tab + idp[b * T + t] * 4 * H, 4 * H * sizeof(float));
      });
      gemm(sg, true, bt, 4 * H, H, hp, H, whhC.data_ptr<float>(), H, 1.0f, gp, 4 * H);
      auto g = gates.narrow(0, 0, bt);
      g.narrow(1, 0, 2 * H).sigmoid_();
      g.narrow(1, 2 * H, H).tanh_();
      g.narrow(1, 3 * H, H).sigmoid_();
      forRows(inner, bt, std::max<int64_t>(1, 16384 / H), [&](int64_t lo, int64_t hi) {
        for (int64_t b = lo; b < hi; b++) {
          const float* gi = gp + b * 4 * H;
          const float *gf = gi + H, *gg = gi + 2 * H;
          float* cb = cp + b * H;
          for (int64_t j = 0; j < H; j++) cb[j] = gf[j] * cb[j] + gi[j] * gg[j];
        }
      });
      auto tcv = tc.narrow(0, 0, bt);
      at::tanh_out(tcv, c.narrow(0, 0, bt));
      forRows(inner, bt, std::max<int64_t>(1, 16384 / H), [&](int64_t lo, int64_t hi) {
        for (int64_t b = lo; b < hi; b++) {
          const float* go = gp + b * 4 * H + 3 * H;
          float* hb = hp + b * H;
          const float* tb = tcp + b * H;
          float* pb = op + b * ostride + d * H;
          for (int64_t j = 0; j < H; j++) hb[j] = go[j] * tb[j];
          if (pooling == 0)
            for (int64_t j = 0; j < H; j++) pb[j] = std::max(pb[j], hb[j]);
        }
      });
    }
    if (pooling == 1) out.narrow(1, d * H, H).copy_(h);
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Inference of a multi-layer (bi)LSTM over token ids, on packed sequences, pooled over time.
//
// Deep encoders (LASER2: 5 layers × 512 per direction) spend two thirds of their FLOPs in the input
// GEMMs of layers ≥ 1. Here every layer works on the packed layout of
// torch.nn.utils.rnn.pack_padded_sequence: step t holds rows 0..bs[t]-1 (rows sorted by decreasing
// length) at offsets off[t]..off[t]+bs[t], so the input GEMMs run over real tokens only and no
// padded position is ever computed. Each direction of a layer runs on its own thread (single-
// threaded oneDNN GEMMs): its input gates for a chunk of consecutive steps (one GEMM of ~1k rows,
// then the recurrent GEMM of each step adds into them), the gate nonlinearities as vectorised ATen
// ops, the state update fused with writing the packed output (the next layer's input) or, in the
// last layer, with the max-pool. Same arithmetic as aten::lstm on a PackedSequence (gate order
// i, f, g, o; state zero at each sequence's start in both directions). No model logic here.
//
// ids [B, T] int32/int64, rows sorted by decreasing length, ids past a row's length ignored;
// emb [V, E] float32; weights in aten::lstm's flat order (per layer, per direction: w_ih [4H, I],
// w_hh [4H, H], b_ih [4H], b_hh [4H]); pooling 0 = max over each row's steps, 1 = final states of
// the last layer (forward: last real step; backward: first step). Returns [B, D*H] float32.
at::Tensor lstmStackEncode(const at::Tensor& ids, const std::vector<int64_t>& lengths, const at::Tensor& emb,
                           const std::vector<at::Tensor>& weights, int64_t numLayers, bool bidirectional, int pooling) {
  TORCH_CHECK(ids.dim() == 2 && (ids.scalar_type() == at::kLong || ids.scalar_type() == at::kInt), "lstmStackEncode: ids must be int32/int64 [B, T]");
  TORCH_CHECK(emb.dim() == 2 && emb.scalar_type() == at::kFloat && emb.device().is_cpu(), "lstmStackEncode: the embedding must be float32 [V, E]");
  TORCH_CHECK(numLayers >= 1, "lstmStackEncode: at least one layer");
  TORCH_CHECK(pooling == 0 || pooling == 1, "lstmStackEncode: pooling must be 0 (max) or 1 (last)");
  const int64_t B = ids.size(0), T = ids.size(1), D = bidirectional ? 2 : 1, V = emb.size(0), E = emb.size(1);
  TORCH_CHECK(B >= 1 && T >= 1, "lstmStackEncode: empty batch");
  TORCH_CHECK(static_cast<int64_t>(weights.size()) == numLayers * D * 4, "lstmStackEncode: ", weights.size(), " weights for ", numLayers, " layers × ", D, " directions (4 each expected)");
  TORCH_CHECK(weights[1].dim() == 2, "lstmStackEncode: w_hh must be [4H, H]");
  const int64_t H = weights[1].size(1), G4 = 4 * H;
  std::vector<at::Tensor> w(weights.size());
  for (int64_t l = 0; l < numLayers; l++)
    for (int64_t d = 0; d < D; d++) {
      const int64_t I = l == 0 ? E : D * H, k = (l * D + d) * 4;
      const std::vector<int64_t> want[4] = {{G4, I}, {G4, H}, {G4}, {G4}};
      for (int64_t j = 0; j < 4; j++) {
        const auto& p = weights[k + j];
        TORCH_CHECK(p.scalar_type() == at::kFloat && p.device().is_cpu() && p.sizes() == at::IntArrayRef(want[j]),
                    "lstmStackEncode: weight ", k + j, " (layer ", l, ", direction ", d, ") must be float32 ", at::IntArrayRef(want[j]), ", got ", p.sizes());
        w[k + j] = p.contiguous();
      }
    }
  TORCH_CHECK(static_cast<int64_t>(lengths.size()) == B, "lstmStackEncode: one length per row");
  for (int64_t b = 0; b < B; b++) {
    TORCH_CHECK(lengths[b] >= 1 && lengths[b] <= T, "lstmStackEncode: length ", lengths[b], " out of range [1, ", T, "]");
    TORCH_CHECK(b == 0 || lengths[b] <= lengths[b - 1], "lstmStackEncode: rows must be sorted by decreasing length");
  }
  auto idsL = ids.to(at::kLong).contiguous();
  const int64_t* idp = idsL.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = 0; t < lengths[b]; t++)
      TORCH_CHECK(idp[b * T + t] >= 0 && idp[b * T + t] < V, "lstmStackEncode: token id ", idp[b * T + t], " out of range [0, ", V, ")");
  at::NoGradGuard noGrad;
  // the packed layout: bs[t] rows at step t, from offset off[t]
  std::vector<int64_t> bs(T + 1, 0), off(T + 1, 0);
  for (int64_t t = 0; t < T; t++) {
    while (bs[t] < B && lengths[bs[t]] > t) bs[t]++;
    off[t + 1] = off[t] + bs[t];
  }
  const int64_t N = off[T];
  auto embC = emb.contiguous();
  const float* ep = embC.data_ptr<float>();
  auto x = at::empty({N, E}, at::kFloat);
  {
    float* xp = x.data_ptr<float>();
    at::parallel_for(0, T, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; t++)
        for (int64_t b = 0; b < bs[t]; b++) std::memcpy(xp + (off[t] + b) * E, ep + idp[b * T + t] * E, E * sizeof(float));
    });
  }
  auto out = at::empty({B, D * H}, at::kFloat);
  float* op = out.data_ptr<float>();
  const int64_t ldo = D * H;
  // input gates are computed for chunks of consecutive steps of about this many rows
  const int64_t chunkRows = std::max<int64_t>(B, 1024);
  for (int64_t l = 0; l < numLayers; l++) {
    const bool last = l == numLayers - 1;
    const int64_t I = l == 0 ? E : D * H;
    at::Tensor y = last ? at::Tensor() : at::empty({N, D * H}, at::kFloat);
    const float* xp = x.data_ptr<float>();
    float* yp = last ? nullptr : y.data_ptr<float>();
    forDirections(D, [&](int64_t d, bool inner) {
      const Sgemm sg = inner ? nullptr : oneDnnSgemm();
      const bool reverse = d == 1;
      const int64_t k = (l * D + d) * 4;
      const float* Wih = w[k].data_ptr<float>();
      const float* Whh = w[k + 1].data_ptr<float>();
      auto biasT = w[k + 2] + w[k + 3];
      const float* bias = biasT.data_ptr<float>();
      auto xg = at::empty({chunkRows, G4}, at::kFloat);
      auto hT = at::zeros({B, H}, at::kFloat), cT = at::zeros({B, H}, at::kFloat), tcT = at::empty({B, H}, at::kFloat);
      float *gbuf = xg.data_ptr<float>(), *h = hT.data_ptr<float>(), *c = cT.data_ptr<float>(), *tc = tcT.data_ptr<float>();
      if (last && pooling == 0)
        for (int64_t b = 0; b < B; b++) std::fill(op + b * ldo + d * H, op + b * ldo + (d + 1) * H, -std::numeric_limits<float>::infinity());
      int64_t chunkLo = 0, chunkHi = 0;  // packed rows whose input gates are in gbuf
      for (int64_t s = 0; s < T; s++) {
        const int64_t t = reverse ? T - 1 - s : s, n = bs[t];
        if (n == 0) continue;  // steps past the longest row (ids wider than the lengths need)
        if (off[t] < chunkLo || off[t] + n > chunkHi) {
          // the next chunk: steps from t onwards in this direction's order
          int64_t lo = off[t], hi = off[t] + n;
          if (!reverse)
            for (int64_t u = t + 1; u < T && off[u + 1] - lo <= chunkRows; u++) hi = off[u + 1];
          else
            for (int64_t u = t - 1; u >= 0 && hi - off[u] <= chunkRows; u--) lo = off[u];
          const int64_t rows = hi - lo;
          forRows(inner, rows, 64, [&](int64_t a, int64_t z) {
            for (int64_t r = a; r < z; r++) std::memcpy(gbuf + r * G4, bias, G4 * sizeof(float));
          });
          gemm(sg, true, rows, G4, I, xp + lo * I, I, Wih, I, 1.0f, gbuf, G4);
          chunkLo = lo;
          chunkHi = hi;
        }
        float* G = gbuf + (off[t] - chunkLo) * G4;
        const int64_t prev = s == 0 ? (reverse ? 0 : n) : bs[reverse ? t + 1 : t - 1];
        if (reverse && n > prev) {  // rows starting here (backwards) from a zero state
          std::fill(h + prev * H, h + n * H, 0.0f);
          std::fill(c + prev * H, c + n * H, 0.0f);
        }
        gemm(sg, true, n, G4, H, h, H, Whh, H, 1.0f, G, G4);
        auto g = at::from_blob(G, {n, G4}, at::kFloat);
        g.narrow(1, 0, 2 * H).sigmoid_();
        g.narrow(1, 2 * H, H).tanh_();
        g.narrow(1, 3 * H, H).sigmoid_();
        forRows(inner, n, std::max<int64_t>(1, 16384 / H), [&](int64_t a, int64_t z) {
          for (int64_t b = a; b < z; b++) {
            const float *gi = G + b * G4, *gf = gi + H, *gg = gi + 2 * H;
            float* cb = c + b * H;
            for (int64_t j = 0; j < H; j++) cb[j] = gf[j] * cb[j] + gi[j] * gg[j];
          }
        });
        auto tcv = at::from_blob(tc, {n, H}, at::kFloat);
        at::tanh_out(tcv, at::from_blob(c, {n, H}, at::kFloat));
        forRows(inner, n, std::max<int64_t>(1, 16384 / H), [&](int64_t a, int64_t z) {
          for (int64_t b = a; b < z; b++) {
            const float *go = G + b * G4 + 3 * H, *tb = tc + b * H;
            float* hb = h + b * H;
            for (int64_t j = 0; j < H; j++) hb[j] = go[j] * tb[j];
            if (!last) {
              std::memcpy(yp + (off[t] + b) * ldo + d * H, hb, H * sizeof(float));
            } else if (pooling == 0) {
              float* pb = op + b * ldo + d * H;
              for (int64_t j = 0; j < H; j++) pb[j] = std::max(pb[j], hb[j]);
            }
          }
        });
      }
      // final states: a row's state is never touched after its last step (forward) or t = 0 (backward)
      if (last && pooling == 1)
        for (int64_t b = 0; b < B; b++) std::memcpy(op + b * ldo + d * H, h + b * H, H * sizeof(float));
    }, 3);  // 4+ threads: the input GEMMs (two thirds of the FLOPs) on every thread, directions in turn
    if (!last) x = y;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Training recurrence of one LSTM layer as one autograd node.
//
// aten::lstm on CPU runs every time step as about ten ATen ops forward and twice as many autograd
// nodes backward; at sentence-encoder sizes that bookkeeping (and a thread wake-up per op) costs
// as much as the arithmetic. Here the caller does the input projection (one GEMM over all steps;
// a decoder adds its per-sentence input once instead of at every step) and this node runs the
// recurrence: per step one GEMM and fused elementwise passes, the two directions of a BiLSTM side
// by side on two threads. Backward reuses the stored gate activations and states and gets dW_hh
// from one GEMM over all steps.
//
// xg [T, B, D*4H]: input gates x·W_ihᵀ + b_ih + b_hh of each direction (gate order i, f, g, o as in
// aten::lstm); whh [D, 4H, H]; h0, c0 [D, B, H]; lengths: B real lengths, or empty for all T. A row
// is active at steps t < length; an inactive step keeps the state and outputs `fill`, so direction
// 1 (backwards in time) starts from h0 at each row's own last token, as packed sequences do.
namespace {

struct Shapes {
  int64_t T, B, D, H;
};

bool active(const std::vector<int64_t>& len, int64_t b, int64_t t) { return len.empty() || t < len[b]; }

// Rows [0, n_t) hold every row active at step t: GEMMs and gate passes skip the rest (all of the
// inactive rows when lengths decrease down the batch, as after sorting).
std::vector<int64_t> activePrefix(const std::vector<int64_t>& len, int64_t T, int64_t B) {
  std::vector<int64_t> n(T, B);
  if (len.empty()) return n;
  for (int64_t t = 0; t < T; t++) {
    n[t] = 0;
    for (int64_t b = 0; b < B; b++) if (t < len[b]) n[t] = b + 1;
  }
  return n;
}

// out, acts (activated gates), cs and hs (state after every step, every row) of all directions.
void recurrenceForward(const Shapes& s, const at::Tensor& xg, const at::Tensor& whh, const at::Tensor& h0, const at::Tensor& c0,
                       const std::vector<int64_t>& len, float fill, at::Tensor& out, at::Tensor& acts, at::Tensor& cs, at::Tensor& hs) {
  const int64_t T = s.T, B = s.B, D = s.D, H = s.H, G4 = 4 * H, ldx = D * G4, ldo = D * H;
  acts = at::empty({T, B, ldx}, at::kFloat);
  cs = at::empty({T, B, ldo}, at::kFloat);
  hs = at::empty({T, B, ldo}, at::kFloat);
  out = at::empty({T, B, ldo}, at::kFloat);
  const float* xp = xg.data_ptr<float>();
  float *ap = acts.data_ptr<float>(), *cp = cs.data_ptr<float>(), *hp = hs.data_ptr<float>(), *op = out.data_ptr<float>();
  const auto nAct = activePrefix(len, T, B);
  forDirections(D, [&](int64_t d, bool inner) {
    const Sgemm sg = inner ? nullptr : oneDnnSgemm();
    const bool reverse = d == 1;
    const float* W = whh[d].data_ptr<float>();
    const float* h0p = h0[d].data_ptr<float>();
    const float* c0p = c0[d].data_ptr<float>();
    auto tanhC = at::empty({B, H}, at::kFloat);
    float* tcp = tanhC.data_ptr<float>();
    for (int64_t step = 0; step < T; step++) {
      const int64_t t = reverse ? T - 1 - step : step, tp = reverse ? t + 1 : t - 1;
      const float* hPrev = step == 0 ? h0p : hp + tp * B * ldo + d * H;
      const float* cPrev = step == 0 ? c0p : cp + tp * B * ldo + d * H;
      const int64_t ldPrev = step == 0 ? H : ldo;
      float* G = ap + t * B * ldx + d * G4;
      float* C = cp + t * B * ldo + d * H;
      float* Hn = hp + t * B * ldo + d * H;
      float* O = op + t * B * ldo + d * H;
      const float* X = xp + t * B * ldx + d * G4;
      const int64_t n = nAct[t];  // rows >= n are inactive (their gates are never read)
      forRows(inner, n, std::max<int64_t>(1, 8192 / H), [&](int64_t lo, int64_t hi) {
        for (int64_t b = lo; b < hi; b++) std::memcpy(G + b * ldx, X + b * ldx, G4 * sizeof(float));
      });
      if (n > 0) {
        gemm(sg, true, n, G4, H, hPrev, ldPrev, W, H, 1.0f, G, ldx);
        auto g = at::from_blob(G, {n, G4}, {ldx, 1}, at::kFloat);
        g.narrow(1, 0, 2 * H).sigmoid_();
        g.narrow(1, 2 * H, H).tanh_();
        g.narrow(1, 3 * H, H).sigmoid_();
      }
      forRows(inner, B, std::max<int64_t>(1, 16384 / H), [&](int64_t lo, int64_t hi) {
        for (int64_t b = lo; b < hi; b++) {
          const float* cp0 = cPrev + b * ldPrev;
          float* cb = C + b * ldo;
          if (b >= n || !active(len, b, t)) { std::memcpy(cb, cp0, H * sizeof(float)); continue; }
          const float *gi = G + b * ldx, *gf = gi + H, *gg = gi + 2 * H;
          for (int64_t j = 0; j < H; j++) cb[j] = gf[j] * cp0[j] + gi[j] * gg[j];
        }
      });
      if (n > 0) {
        auto tc = tanhC.narrow(0, 0, n);
        at::tanh_out(tc, at::from_blob(C, {n, H}, {ldo, 1}, at::kFloat));
      }
      forRows(inner, B, std::max<int64_t>(1, 16384 / H), [&](int64_t lo, int64_t hi) {
        for (int64_t b = lo; b < hi; b++) {
          float *hb = Hn + b * ldo, *ob = O + b * ldo;
          if (b >= n || !active(len, b, t)) {
            std::memcpy(hb, hPrev + b * ldPrev, H * sizeof(float));
            std::fill(ob, ob + H, fill);
            continue;
          }
          const float *go = G + b * ldx + 3 * H, *tb = tcp + b * H;
          for (int64_t j = 0; j < H; j++) hb[j] = go[j] * tb[j];
          std::memcpy(ob, hb, H * sizeof(float));
        }
      });
    }
  });
}

struct RecurrenceGrads {
  at::Tensor dxg, dwhh, dh0, dc0;
};

RecurrenceGrads recurrenceBackward(const Shapes& s, const at::Tensor& whh, const at::Tensor& h0, const at::Tensor& c0,
                                   const std::vector<int64_t>& len, const at::Tensor& acts, const at::Tensor& cs, const at::Tensor& hs,
                                   const at::Tensor& dout, const at::Tensor& dhN, const at::Tensor& dcN) {
  const int64_t T = s.T, B = s.B, D = s.D, H = s.H, G4 = 4 * H, ldx = D * G4, ldo = D * H;
  RecurrenceGrads r;
  r.dxg = at::zeros({T, B, ldx}, at::kFloat);
  r.dh0 = dhN.defined() ? dhN.contiguous().clone() : at::zeros({D, B, H}, at::kFloat);  // becomes dL/dh0
  r.dc0 = dcN.defined() ? dcN.contiguous().clone() : at::zeros({D, B, H}, at::kFloat);
  const float *ap = acts.data_ptr<float>(), *cp = cs.data_ptr<float>();
  const float* dop = dout.defined() ? dout.data_ptr<float>() : nullptr;
  float* dxp = r.dxg.data_ptr<float>();
  const auto nAct = activePrefix(len, T, B);
  forDirections(D, [&](int64_t d, bool inner) {
    const Sgemm sg = inner ? nullptr : oneDnnSgemm();
    const bool reverse = d == 1;
    const float* W = whh[d].data_ptr<float>();
    const float* c0p = c0[d].data_ptr<float>();
    float* dh = r.dh0[d].data_ptr<float>();
    float* dc = r.dc0[d].data_ptr<float>();
    auto tanhC = at::empty({B, H}, at::kFloat), dhPrev = at::empty({B, H}, at::kFloat);
    float *tcp = tanhC.data_ptr<float>(), *dpp = dhPrev.data_ptr<float>();
    for (int64_t step = T - 1; step >= 0; step--) {
      const int64_t t = reverse ? T - 1 - step : step, tp = reverse ? t + 1 : t - 1;
      const float* cPrev = step == 0 ? c0p : cp + tp * B * ldo + d * H;
      const int64_t ldPrev = step == 0 ? H : ldo;
      const float* G = ap + t * B * ldx + d * G4;
      float* dG = dxp + t * B * ldx + d * G4;
      const int64_t n = nAct[t];
      if (n == 0) continue;
      auto tc = tanhC.narrow(0, 0, n);
      at::tanh_out(tc, at::from_blob(const_cast<float*>(cp + t * B * ldo + d * H), {n, H}, {ldo, 1}, at::kFloat));
      forRows(inner, n, std::max<int64_t>(1, 8192 / H), [&](int64_t lo, int64_t hi) {
        for (int64_t b = lo; b < hi; b++) {
          if (!active(len, b, t)) continue;  // state passed through unchanged: dh, dc too
          const float *gi = G + b * ldx, *gf = gi + H, *gg = gi + 2 * H, *go = gi + 3 * H;
          const float *tb = tcp + b * H, *cp0 = cPrev + b * ldPrev;
          const float* dob = dop ? dop + t * B * ldo + b * ldo + d * H : nullptr;
          float *dhb = dh + b * H, *dcb = dc + b * H;
          float *di = dG + b * ldx, *df = di + H, *dg = di + 2 * H, *dO = di + 3 * H;
          for (int64_t j = 0; j < H; j++) {
            const float dhj = dhb[j] + (dob ? dob[j] : 0.0f);
            const float i = gi[j], f = gf[j], g = gg[j], o = go[j], tc = tb[j];
            const float dct = dcb[j] + dhj * o * (1.0f - tc * tc);
            dO[j] = dhj * tc * o * (1.0f - o);
            di[j] = dct * g * i * (1.0f - i);
            df[j] = dct * cp0[j] * f * (1.0f - f);
            dg[j] = dct * i * (1.0f - g * g);
            dcb[j] = dct * f;
          }
        }
      });
      // dh_{t-1} = dG·W_hh for active rows; inactive rows keep dh (their state was copied)
      gemm(sg, false, n, H, G4, dG, ldx, W, H, 0.0f, dpp, H);
      forRows(inner, n, std::max<int64_t>(1, 16384 / H), [&](int64_t lo, int64_t hi) {
        for (int64_t b = lo; b < hi; b++)
          if (active(len, b, t)) std::memcpy(dh + b * H, dpp + b * H, H * sizeof(float));
      });
    }
  });
  // dW_hh = Σ_t dG_tᵀ·h_{t-1}: one GEMM over all steps per direction
  std::vector<at::Tensor> dW;
  for (int64_t d = 0; d < D; d++) {
    auto hd = hs.narrow(2, d * H, H);
    auto hPrev = d == 0 ? at::cat({h0[d].unsqueeze(0), hd.narrow(0, 0, T - 1)}, 0) : at::cat({hd.narrow(0, 1, T - 1), h0[d].unsqueeze(0)}, 0);
    auto dGd = r.dxg.narrow(2, d * G4, G4).reshape({T * B, G4});
    dW.push_back(at::mm(dGd.t(), hPrev.reshape({T * B, H})));
  }
  r.dwhh = at::stack(dW, 0);
  return r;
}

struct LstmRecurrenceFn : public torch::autograd::Function<LstmRecurrenceFn> {
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const at::Tensor& xg, const at::Tensor& whh,
                                                const at::Tensor& h0, const at::Tensor& c0, std::vector<int64_t> lengths, double fill) {
    const Shapes s{xg.size(0), xg.size(1), whh.size(0), whh.size(2)};
    auto xgC = xg.contiguous(), whhC = whh.contiguous(), h0C = h0.contiguous(), c0C = c0.contiguous();
    at::Tensor out, acts, cs, hs;
    recurrenceForward(s, xgC, whhC, h0C, c0C, lengths, static_cast<float>(fill), out, acts, cs, hs);
    // final states: forward direction after its last step (frozen after each row's end), backward at t = 0
    std::vector<at::Tensor> hN, cN;
    for (int64_t d = 0; d < s.D; d++) {
      const int64_t tEnd = d == 0 ? s.T - 1 : 0;
      hN.push_back(hs[tEnd].narrow(1, d * s.H, s.H));
      cN.push_back(cs[tEnd].narrow(1, d * s.H, s.H));
    }
    ctx->save_for_backward({whhC, h0C, c0C});
    ctx->saved_data["acts"] = acts;
    ctx->saved_data["cs"] = cs;
    ctx->saved_data["hs"] = hs;
    ctx->saved_data["lengths"] = lengths;
    ctx->saved_data["shape"] = std::vector<int64_t>{s.T, s.B, s.D, s.H};
    return {out, at::stack(hN, 0), at::stack(cN, 0)};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list go) {
    auto saved = ctx->get_saved_variables();
    auto sh = ctx->saved_data["shape"].toIntVector();
    const Shapes s{sh[0], sh[1], sh[2], sh[3]};
    auto dout = go[0].defined() ? go[0].contiguous() : at::Tensor();
    auto g = recurrenceBackward(s, saved[0], saved[1], saved[2], ctx->saved_data["lengths"].toIntVector(), ctx->saved_data["acts"].toTensor(),
                                ctx->saved_data["cs"].toTensor(), ctx->saved_data["hs"].toTensor(), dout, go[1], go[2]);
    return {g.dxg, g.dwhh, g.dh0, g.dc0, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

std::vector<at::Tensor> lstmRecurrence(const at::Tensor& xg, const at::Tensor& whh, const at::Tensor& h0, const at::Tensor& c0,
                                       const std::vector<int64_t>& lengths, double fill) {
  TORCH_CHECK(whh.dim() == 3 && whh.size(1) == 4 * whh.size(2) && (whh.size(0) == 1 || whh.size(0) == 2),
              "lstmRecurrence: w_hh must be [D, 4H, H] with D = 1 or 2, got ", whh.sizes());
  const int64_t D = whh.size(0), H = whh.size(2);
  TORCH_CHECK(xg.dim() == 3 && xg.size(2) == D * 4 * H && xg.size(0) >= 1, "lstmRecurrence: input gates must be [T, B, ", D * 4 * H, "], got ", xg.sizes());
  const int64_t T = xg.size(0), B = xg.size(1);
  TORCH_CHECK(h0.sizes() == at::IntArrayRef({D, B, H}) && c0.sizes() == at::IntArrayRef({D, B, H}),
              "lstmRecurrence: h0 and c0 must be [", D, ", ", B, ", ", H, "], got ", h0.sizes(), " and ", c0.sizes());
  for (const auto* t : {&xg, &whh, &h0, &c0})
    TORCH_CHECK(t->scalar_type() == at::kFloat && t->device().is_cpu(), "lstmRecurrence: float32 CPU tensors only");
  TORCH_CHECK(lengths.empty() || static_cast<int64_t>(lengths.size()) == B, "lstmRecurrence: ", lengths.size(), " lengths for a batch of ", B);
  for (auto l : lengths) TORCH_CHECK(l >= 1 && l <= T, "lstmRecurrence: length ", l, " out of range [1, ", T, "]");
  return LstmRecurrenceFn::apply(xg, whh, h0, c0, lengths, fill);
}

}  // namespace xling
