#!/usr/bin/python3
"""PyTorch side of bench/train-dual: the dual encoder of configs/fast-1h.json (and its Transformer
variant) as a PyTorch practitioner writes it — nn.EmbeddingBag(sparse=True) over hashed feature
ids, torch.optim.SparseAdam for that table, Adam for the rest, in-batch additive-margin softmax in
both directions — trained on the exact feature batches xling uses (raw arrays + a JSON index from bench/train-dual).
Prints JSON timings."""
import json, os, sys, time
import numpy as np, torch, torch.nn as nn, torch.nn.functional as F

cfg = json.load(open(sys.argv[1]))
torch.set_num_threads(cfg['threads']); torch.manual_seed(0)
m = cfg['model']; rows, D, OUT = cfg['rows'], m['dim'], m['outDim']
MARGIN, SCALE = cfg['margin'], cfg['scale']


class Averaging(nn.Module):
    """Sentence = mean of its feature rows (per-sample weights 1/count), tanh, projection."""
    def __init__(s):
        super().__init__(); s.bag = nn.EmbeddingBag(rows, D, mode='sum', sparse=True)
        nn.init.normal_(s.bag.weight, 0, m['initStd']); s.proj = nn.Linear(D, OUT)
    def forward(s, b):
        h = F.dropout(s.bag(b['ids'], b['offsets'], per_sample_weights=b['weights']), m['dropout'], s.training)
        return s.proj(torch.tanh(h))


class Transformer(nn.Module):
    """Token = sum of its subword and n-gram rows; learned positions; post-norm Transformer; max+mean pooling."""
    def __init__(s):
        super().__init__(); s.bag = nn.EmbeddingBag(rows, D, mode='sum', sparse=True)
        nn.init.normal_(s.bag.weight, 0, m['initStd']); s.pos = nn.Embedding(m['maxLen'], D)
        layer = nn.TransformerEncoderLayer(D, m['heads'], m['ff'], m['dropout'], batch_first=True)
        s.tr = nn.TransformerEncoder(layer, m['layers']); s.proj = nn.Linear(2 * D, OUT)
    def forward(s, b):
        B, T = b['mask'].shape
        h = F.dropout(s.bag(b['ids'], b['offsets'], per_sample_weights=b['weights']).view(B, T, D), m['dropout'], s.training)
        h = s.tr(h + s.pos(torch.arange(T).unsqueeze(0)), src_key_padding_mask=~b['mask'])
        mk = b['mask'].unsqueeze(2)
        mx = h.masked_fill(~mk, float('-inf')).max(1)[0]
        mean = (h * mk).sum(1) / mk.sum(1).clamp_min(1)
        return s.proj(torch.tanh(torch.cat([mx, mean], 1)))


enc = Averaging() if cfg['kind'] == 'averaging' else Transformer()
sparse = [enc.bag.weight]; dense = [p for n, p in enc.named_parameters() if not n.startswith('bag.')]
opt_s = torch.optim.SparseAdam(sparse, cfg['lr']); opt_d = torch.optim.Adam(dense, cfg['lr'])
enc.train()


raw = open(os.path.join(os.path.dirname(sys.argv[1]), cfg['data']), 'rb').read()


def array(where, dtype):
    """[byte offset, count] of a raw array in the data file, as a tensor."""
    return torch.from_numpy(np.frombuffer(raw, dtype=dtype, count=where[1], offset=where[0]).copy())


def tensors(side):
    """One side of a batch: the bags, ready for nn.EmbeddingBag."""
    out = {'ids': array(side['ids'], np.int32).long(), 'offsets': array(side['offsets'], np.int64)[:-1], 'weights': array(side['weights'], np.float32)}
    if 'lengths' in side:
        lengths = array(side['lengths'], np.int32)
        out['mask'] = torch.arange(int(lengths.max())).unsqueeze(0) < lengths.unsqueeze(1)
    return out


def step(bt):
    x = F.normalize(enc(bt['src']), dim=1); y = F.normalize(enc(bt['trg']), dim=1)
    n = x.shape[0]; lab = torch.arange(n)
    sim = (x @ y.t() - MARGIN * torch.eye(n)) * SCALE
    loss = F.cross_entropy(sim, lab) + F.cross_entropy(sim.t(), lab)
    opt_s.zero_grad(); opt_d.zero_grad(); loss.backward(); opt_s.step(); opt_d.step()
    return loss.item()


batches = [{'src': tensors(b['src']), 'trg': tensors(b['trg'])} for b in cfg['batches']]  # tensors built outside the clock
for bt in batches[:cfg['warmup']]: step(bt)
t0 = time.perf_counter(); pairs = 0; losses = []
for bt in batches[cfg['warmup']:]:
    losses.append(step(bt)); pairs += bt['src']['offsets'].shape[0] if cfg['kind'] == 'averaging' else bt['src']['mask'].shape[0]
dt = time.perf_counter() - t0
print(json.dumps({'seconds': dt, 'pairs': pairs, 'pairs_per_s': pairs / dt, 'first_loss': losses[0], 'last_loss': losses[-1],
                  'params': sum(p.numel() for p in enc.parameters())}))
