#!/usr/bin/python3
"""PyTorch side of bench/embed: the reference's embedding path (BiLSTM-512 max-pool encoder,
batches of 256 sentences sorted by length, no_grad) on the same token sequences."""
import json, sys, time
import torch, torch.nn as nn, torch.nn.functional as F
cfg = json.load(open(sys.argv[1])); torch.set_num_threads(cfg['threads']); torch.manual_seed(0)
class BiLSTMMax(nn.Module):
    def __init__(s, V, E=320, H=512):
        super().__init__(); s.emb = nn.Embedding(V, E, padding_idx=0); s.lstm = nn.LSTM(E, H, 1, bidirectional=True, batch_first=True)
    def forward(s, x):
        lengths = (x != 0).sum(1)
        p = nn.utils.rnn.pack_padded_sequence(s.emb(x), lengths.cpu(), batch_first=True, enforce_sorted=False)
        o, _ = s.lstm(p); o, _ = nn.utils.rnn.pad_packed_sequence(o, batch_first=True, padding_value=-1e9)
        return o.max(1)[0]
def pad(seqs):
    L = max(len(s) for s in seqs); t = torch.zeros(len(seqs), L, dtype=torch.long)
    for i, s in enumerate(seqs): t[i, :len(s)] = torch.tensor(s)
    return t
enc = BiLSTMMax(cfg['vocab']).eval(); sents = cfg['sents']
t0 = time.perf_counter()
with torch.no_grad():
    order = sorted(range(len(sents)), key=lambda i: len(sents[i])); E = torch.zeros(len(sents), 1024)
    for i in range(0, len(order), 256):
        idx = order[i:i + 256]; E[idx] = F.normalize(enc(pad([sents[j] for j in idx])), dim=1)
dt = time.perf_counter() - t0
print(json.dumps({'seconds': dt, 'sents_per_s': len(sents) / dt}))
