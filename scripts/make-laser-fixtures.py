#!/usr/bin/python3
"""Fixtures of the LASER import, committed so CI needs no Python:
  test/fixtures/laser/spm-unigram.model, spm-bpe.model   spm_train on the shared training corpus
  test/fixtures/laser/spm-ids.json.gz                    python3-sentencepiece's ids for every
                                                         sentence of the shared dev set (40 languages:
                                                         hashes of all, the ids of the first 50 rows)
  test/fixtures/laser/tiny.pt                            a random 2-layer BiLSTM in LASER's checkpoint
                                                         layout (params, model, dictionary), zip format
  test/fixtures/laser/tiny-legacy.pt, tiny.cvocab        the same in the legacy format without a
                                                         dictionary, and its fairseq dictionary file
  test/fixtures/laser/evil.pt                            a checkpoint naming a disallowed global
  test/fixtures/laser/ref.json, ref-vectors.npy          sentences, LASER token ids, and the vectors of
                                                         independent PyTorch code following laser_encoders
Run from the repository root: /usr/bin/python3 scripts/make-laser-fixtures.py
(Debian python3-torch 1.13, python3-sentencepiece 0.1.97, sentencepiece's spm_train)."""
import gzip, io, json, os, pickle, re, subprocess, sys, tempfile
import numpy as np
import sentencepiece as spm
import torch
import torch.nn as nn

OUT = 'test/fixtures/laser'
DATA = '../shared/data/gettext'
os.makedirs(OUT, exist_ok=True)


def read_tsv(path):
    with gzip.open(path, 'rt', encoding='utf-8') as f:
        rows = [line.rstrip('\n').split('\t') for line in f]
    return rows[0], rows[1:]


# 1) SentencePiece models trained with spm_train on the shared corpus (kept if present; --retrain)
if '--retrain' in sys.argv or not all(os.path.exists(os.path.join(OUT, f'spm-{k}.model')) for k in ('unigram', 'bpe')):
  with tempfile.TemporaryDirectory() as tmp:
    header, rows = read_tsv(f'{DATA}/train.tsv.gz')
    corpus = os.path.join(tmp, 'corpus.txt')
    with open(corpus, 'w', encoding='utf-8') as f:
        for r in rows[::4]:
            for cell in r:
                if cell.strip():
                    f.write(cell + '\n')
    common = ['--input', corpus, '--input_sentence_size=150000', '--shuffle_input_sentence=true', '--minloglevel=1']
    if '--bpe-only' not in sys.argv:
        subprocess.run(['spm_train', *common, '--model_prefix', os.path.join(OUT, 'spm-unigram'), '--model_type=unigram',
                        '--vocab_size=4000', '--byte_fallback=true'], check=True)
    # BPE's vocabulary holds every character kept by character_coverage: 0.995 keeps it small
    subprocess.run(['spm_train', *common, '--model_prefix', os.path.join(OUT, 'spm-bpe'), '--model_type=bpe',
                    '--vocab_size=4000', '--character_coverage=0.995'], check=True)
  for kind in ('unigram', 'bpe'):
    if os.path.exists(os.path.join(OUT, f'spm-{kind}.vocab')):
        os.remove(os.path.join(OUT, f'spm-{kind}.vocab'))

dev_header, dev_rows = read_tsv(f'{DATA}/dev.tsv.gz')
dev_sentences = [r[j] if j < len(r) else '' for j in range(len(dev_header)) for r in dev_rows]


def fnv1a(text):
    h = 0x811c9dc5
    for c in text.encode('utf-8'):
        h = ((h ^ c) * 0x01000193) & 0xffffffff
    return h


# every sentence: a 32-bit FNV-1a hash of its ids written as "id id id"; the first FULL rows of each
# language: the ids themselves (the whole set would be 2 MB)
FULL = 50
ids = {'langs': dev_header, 'rows': len(dev_rows), 'full': FULL}
for kind in ('unigram', 'bpe'):
    sp = spm.SentencePieceProcessor(model_file=os.path.join(OUT, f'spm-{kind}.model'))
    enc = [' '.join(map(str, sp.encode(s))) for s in dev_sentences]
    ids[kind] = {'hash': ''.join(f'{fnv1a(e):08x}' for e in enc),
                 'ids': [e for i, e in enumerate(enc) if i % len(dev_rows) < FULL]}
with gzip.open(os.path.join(OUT, 'spm-ids.json.gz'), 'wt', encoding='utf-8', compresslevel=9) as f:
    json.dump(ids, f, ensure_ascii=False, separators=(',', ':'))

# 2) LASER's preprocessing (laser_encoders/laser_tokenizer.py): characters of Unicode category C
#    → space, sacremoses' MosesPunctNormalizer('en', perl_parity=True) with LASER's two overrides,
#    lower-casing, SentencePiece pieces. sacremoses is not packaged in Debian: its substitution list
#    (sacremoses/normalize.py, as LaserTokenizer leaves it) is written out here and applied with
#    Python's re, as sacremoses does.
import unicodedata
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
    (r'"([,.]+)', r'\g<1>"'),
    ("(\\d)\u00A0(\\d)", r"\g<1>.\g<2>"),
]


def laser_preprocess(text):
    text = ''.join(' ' if unicodedata.category(c).startswith('C') else c for c in text)
    for pat, rep in MOSES_EN:
        text = re.sub(pat, rep, text)
    return text.strip().lower()


sp = spm.SentencePieceProcessor(model_file=os.path.join(OUT, 'spm-unigram.model'))
pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size())]
# the fairseq dictionary: <s> <pad> </s> <unk>, then pieces in another order than the spm model's,
# some left out (they map to <unk>), as a LASER .cvocab would
rng = np.random.RandomState(7)
kept = [p for i, p in enumerate(pieces) if not sp.is_control(i) and not sp.is_unknown(i) and i % 9 != 5]
rng.shuffle(kept)
dictionary = {'<s>': 0, '<pad>': 1, '</s>': 2, '<unk>': 3}
for p in kept:
    dictionary[p] = len(dictionary)
with open(os.path.join(OUT, 'tiny.cvocab'), 'w', encoding='utf-8') as f:
    for p in kept:
        f.write(f'{p} {int(rng.randint(1, 1000))}\n')


# 3) LASER's LstmEncoder (laser_encoders/models.py): embedding (padding_idx), packed multi-layer
#    BiLSTM, padded outputs at -inf, max over time
class LaserLstmEncoder(nn.Module):
    def __init__(self, num_embeddings, padding_idx, embed_dim=320, hidden_size=512, num_layers=1,
                 bidirectional=False, left_pad=True, padding_value=0.0):
        super().__init__()
        self.padding_idx = padding_idx
        self.embed_tokens = nn.Embedding(num_embeddings, embed_dim, padding_idx=padding_idx)
        self.lstm = nn.LSTM(input_size=embed_dim, hidden_size=hidden_size, num_layers=num_layers, bidirectional=bidirectional)
        self.num_layers, self.bidirectional, self.hidden_size = num_layers, bidirectional, hidden_size
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


torch.manual_seed(2026)
params = dict(num_embeddings=len(dictionary), padding_idx=1, embed_dim=8, hidden_size=8, num_layers=2,
              bidirectional=True, left_pad=True, padding_value=0.0)
enc = LaserLstmEncoder(**params).eval()
with torch.no_grad():
    enc.embed_tokens.weight.normal_(0, 0.5)
    enc.embed_tokens.weight[1].zero_()
state = {'params': params, 'model': enc.state_dict(), 'dictionary': dictionary}
torch.save(state, os.path.join(OUT, 'tiny.pt'))
# the legacy file holds no dictionary: it is read with tiny.cvocab (`--vocab`)
torch.save({'params': params, 'model': enc.state_dict()}, os.path.join(OUT, 'tiny-legacy.pt'), _use_new_zipfile_serialization=False)


# a checkpoint that names a global outside the allow-list (never executed by the reader)
class Evil:
    def __reduce__(self):
        return (os.system, ('echo pwned',))


torch.save({'params': params, 'model': {}, 'x': Evil()}, os.path.join(OUT, 'evil.pt'))

# plain pickles of protocols 2 and 5 (framing, memoize, STACK_GLOBAL, bytes, big ints, a Namespace)
import argparse, collections
misc = {'ns': argparse.Namespace(arch='laser_lstm', layers=5, lr=[0.001]), 'od': collections.OrderedDict([('b', 1), ('a', (2.5, None))]),
        'bytes': b'\x00\xffab', 'big': 2 ** 70, 'neg': -123456789012, 'text': 'ünïcödé ▁x', 'flags': (True, False), 'set': {3}}
misc['shared'] = misc['od']
for proto in (2, 5):
    with open(os.path.join(OUT, f'misc-p{proto}.pkl'), 'wb') as f:
        pickle.dump(misc, f, protocol=proto)

# 4) reference vectors: sentences of 12 languages of the dev set plus hand-made edge cases
langs = ['en', 'de', 'fr', 'es', 'ru', 'ar', 'ja', 'zh', 'ko', 'ta', 'el', 'tr']
sentences = []
for lang in langs:
    j = dev_header.index(lang)
    sentences += [r[j] for r in dev_rows[:12]]
sentences += ['', '   ', 'He said „Hello“ — and left…', '\tTabs\u00a0and\u200bzero‑width\x07bell',
              'L’homme « est » là ; 100 %', 'ÀÉÎ ΣΊΣΥΦΟΣ İstanbul', 'a (b) c , d', '２０２４年の「テスト」',
              'emoji 🤖 and \U0001F600', '``quoted\'\' text']


def laser_ids(line):
    toks = ' '.join(sp.encode(laser_preprocess(line), out_type=str))
    toks = re.sub(r'\s+', ' ', toks).strip().split()
    return [dictionary.get(t, 3) for t in toks] + [2]


tokens = [laser_ids(s) for s in sentences]
# LASER's batching: sorted by length (longest first), right-padded with <pad>, in batches of 7
order = np.argsort(-np.array([len(t) for t in tokens]), kind='quicksort')
vecs = np.zeros((len(sentences), 2 * params['hidden_size']), dtype=np.float32)
with torch.no_grad():
    for b in range(0, len(order), 7):
        idx = order[b:b + 7]
        T = len(tokens[idx[0]])
        toks = torch.full((len(idx), T), 1, dtype=torch.long)
        for i, k in enumerate(idx):
            toks[i, :len(tokens[k])] = torch.tensor(tokens[k])
        out = enc(toks, torch.tensor([len(tokens[k]) for k in idx]))
        vecs[idx] = out.numpy()
np.save(os.path.join(OUT, 'ref-vectors.npy'), vecs)
with open(os.path.join(OUT, 'ref.json'), 'w', encoding='utf-8') as f:
    json.dump({'sentences': sentences, 'preprocessed': [laser_preprocess(s) for s in sentences],
               'pieces': [sp.encode(laser_preprocess(s), out_type=str) for s in sentences],
               'ids': tokens}, f, ensure_ascii=False, indent=0)
print('wrote', sorted(os.listdir(OUT)))
