#!/usr/bin/env python3
"""Parity fixtures for `xling import hf` (test/models/hf-import.test.ts, test/text/hf-tokenizer.test.ts).

Writes under test/fixtures/hf/ (run from the repository root with Debian's python3-torch and
sentencepiece, then `node scripts/hf-fixtures-tokenize.mjs` is called for the reference ids):

- bert/tokenizer.json (also distilbert's): a BERT WordPiece tokenizer (BertNormalizer lower-casing and stripping
  accents, CJK split, BertPreTokenizer, [CLS] … [SEP]) whose vocabulary is learned here from the
  shared training corpus (all 40 languages): characters, frequent words, frequent word pieces.
- xlmr/tokenizer.json: an XLM-R-style Unigram tokenizer (Precompiled normaliser, Metaspace,
  <s> … </s>) converted from a SentencePiece model trained with `spm_train`, as transformers'
  XLMRobertaConverter converts one (fairseq ids: <s>=0 <pad>=1 </s>=2 <unk>=3, pieces shifted by 1,
  <mask> last).
- bert/, xlmr/, distilbert/: small random models in Hugging Face layout (config.json,
  model.safetensors, tokenizer.json) with sentence-transformers modules: bert as LaBSE (CLS pooling,
  Dense 32→24 tanh, Normalize, weights under `bert.` as a BertModel inside a pre-training checkpoint
  would have them); xlmr as paraphrase-multilingual-mpnet (mean pooling); distilbert with e5-style
  prompts ('query: ', 'passage: ') and mean pooling + Normalize.
- sentences.txt: reference sentences (3 per language of the dev set, the longest of them cut by
  the models' max_seq_length); <fixture>/ref.safetensors: the reference vectors, computed below by
  PyTorch code written from transformers' modeling_bert.py / modeling_xlm_roberta.py /
  modeling_distilbert.py and sentence-transformers' Pooling/Dense/Normalize, over token ids from
  transformers.js's tokenizer (an implementation independent of xling's).
"""
import base64
import collections
import gzip
import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import unicodedata

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'test', 'fixtures', 'hf')
DATA = os.path.join(ROOT, '..', 'shared', 'data', 'gettext')
if not os.path.isdir(DATA):
    DATA = os.path.join(ROOT, 'shared', 'data', 'gettext')


def read_tsv(name, rows):
    with gzip.open(os.path.join(DATA, name), 'rt', encoding='utf-8') as f:
        header = f.readline().rstrip('\n').split('\t')
        out = []
        for i, line in enumerate(f):
            if i >= rows:
                break
            out.append(line.rstrip('\n').split('\t'))
    return header, out


# ---------------------------------------------------------------- safetensors (format by hand)
def save_safetensors(path, tensors, metadata=None):
    header, offset, blobs = {}, 0, []
    for name, t in tensors.items():
        t = t.detach().contiguous().to(torch.float32)
        b = t.numpy().tobytes()
        header[name] = {'dtype': 'F32', 'shape': list(t.shape), 'data_offsets': [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    if metadata:
        header['__metadata__'] = metadata
    h = json.dumps(header, separators=(',', ':')).encode()
    h += b' ' * ((8 - len(h) % 8) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def write_json(path, obj):
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(obj, f, ensure_ascii=False, indent=1)
        f.write('\n')


# ---------------------------------------------------------------- WordPiece vocabulary
def is_punct(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith('P')


def is_cjk(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF or 0x2A700 <= cp <= 0x2B73F
            or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def bert_words(s):
    """BertNormalizer (lowercase, strip accents, CJK split) + BertPreTokenizer, approximately: for counting only."""
    s = ''.join(' ' if unicodedata.category(c) in ('Zs',) or c in '\t\n\r' else c for c in s)
    s = ''.join(f' {c} ' if is_cjk(ord(c)) else c for c in s)
    s = unicodedata.normalize('NFD', s.lower())
    s = ''.join(c for c in s if unicodedata.category(c) != 'Mn')
    out = []
    for w in s.split():
        cur = ''
        for c in w:
            if is_punct(c):
                if cur:
                    out.append(cur)
                out.append(c)
                cur = ''
            else:
                cur += c
        if cur:
            out.append(cur)
    return out


def wordpiece_vocab(sentences, size):
    words = collections.Counter(w for s in sentences for w in bert_words(s))
    chars = collections.Counter()
    for w, n in words.items():
        for i, c in enumerate(w):
            chars[c if i == 0 else '##' + c] += n
    specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']
    vocab = list(specials)
    seen = set(vocab)
    for c, n in chars.most_common():
        if n >= 3 and c not in seen and len(vocab) < size // 2:
            vocab.append(c)
            seen.add(c)
    # word-initial prefixes and ## suffixes of frequent words, then whole words
    pieces = collections.Counter()
    for w, n in words.items():
        if len(w) > 3:
            for k in (2, 3, 4):
                if len(w) > k:
                    pieces[w[:k]] += n
                    pieces['##' + w[-k:]] += n
    for p, n in (pieces + collections.Counter({w: n * 2 for w, n in words.items()})).most_common():
        if len(vocab) >= size:
            break
        if p not in seen and n >= 4:
            vocab.append(p)
            seen.add(p)
    return vocab


def wordpiece_tokenizer_json(vocab):
    ids = {t: i for i, t in enumerate(vocab)}
    specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']
    return {
        'version': '1.0', 'truncation': None, 'padding': None,
        'added_tokens': [{'id': ids[t], 'content': t, 'single_word': False, 'lstrip': False, 'rstrip': False, 'normalized': False, 'special': True} for t in specials],
        'normalizer': {'type': 'BertNormalizer', 'clean_text': True, 'handle_chinese_chars': True, 'strip_accents': None, 'lowercase': True},
        'pre_tokenizer': {'type': 'BertPreTokenizer'},
        'post_processor': {
            'type': 'TemplateProcessing',
            'single': [{'SpecialToken': {'id': '[CLS]', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}, {'SpecialToken': {'id': '[SEP]', 'type_id': 0}}],
            'pair': [{'SpecialToken': {'id': '[CLS]', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}, {'SpecialToken': {'id': '[SEP]', 'type_id': 0}},
                     {'Sequence': {'id': 'B', 'type_id': 1}}, {'SpecialToken': {'id': '[SEP]', 'type_id': 1}}],
            'special_tokens': {'[CLS]': {'id': '[CLS]', 'ids': [ids['[CLS]']], 'tokens': ['[CLS]']}, '[SEP]': {'id': '[SEP]', 'ids': [ids['[SEP]']], 'tokens': ['[SEP]']}},
        },
        'decoder': {'type': 'WordPiece', 'prefix': '##', 'cleanup': True},
        'model': {'type': 'WordPiece', 'unk_token': '[UNK]', 'continuing_subword_prefix': '##', 'max_input_chars_per_word': 100, 'vocab': ids},
    }


# ---------------------------------------------------------------- SentencePiece → Unigram tokenizer.json
def read_varint(b, i):
    v, shift = 0, 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def proto_fields(b):
    """(field number, wire type, value) of a protobuf message (values of wire type 2 as bytes)."""
    i = 0
    while i < len(b):
        key, i = read_varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = read_varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 2:
            n, i = read_varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError(f'wire type {wt}')
        yield f, wt, v


def spm_pieces_and_charsmap(model_file):
    data = open(model_file, 'rb').read()
    pieces, charsmap = [], b''
    for f, wt, v in proto_fields(data):
        if f == 1:  # SentencePiece
            piece, score, typ = '', 0.0, 1
            for g, _, w in proto_fields(v):
                if g == 1:
                    piece = w.decode('utf-8')
                elif g == 2:
                    score = struct.unpack('<f', w)[0]
                elif g == 3:
                    typ = w
            pieces.append((piece, score, typ))
        elif f == 3:  # NormalizerSpec
            for g, _, w in proto_fields(v):
                if g == 2:
                    charsmap = w
    return pieces, charsmap


def unigram_tokenizer_json(model_file):
    pieces, charsmap = spm_pieces_and_charsmap(model_file)
    vocab = [['<s>', 0.0], ['<pad>', 0.0], ['</s>', 0.0], ['<unk>', 0.0]]
    vocab += [[p, s] for p, s, _ in pieces[3:]]
    vocab += [['<mask>', 0.0]]
    specials = [('<s>', 0), ('<pad>', 1), ('</s>', 2), ('<unk>', 3), ('<mask>', len(vocab) - 1)]
    return {
        'version': '1.0', 'truncation': None, 'padding': None,
        'added_tokens': [{'id': i, 'content': t, 'single_word': False, 'lstrip': t == '<mask>', 'rstrip': False, 'normalized': False, 'special': True} for t, i in specials],
        'normalizer': {'type': 'Sequence', 'normalizers': [
            {'type': 'Precompiled', 'precompiled_charsmap': base64.b64encode(charsmap).decode()},
            {'type': 'Replace', 'pattern': {'Regex': ' {2,}'}, 'content': ' '},
        ]},
        'pre_tokenizer': {'type': 'Metaspace', 'replacement': '\u2581', 'add_prefix_space': True},
        'post_processor': {
            'type': 'TemplateProcessing',
            'single': [{'SpecialToken': {'id': '<s>', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}, {'SpecialToken': {'id': '</s>', 'type_id': 0}}],
            'pair': [{'SpecialToken': {'id': '<s>', 'type_id': 0}}, {'Sequence': {'id': 'A', 'type_id': 0}}, {'SpecialToken': {'id': '</s>', 'type_id': 0}},
                     {'SpecialToken': {'id': '</s>', 'type_id': 0}}, {'Sequence': {'id': 'B', 'type_id': 0}}, {'SpecialToken': {'id': '</s>', 'type_id': 0}}],
            'special_tokens': {'<s>': {'id': '<s>', 'ids': [0], 'tokens': ['<s>']}, '</s>': {'id': '</s>', 'ids': [2], 'tokens': ['</s>']}},
        },
        'decoder': {'type': 'Metaspace', 'replacement': '\u2581', 'add_prefix_space': True},
        'model': {'type': 'Unigram', 'unk_id': 3, 'vocab': vocab, 'byte_fallback': False},
    }


# ---------------------------------------------------------------- reference models (PyTorch, from the originals)
def gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))  # transformers' GELUActivation (exact)


def bert_layer(p, pre, x, ext_mask, heads, eps, distil=False):
    B, T, D = x.shape
    hd = D // heads
    lin = lambda n, h: torch.nn.functional.linear(h, p[pre + n + '.weight'], p[pre + n + '.bias'])
    if distil:
        names = ['attention.q_lin', 'attention.k_lin', 'attention.v_lin', 'attention.out_lin', 'sa_layer_norm', 'ffn.lin1', 'ffn.lin2', 'output_layer_norm']
    else:
        names = ['attention.self.query', 'attention.self.key', 'attention.self.value', 'attention.output.dense', 'attention.output.LayerNorm', 'intermediate.dense', 'output.dense', 'output.LayerNorm']
    split = lambda h: h.view(B, T, heads, hd).transpose(1, 2)
    q, k, v = split(lin(names[0], x)), split(lin(names[1], x)), split(lin(names[2], x))
    if distil:  # modeling_distilbert: q / sqrt(dim_per_head), masked_fill(mask == 0, finfo.min)
        scores = (q / math.sqrt(hd)) @ k.transpose(2, 3)
        scores = scores.masked_fill(ext_mask == 0, torch.finfo(scores.dtype).min)
    else:  # modeling_bert: q·kᵀ / sqrt(head size) + (1 - mask) · finfo.min
        scores = (q @ k.transpose(-1, -2)) / math.sqrt(hd) + (1.0 - ext_mask) * torch.finfo(torch.float32).min
    ctx = (scores.softmax(-1) @ v).transpose(1, 2).reshape(B, T, D)
    ln = lambda n, h: torch.nn.functional.layer_norm(h, (D,), p[pre + n + '.weight'], p[pre + n + '.bias'], eps)
    h = ln(names[4], lin(names[3], ctx) + x)
    return ln(names[7], lin(names[6], gelu(lin(names[5], h))) + h)


def transformer_forward(arch, p, ids, cfg):
    """Token vectors [B, T, D] and the mask of a right-padded batch (ids: list of lists)."""
    pad = cfg['pad_token_id']
    T = max(len(s) for s in ids)
    x = torch.full((len(ids), T), pad, dtype=torch.long)
    for i, s in enumerate(ids):
        x[i, :len(s)] = torch.tensor(s)
    mask = (torch.arange(T)[None, :] < torch.tensor([len(s) for s in ids])[:, None]).float()
    pre = 'bert.' if arch == 'bert' else ''
    if arch == 'xlm-roberta':  # create_position_ids_from_input_ids: cumsum of the mask, offset by padding_idx
        m = x.ne(pad).int()
        pos = (torch.cumsum(m, 1).type_as(m) * m).long() + pad
    else:
        pos = torch.arange(T)[None, :].expand(len(ids), T)
    e = p[pre + 'embeddings.word_embeddings.weight'][x] + p[pre + 'embeddings.position_embeddings.weight'][pos]
    if arch != 'distilbert':
        e = e + p[pre + 'embeddings.token_type_embeddings.weight'][torch.zeros_like(x)]
    eps = 1e-12 if arch == 'distilbert' else cfg['layer_norm_eps']
    D = e.shape[-1]
    h = torch.nn.functional.layer_norm(e, (D,), p[pre + 'embeddings.LayerNorm.weight'], p[pre + 'embeddings.LayerNorm.bias'], eps)
    if arch == 'distilbert':
        ext = mask[:, None, None, :]
        for i in range(cfg['n_layers']):
            h = bert_layer(p, f'transformer.layer.{i}.', h, ext, cfg['n_heads'], eps, distil=True)
    else:
        ext = mask[:, None, None, :]
        for i in range(cfg['num_hidden_layers']):
            h = bert_layer(p, f'{pre}encoder.layer.{i}.', h, ext, cfg['num_attention_heads'], eps)
    return h, mask


def st_pool(h, mask, mode):
    """sentence-transformers' Pooling.forward for one mode."""
    m = mask.unsqueeze(-1).expand(h.size()).float()
    if mode == 'cls':
        return h[:, 0]
    if mode == 'max':
        t = h.clone()
        t[m == 0] = -1e9
        return torch.max(t, 1)[0]
    if mode in ('mean', 'mean_sqrt_len'):
        s = torch.sum(h * m, 1)
        n = torch.clamp(m.sum(1), min=1e-9)
        return s / n if mode == 'mean' else s / torch.sqrt(n)
    if mode == 'lasttoken':
        idx = mask.long().sum(1) - 1
        return h[torch.arange(h.shape[0]), idx]
    raise ValueError(mode)


def rand_params(shapes, gen, std=0.3):
    p = {}
    for name, shape in shapes.items():
        if name.endswith('LayerNorm.weight') or name.endswith('layer_norm.weight'):
            p[name] = 1 + 0.2 * torch.randn(shape, generator=gen)
        else:
            p[name] = std * torch.randn(shape, generator=gen)
    return p


def bert_shapes(pre, V, D, L, F, P, TV):
    s = {pre + 'embeddings.word_embeddings.weight': (V, D), pre + 'embeddings.position_embeddings.weight': (P, D),
         pre + 'embeddings.token_type_embeddings.weight': (TV, D), pre + 'embeddings.LayerNorm.weight': (D,), pre + 'embeddings.LayerNorm.bias': (D,)}
    for i in range(L):
        b = f'{pre}encoder.layer.{i}.'
        for n in ['attention.self.query', 'attention.self.key', 'attention.self.value', 'attention.output.dense']:
            s[b + n + '.weight'], s[b + n + '.bias'] = (D, D), (D,)
        s[b + 'attention.output.LayerNorm.weight'] = s[b + 'attention.output.LayerNorm.bias'] = (D,)
        s[b + 'intermediate.dense.weight'], s[b + 'intermediate.dense.bias'] = (F, D), (F,)
        s[b + 'output.dense.weight'], s[b + 'output.dense.bias'] = (D, F), (D,)
        s[b + 'output.LayerNorm.weight'] = s[b + 'output.LayerNorm.bias'] = (D,)
    return s


def distil_shapes(V, D, L, F, P):
    s = {'embeddings.word_embeddings.weight': (V, D), 'embeddings.position_embeddings.weight': (P, D),
         'embeddings.LayerNorm.weight': (D,), 'embeddings.LayerNorm.bias': (D,)}
    for i in range(L):
        b = f'transformer.layer.{i}.'
        for n in ['attention.q_lin', 'attention.k_lin', 'attention.v_lin', 'attention.out_lin']:
            s[b + n + '.weight'], s[b + n + '.bias'] = (D, D), (D,)
        s[b + 'sa_layer_norm.weight'] = s[b + 'sa_layer_norm.bias'] = (D,)
        s[b + 'ffn.lin1.weight'], s[b + 'ffn.lin1.bias'] = (F, D), (F,)
        s[b + 'ffn.lin2.weight'], s[b + 'ffn.lin2.bias'] = (D, F), (D,)
        s[b + 'output_layer_norm.weight'] = s[b + 'output_layer_norm.bias'] = (D,)
    return s


def st_files(d, modules, pooling, max_len, prompts=None, dense=None):
    write_json(os.path.join(d, 'modules.json'), modules)
    os.makedirs(os.path.join(d, '1_Pooling'), exist_ok=True)
    pc = {'word_embedding_dimension': 32, 'pooling_mode_cls_token': pooling == 'cls', 'pooling_mode_mean_tokens': pooling == 'mean',
          'pooling_mode_max_tokens': False, 'pooling_mode_mean_sqrt_len_tokens': False, 'pooling_mode_weightedmean_tokens': False,
          'pooling_mode_lasttoken': False, 'include_prompt': True}
    write_json(os.path.join(d, '1_Pooling', 'config.json'), pc)
    write_json(os.path.join(d, 'sentence_bert_config.json'), {'max_seq_length': max_len, 'do_lower_case': False})
    write_json(os.path.join(d, 'config_sentence_transformers.json'), {'prompts': prompts or {}, 'default_prompt_name': None, 'similarity_fn_name': 'cosine'})
    if dense:
        os.makedirs(os.path.join(d, '2_Dense'), exist_ok=True)
        w, b = dense
        write_json(os.path.join(d, '2_Dense', 'config.json'), {'in_features': w.shape[1], 'out_features': w.shape[0], 'bias': True, 'activation_function': 'torch.nn.modules.activation.Tanh'})
        save_safetensors(os.path.join(d, '2_Dense', 'model.safetensors'), {'linear.weight': w, 'linear.bias': b}, {'format': 'pt'})


def tokenize_js(tok_file, sentences_file, max_len, prompt=''):
    r = subprocess.run(['node', os.path.join(ROOT, 'scripts', 'hf-fixtures-tokenize.mjs'), tok_file, sentences_file, str(max_len), prompt],
                       check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(r.stdout)


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1234)
    os.makedirs(OUT, exist_ok=True)
    header, rows = read_tsv('train.tsv.gz', 6000)
    corpus = [c for r in rows for c in r if c]

    # tokenizers
    wp = wordpiece_tokenizer_json(wordpiece_vocab(corpus, 3000))
    with tempfile.TemporaryDirectory() as tmp:
        txt = os.path.join(tmp, 'sample.txt')
        with open(txt, 'w', encoding='utf-8') as f:
            f.write('\n'.join(corpus[:120000]) + '\n')
        subprocess.run(['spm_train', f'--input={txt}', f'--model_prefix={tmp}/spm', '--model_type=unigram', '--vocab_size=3000',
                        '--character_coverage=0.9995', '--input_sentence_size=100000', '--shuffle_input_sentence=true', '--seed_sentencepiece_size=200000',
                        '--num_threads=2', '--minloglevel=2'], check=True, capture_output=True)
        ug = unigram_tokenizer_json(os.path.join(tmp, 'spm.model'))

    # reference sentences: 3 per language (short, middle, the longest of the first 300 dev rows)
    dh, drows = read_tsv('dev.tsv.gz', 300)
    sentences = []
    for j, lang in enumerate(dh):
        col = [r[j] for r in drows if j < len(r) and r[j].strip() and '\n' not in r[j]]
        col.sort(key=len)
        sentences += [col[len(col) // 4], col[len(col) // 2], col[-1]]
    sentences_file = os.path.join(OUT, 'sentences.txt')
    with open(sentences_file, 'w', encoding='utf-8') as f:
        f.write('\n'.join(sentences) + '\n')

    D, L, H, F = 32, 2, 4, 64
    # --- BERT as LaBSE: CLS + Dense(tanh) + Normalize; weights under bert. (with the unused pooler)
    d = os.path.join(OUT, 'bert')
    os.makedirs(d, exist_ok=True)
    V = len(wp['model']['vocab'])
    cfg = {'architectures': ['BertModel'], 'model_type': 'bert', 'vocab_size': V, 'hidden_size': D, 'num_hidden_layers': L, 'num_attention_heads': H,
           'intermediate_size': F, 'hidden_act': 'gelu', 'max_position_embeddings': 64, 'type_vocab_size': 2, 'layer_norm_eps': 1e-12,
           'pad_token_id': 0, 'position_embedding_type': 'absolute', 'hidden_dropout_prob': 0.1, 'attention_probs_dropout_prob': 0.1}
    write_json(os.path.join(d, 'config.json'), cfg)
    p = rand_params(bert_shapes('bert.', V, D, L, F, 64, 2), gen)
    p['bert.pooler.dense.weight'], p['bert.pooler.dense.bias'] = torch.randn(D, D, generator=gen), torch.randn(D, generator=gen)
    save_safetensors(os.path.join(d, 'model.safetensors'), p, {'format': 'pt'})
    write_json(os.path.join(d, 'tokenizer.json'), wp)
    dw, db = 0.3 * torch.randn(24, D, generator=gen), 0.3 * torch.randn(24, generator=gen)
    st_files(d, [{'idx': 0, 'name': '0', 'path': '', 'type': 'sentence_transformers.models.Transformer'},
                 {'idx': 1, 'name': '1', 'path': '1_Pooling', 'type': 'sentence_transformers.models.Pooling'},
                 {'idx': 2, 'name': '2', 'path': '2_Dense', 'type': 'sentence_transformers.models.Dense'},
                 {'idx': 3, 'name': '3', 'path': '3_Normalize', 'type': 'sentence_transformers.models.Normalize'}], 'cls', 24, dense=(dw, db))
    ids = tokenize_js(os.path.join(d, 'tokenizer.json'), sentences_file, 24)
    h, mask = transformer_forward('bert', p, ids, cfg)
    ref = {'vectors': torch.nn.functional.normalize(torch.tanh(torch.nn.functional.linear(st_pool(h, mask, 'cls'), dw, db)), p=2, dim=1)}
    for mode in ['cls', 'max', 'mean', 'mean_sqrt_len', 'lasttoken']:
        ref['pool.' + mode] = st_pool(h, mask, mode)  # the Transformer's pooled output alone (the test turns Dense/Normalize off)
    save_safetensors(os.path.join(d, 'ref.safetensors'), ref)

    # --- XLM-R as paraphrase-multilingual-mpnet: mean pooling
    d = os.path.join(OUT, 'xlmr')
    os.makedirs(d, exist_ok=True)
    V = len(ug['model']['vocab'])
    cfg = {'architectures': ['XLMRobertaModel'], 'model_type': 'xlm-roberta', 'vocab_size': V, 'hidden_size': D, 'num_hidden_layers': L,
           'num_attention_heads': H, 'intermediate_size': F, 'hidden_act': 'gelu', 'max_position_embeddings': 66, 'type_vocab_size': 1,
           'layer_norm_eps': 1e-5, 'pad_token_id': 1, 'bos_token_id': 0, 'eos_token_id': 2, 'position_embedding_type': 'absolute'}
    write_json(os.path.join(d, 'config.json'), cfg)
    p = rand_params(bert_shapes('', V, D, L, F, 66, 1), gen)
    save_safetensors(os.path.join(d, 'model.safetensors'), p, {'format': 'pt'})
    write_json(os.path.join(d, 'tokenizer.json'), ug)
    st_files(d, [{'idx': 0, 'name': '0', 'path': '', 'type': 'sentence_transformers.models.Transformer'},
                 {'idx': 1, 'name': '1', 'path': '1_Pooling', 'type': 'sentence_transformers.models.Pooling'}], 'mean', 48)
    ids = tokenize_js(os.path.join(d, 'tokenizer.json'), sentences_file, 48)
    h, mask = transformer_forward('xlm-roberta', p, ids, cfg)
    save_safetensors(os.path.join(d, 'ref.safetensors'), {'vectors': st_pool(h, mask, 'mean')})

    # --- DistilBERT with e5-style prompts: mean + Normalize, imported with --prompt query
    d = os.path.join(OUT, 'distilbert')
    os.makedirs(d, exist_ok=True)
    V = len(wp['model']['vocab'])
    cfg = {'architectures': ['DistilBertModel'], 'model_type': 'distilbert', 'vocab_size': V, 'dim': D, 'n_layers': L, 'n_heads': H,
           'hidden_dim': F, 'activation': 'gelu', 'max_position_embeddings': 64, 'pad_token_id': 0, 'sinusoidal_pos_embds': False}
    write_json(os.path.join(d, 'config.json'), cfg)
    p = rand_params(distil_shapes(V, D, L, F, 64), gen)
    save_safetensors(os.path.join(d, 'model.safetensors'), p, {'format': 'pt'})
    write_json(os.path.join(d, 'tokenizer.json'), wp)
    st_files(d, [{'idx': 0, 'name': '0', 'path': '', 'type': 'sentence_transformers.models.Transformer'},
                 {'idx': 1, 'name': '1', 'path': '1_Pooling', 'type': 'sentence_transformers.models.Pooling'},
                 {'idx': 2, 'name': '2', 'path': '2_Normalize', 'type': 'sentence_transformers.models.Normalize'}], 'mean', 32,
             prompts={'query': 'query: ', 'passage': 'passage: '})
    ids = tokenize_js(os.path.join(d, 'tokenizer.json'), sentences_file, 32, 'query: ')
    h, mask = transformer_forward('distilbert', p, ids, cfg)
    save_safetensors(os.path.join(d, 'ref.safetensors'), {'vectors': torch.nn.functional.normalize(st_pool(h, mask, 'mean'), p=2, dim=1)})
    print(f'fixtures in {OUT}: {len(sentences)} sentences, wordpiece {len(wp["model"]["vocab"])} and unigram {len(ug["model"]["vocab"])} tokens', file=sys.stderr)


if __name__ == '__main__':
    main()
