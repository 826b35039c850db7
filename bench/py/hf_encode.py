#!/usr/bin/env python3
"""PyTorch side of bench/hf-encode.ts: a BERT-base-sized encoder (12 layers, 768 wide, 12 heads,
3072 FFN, random weights) as a Hugging Face snapshot, its ONNX export, and PyTorch's speed.

  hf_encode.py make DIR TOKENIZER_JSON      → DIR/{config.json, model.safetensors, tokenizer.json,
                                               modules.json, 1_Pooling/, onnx/model.onnx}
  hf_encode.py time DIR IDS_JSON THREADS    → {"sents_per_s": …} (mean pooling, length-sorted
                                               batches of the same sizes as xling's, no_grad)

The model code follows transformers' modeling_bert.py (post-norm layers, exact GELU, additive
mask of the dtype's minimum); it is also what is exported to ONNX (fp32, opset 14).
"""
import json
import math
import os
import shutil
import struct
import sys
import time

import torch

D, L, H, F, V, P = 768, 12, 12, 3072, 30522, 512


class Bert(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.word = torch.nn.Embedding(V, D)
        self.pos = torch.nn.Embedding(P, D)
        self.typ = torch.nn.Embedding(2, D)
        self.ln = torch.nn.LayerNorm(D, eps=1e-12)
        self.layers = torch.nn.ModuleList()
        for _ in range(L):
            m = torch.nn.Module()
            m.q, m.k, m.v, m.o = (torch.nn.Linear(D, D) for _ in range(4))
            m.ln1, m.ln2 = torch.nn.LayerNorm(D, eps=1e-12), torch.nn.LayerNorm(D, eps=1e-12)
            m.ff1, m.ff2 = torch.nn.Linear(D, F), torch.nn.Linear(F, D)
            self.layers.append(m)

    def forward(self, input_ids, attention_mask):
        B, T = input_ids.shape
        pos = torch.arange(T, device=input_ids.device).unsqueeze(0)
        x = self.ln(self.word(input_ids) + self.pos(pos) + self.typ(torch.zeros_like(input_ids)))
        bias = (1.0 - attention_mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
        hd = D // H
        for m in self.layers:
            split = lambda t: t.view(B, T, H, hd).transpose(1, 2)
            s = split(m.q(x)) @ split(m.k(x)).transpose(-1, -2) / math.sqrt(hd) + bias
            ctx = (s.softmax(-1) @ split(m.v(x))).transpose(1, 2).reshape(B, T, D)
            h = m.ln1(m.o(ctx) + x)
            x = m.ln2(m.ff2(torch.nn.functional.gelu(m.ff1(h))) + h)
        return x


def hf_state_dict(model):
    sd = {'embeddings.word_embeddings.weight': model.word.weight, 'embeddings.position_embeddings.weight': model.pos.weight,
          'embeddings.token_type_embeddings.weight': model.typ.weight, 'embeddings.LayerNorm.weight': model.ln.weight, 'embeddings.LayerNorm.bias': model.ln.bias}
    names = {'q': 'attention.self.query', 'k': 'attention.self.key', 'v': 'attention.self.value', 'o': 'attention.output.dense',
             'ln1': 'attention.output.LayerNorm', 'ff1': 'intermediate.dense', 'ff2': 'output.dense', 'ln2': 'output.LayerNorm'}
    for i, m in enumerate(model.layers):
        for a, n in names.items():
            sd[f'encoder.layer.{i}.{n}.weight'] = getattr(m, a).weight
            sd[f'encoder.layer.{i}.{n}.bias'] = getattr(m, a).bias
    return sd


def save_safetensors(path, tensors):
    header, offset, blobs = {}, 0, []
    for name, t in tensors.items():
        b = t.detach().contiguous().float().numpy().tobytes()
        header[name] = {'dtype': 'F32', 'shape': list(t.shape), 'data_offsets': [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    h = json.dumps(header).encode()
    h += b' ' * ((8 - len(h) % 8) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def make(d, tokenizer):
    torch.manual_seed(0)
    model = Bert().eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.02)
    os.makedirs(os.path.join(d, '1_Pooling'), exist_ok=True)
    os.makedirs(os.path.join(d, 'onnx'), exist_ok=True)
    cfg = {'architectures': ['BertModel'], 'model_type': 'bert', 'vocab_size': V, 'hidden_size': D, 'num_hidden_layers': L, 'num_attention_heads': H,
           'intermediate_size': F, 'hidden_act': 'gelu', 'max_position_embeddings': P, 'type_vocab_size': 2, 'layer_norm_eps': 1e-12, 'pad_token_id': 0}
    json.dump(cfg, open(os.path.join(d, 'config.json'), 'w'))
    json.dump([{'idx': 0, 'name': '0', 'path': '', 'type': 'sentence_transformers.models.Transformer'},
               {'idx': 1, 'name': '1', 'path': '1_Pooling', 'type': 'sentence_transformers.models.Pooling'}], open(os.path.join(d, 'modules.json'), 'w'))
    json.dump({'word_embedding_dimension': D, 'pooling_mode_mean_tokens': True}, open(os.path.join(d, '1_Pooling', 'config.json'), 'w'))
    json.dump({'max_seq_length': 128}, open(os.path.join(d, 'sentence_bert_config.json'), 'w'))
    shutil.copyfile(tokenizer, os.path.join(d, 'tokenizer.json'))
    # the special tokens named as a BERT snapshot names them: transformers.js pads a batch with
    # pad_token (without it its tokenizer fails with "Cannot convert undefined to a BigInt")
    json.dump({'model_max_length': 128, 'tokenizer_class': 'BertTokenizer', 'do_lower_case': True, 'pad_token': '[PAD]', 'unk_token': '[UNK]',
               'cls_token': '[CLS]', 'sep_token': '[SEP]', 'mask_token': '[MASK]'}, open(os.path.join(d, 'tokenizer_config.json'), 'w'))
    save_safetensors(os.path.join(d, 'model.safetensors'), hf_state_dict(model))
    ids = torch.randint(5, 3000, (2, 9))
    torch.onnx.export(model, (ids, torch.ones_like(ids)), os.path.join(d, 'onnx', 'model.onnx'), input_names=['input_ids', 'attention_mask'],
                      output_names=['last_hidden_state'], dynamic_axes={'input_ids': {0: 'batch', 1: 'seq'}, 'attention_mask': {0: 'batch', 1: 'seq'},
                                                                         'last_hidden_state': {0: 'batch', 1: 'seq'}}, opset_version=14)


def timed(d, ids_file, threads):
    torch.set_num_threads(threads)
    model = Bert().eval()
    j = json.load(open(ids_file))
    batches = j['batches']  # lists of id lists, as xling batches them (length-sorted)
    run = lambda bs: [encode(model, b) for b in bs]
    with torch.no_grad():
        run(batches[:2])  # warm-up
        t0 = time.perf_counter()
        run(batches)
        secs = time.perf_counter() - t0
    n = sum(len(b) for b in batches)
    print(json.dumps({'sents_per_s': n / secs, 'sentences': n}))


def encode(model, batch):
    T = max(len(s) for s in batch)
    ids = torch.zeros(len(batch), T, dtype=torch.long)
    mask = torch.zeros(len(batch), T, dtype=torch.long)
    for i, s in enumerate(batch):
        ids[i, :len(s)] = torch.tensor(s)
        mask[i, :len(s)] = 1
    h = model(ids, mask)
    m = mask.unsqueeze(-1).float()
    return (h * m).sum(1) / m.sum(1).clamp(min=1e-9)


if __name__ == '__main__':
    if sys.argv[1] == 'make':
        make(sys.argv[2], sys.argv[3])
        print(json.dumps({'ok': 1}))
    else:
        timed(sys.argv[2], sys.argv[3], int(sys.argv[4]))
