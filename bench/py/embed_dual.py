#!/usr/bin/python3
"""PyTorch side of bench/embed-dual: text in, vectors out with the embedding path of
../shared/reference/ngram_dual_reference.py (Python hashed character 1–5-grams and words, then
nn.EmbeddingBag mean → tanh → projection → L2 norm, batches of 2048), at the sizes of the xling
model (feature rows, dims). Weights are random: throughput only."""
import json, sys, time, zlib
import torch, torch.nn as nn, torch.nn.functional as F
cfg = json.load(open(sys.argv[1])); torch.set_num_threads(cfg['threads']); torch.manual_seed(0)
BUCKETS, D, OUT = cfg['buckets'], cfg['dim'], cfg['outDim']
LO, HI = cfg['ngrams']

def feats(s):
    s = ' ' + s.lower() + ' '; out = []
    for n in range(LO, HI + 1):
        for i in range(len(s) - n + 1):
            out.append(zlib.crc32(s[i:i + n].encode()) % BUCKETS)
    for w in s.split():
        out.append(zlib.crc32(b'w:' + w.encode()) % BUCKETS)
    return out or [0]

class Enc(nn.Module):
    def __init__(s):
        super().__init__(); s.bag = nn.EmbeddingBag(BUCKETS, D, mode='mean'); s.proj = nn.Linear(D, OUT)
    def forward(s, ids, offs): return F.normalize(s.proj(torch.tanh(s.bag(ids, offs))), dim=1)

def pack(fl):
    offs = torch.tensor([0] + [len(f) for f in fl[:-1]], dtype=torch.long).cumsum(0)
    return torch.tensor([i for f in fl for i in f], dtype=torch.long), offs

m = Enc().eval(); ss = cfg['sentences']
with torch.no_grad():
    m(*pack([feats(s) for s in ss[:500]]))  # warm-up
    t0 = time.perf_counter()
    E = torch.cat([m(*pack([feats(s) for s in ss[i:i + 2048]])) for i in range(0, len(ss), 2048)])
    dt = time.perf_counter() - t0
print(json.dumps({'seconds': dt, 'sents_per_s': len(ss) / dt, 'rows': E.shape[0]}))
