#!/usr/bin/python3
"""PyTorch side of bench/laser-import.ts.
  make OUT.pt SPM.model: a LASER2-sized BiLSTM checkpoint in LASER's layout (params, model,
      dictionary): 5 layers x 512 per direction, 320-d embeddings over 50,004 rows, random weights;
      the dictionary maps the SentencePiece model's pieces to ids spread over the table.
  run CFG.json: embeds the sentences as laser_encoders runs them — LaserTokenizer's preprocessing
      (non-printing chars, Moses punctuation as sacremoses with perl parity, lower-case, spm pieces),
      SentenceEncoder._tokenize, batches sorted by length and capped at max_tokens=12000 (LASER's
      embed default), LaserLstmEncoder (packed BiLSTM, padded steps at -inf in the max-pool), no_grad."""
import json, re, sys, time, unicodedata
import numpy as np
import torch, torch.nn as nn
import sentencepiece as spm

MOSES_EN = [
    (r"\r", r""), (r"\(", r" ("), (r"\)", r") "), (r" +", r" "), (r"\) ([.!:?;,])", r")\g<1>"),
    (r"\( ", r"("), (r" \)", r")"), (r"(\d) %", r"\g<1>%"), (r" :", r":"), (r" ;", r";"),
    (r"`", r"'"), (r"''", r' " '),
    ("„", r'"'), ("“", r'"'), ("”", r'"'), ("–", r"-"), ("—", r" - "), (r" +", r" "), ("´", r"'"),
    ("([a-zA-Z])‘([a-zA-Z])", r"\g<1>'\g<2>"), ("([a-zA-Z])’([a-zA-Z])", r"\g<1>'\g<2>"),
    ("‘", r'"'), ("‚", r'"'), ("’", r'"'), (r"''", r'"'), ("´´", r'"'), ("…", r"..."),
    ("\u00A0«\u00A0", r' "'), ("«\u00A0", r'"'), ("«", r'"'), ("\u00A0»\u00A0", r'" '), ("\u00A0»", r'"'), ("»", r'"'),
    ("\u00A0%", r"%"), ("nº\u00A0", "nº "), ("\u00A0:", r":"), ("\u00A0ºC", " ºC"), ("\u00A0cm", r" cm"),
    ("\u00A0\\?", "?"), ("\u00A0\\!", "!"), ("\u00A0;", r";"), (",\u00A0", r", "), (r" +", r" "),
    (r'"([,.]+)', r'\g<1>"'), ("(\\d)\u00A0(\\d)", r"\g<1>.\g<2>"),
]


class LaserLstmEncoder(nn.Module):
    def __init__(self, num_embeddings, padding_idx, embed_dim=320, hidden_size=512, num_layers=1,
                 bidirectional=False, left_pad=True, padding_value=0.0):
        super().__init__()
        self.padding_idx, self.num_layers, self.bidirectional, self.hidden_size = padding_idx, num_layers, bidirectional, hidden_size
        self.embed_tokens = nn.Embedding(num_embeddings, embed_dim, padding_idx=padding_idx)
        self.lstm = nn.LSTM(input_size=embed_dim, hidden_size=hidden_size, num_layers=num_layers, bidirectional=bidirectional)
        self.padding_value = padding_value

    def forward(self, src_tokens, src_lengths):
        bsz = src_tokens.size(0)
        x = self.embed_tokens(src_tokens).transpose(0, 1)
        packed = nn.utils.rnn.pack_padded_sequence(x, src_lengths.tolist())
        n = (2 if self.bidirectional else 1) * self.num_layers
        h0 = x.new_zeros(n, bsz, self.hidden_size)
        out, _ = self.lstm(packed, (h0, h0.clone()))
        x, _ = nn.utils.rnn.pad_packed_sequence(out, padding_value=self.padding_value)
        mask = src_tokens.eq(self.padding_idx).t().unsqueeze(-1)
        if mask.any():
            x = x.float().masked_fill_(mask, float('-inf'))
        return x.max(dim=0)[0]


if sys.argv[1] == 'make':
    torch.manual_seed(0)
    params = dict(num_embeddings=50004, padding_idx=1, embed_dim=320, hidden_size=512, num_layers=5, bidirectional=True, left_pad=True, padding_value=0.0)
    enc = LaserLstmEncoder(**params)
    sp = spm.SentencePieceProcessor(model_file=sys.argv[3])
    rng = np.random.RandomState(0)
    ids = rng.permutation(50000)[:sp.get_piece_size()] + 4
    dictionary = {'<s>': 0, '<pad>': 1, '</s>': 2, '<unk>': 3}
    for i in range(sp.get_piece_size()):
        if not sp.is_control(i) and not sp.is_unknown(i):
            dictionary[sp.id_to_piece(i)] = int(ids[i])
    torch.save({'params': params, 'model': enc.state_dict(), 'dictionary': dictionary}, sys.argv[2])
    print(json.dumps({'ok': 1}))
    sys.exit(0)

cfg = json.load(open(sys.argv[2]))
torch.set_num_threads(cfg['threads'])
state = torch.load(cfg['checkpoint'])
enc = LaserLstmEncoder(**state['params']); enc.load_state_dict(state['model']); enc.eval()
dictionary = state['dictionary']
sp = spm.SentencePieceProcessor(model_file=cfg['spm'])
sents = cfg['sents']


def tokenize(text):
    text = ''.join(' ' if unicodedata.category(c).startswith('C') else c for c in text)
    for pat, rep in MOSES_EN:
        text = re.sub(pat, rep, text)
    pieces = ' '.join(sp.encode(text.strip().lower(), out_type=str))
    toks = re.sub(r'\s+', ' ', pieces).strip().split()
    return torch.LongTensor([dictionary.get(t, 3) for t in toks] + [2])


def run():
    c0 = time.process_time()
    t0 = time.perf_counter()
    tokens = [tokenize(s) for s in sents]
    t1 = time.perf_counter()
    lengths = np.array([t.numel() for t in tokens])
    order = np.argsort(-lengths, kind='quicksort')
    out = np.zeros((len(sents), 1024), dtype=np.float32)
    with torch.no_grad():
        b = []
        ntok = 0
        batches = []
        for i in order:
            if b and ntok + lengths[i] > 12000:
                batches.append(b); b = []; ntok = 0
            b.append(i); ntok += lengths[i]
        if b: batches.append(b)
        for b in batches:
            toks = torch.full((len(b), lengths[b[0]]), 1, dtype=torch.long)
            for k, i in enumerate(b):
                toks[k, :lengths[i]] = tokens[i]
            out[b] = enc(toks, torch.LongTensor(lengths[b])).numpy()
    t2 = time.perf_counter()
    return t2 - t0, t1 - t0, time.process_time() - c0, out


total, tok, cpu, out = run()
np.save(cfg['out'], out)
print(json.dumps({'seconds': total, 'tokenize_seconds': tok, 'cpu_seconds': cpu, 'sents_per_s': len(sents) / total}))
