#!/usr/bin/python3
"""PyTorch side of bench/train-step: the two reference configurations of
../shared/reference/torch_reference.py (same modules, same optimizer, same clipping), trained
on the exact token batches xling uses (JSON from bench/train-step). Prints JSON timings."""
import json, sys, time
import torch, torch.nn as nn, torch.nn.functional as F

cfg = json.load(open(sys.argv[1]))
torch.set_num_threads(cfg['threads']); torch.manual_seed(0)
V = cfg['vocab']; MAXLEN = 64

def pad(seqs):
    L = max(len(s) for s in seqs); t = torch.zeros(len(seqs), L, dtype=torch.long)
    for i, s in enumerate(seqs): t[i, :len(s)] = torch.tensor(s)
    return t

class BiLSTMMax(nn.Module):
    def __init__(s, V, E=320, H=512, layers=1):
        super().__init__(); s.emb = nn.Embedding(V, E, padding_idx=0)
        s.lstm = nn.LSTM(E, H, layers, bidirectional=True, batch_first=True); s.dim = 2 * H
    def forward(s, x):
        lengths = (x != 0).sum(1)
        p = nn.utils.rnn.pack_padded_sequence(s.emb(x), lengths.cpu(), batch_first=True, enforce_sorted=False)
        o, _ = s.lstm(p); o, _ = nn.utils.rnn.pad_packed_sequence(o, batch_first=True, padding_value=-1e9)
        return o.max(1)[0]

class Decoder(nn.Module):
    def __init__(s, V, sdim, E=320, H=1024, nl=2):
        super().__init__(); s.emb = nn.Embedding(V, E, padding_idx=0); s.lemb = nn.Embedding(nl, 32)
        s.init = nn.Linear(sdim, H); s.lstm = nn.LSTM(E + sdim + 32, H, batch_first=True); s.out = nn.Linear(H, V)
    def forward(s, sent, tgt_in, lang):
        B, T = tgt_in.shape
        ctx = torch.cat([sent, s.lemb(lang)], 1).unsqueeze(1).expand(B, T, -1)
        h0 = torch.tanh(s.init(sent)).unsqueeze(0)
        o, _ = s.lstm(torch.cat([s.emb(tgt_in), ctx], 2), (h0, torch.zeros_like(h0)))
        return s.out(o)

class TransformerPool(nn.Module):
    def __init__(s, V, D=256, layers=3, heads=4, out=512):
        super().__init__(); s.emb = nn.Embedding(V, D, padding_idx=0); s.pos = nn.Embedding(MAXLEN, D)
        s.tr = nn.TransformerEncoder(nn.TransformerEncoderLayer(D, heads, 4 * D, 0.1, batch_first=True), layers)
        s.proj = nn.Linear(2 * D, out); s.dim = out
    def forward(s, x):
        m = x == 0; h = s.emb(x) + s.pos(torch.arange(x.shape[1]).unsqueeze(0))
        h = s.tr(h, src_key_padding_mask=m)
        mx = h.masked_fill(m.unsqueeze(2), -1e9).max(1)[0]
        mean = h.masked_fill(m.unsqueeze(2), 0).sum(1) / (~m).sum(1, keepdim=True)
        return s.proj(torch.cat([mx, mean], 1))

kind = cfg['kind']
if kind == 'laser':
    encm = BiLSTMMax(V); dec = Decoder(V, encm.dim); params = list(encm.parameters()) + list(dec.parameters())
else:
    encm = TransformerPool(V); params = list(encm.parameters())
opt = torch.optim.Adam(params, 1e-3 if kind == 'laser' else 5e-4)
encm.train()

def step(bt):
    if kind == 'laser':
        src = pad(bt['src']); tgt = bt['tgt']
        tin = pad([[2] + t[:-1] for t in tgt]); tout = pad(tgt)
        logits = dec(encm(src), tin, torch.zeros(len(tgt), dtype=torch.long))
        loss = F.cross_entropy(logits.reshape(-1, V), tout.reshape(-1), ignore_index=0)
    else:
        x = F.normalize(encm(pad(bt['src'])), dim=1)
        y = F.normalize(encm(pad(bt['tgt'])), dim=1)
        n = len(bt['src'])
        sim = x @ y.t(); sim = sim - 0.3 * torch.eye(n); sim = sim * 20
        lab = torch.arange(n); loss = F.cross_entropy(sim, lab) + F.cross_entropy(sim.t(), lab)
    opt.zero_grad(); loss.backward(); nn.utils.clip_grad_norm_(params, 5); opt.step()
    return loss.item()

batches = cfg['batches']
for bt in batches[:cfg['warmup']]: step(bt)
t0 = time.perf_counter(); pairs = 0; losses = []
for bt in batches[cfg['warmup']:]:
    losses.append(step(bt)); pairs += len(bt['src'])
dt = time.perf_counter() - t0
print(json.dumps({'seconds': dt, 'pairs': pairs, 'pairs_per_s': pairs / dt, 'first_loss': losses[0], 'last_loss': losses[-1],
                  'params': sum(p.numel() for p in params)}))
