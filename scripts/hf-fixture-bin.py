#!/usr/bin/env python3
"""A `pytorch_model.bin` parity fixture for `xling import hf` (test/models/hf-import.test.ts).

Writes test/fixtures/hf/bert-bin/ (run from the repository root with Debian's python3-torch, after
scripts/hf-fixtures.py, whose tokenizer, model code and reference code it reuses): a small random
BERT in Hugging Face layout as older snapshots of LaBSE ship it, with the weights saved by
`torch.save` instead of safetensors:

- pytorch_model.bin: the state dict in torch.save's zip format (the default since PyTorch 1.6), with
  BertModel's `embeddings.position_ids` buffer (int64) that older transformers saved beside the
  weights, and the attention's Q/K/V weights as views of one stacked storage;
- 2_Dense/pytorch_model.bin: sentence-transformers' Dense weights in torch.save's legacy
  (pre-1.6, non-zip) format;
- CLS pooling + Dense (tanh) + Normalize as LaBSE; ref.safetensors: the reference vectors of
  sentences.txt from the PyTorch reference code of hf-fixtures.py over transformers.js's ids.
"""
import importlib.util
import os
import shutil

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location('hf_fixtures', os.path.join(ROOT, 'scripts', 'hf-fixtures.py'))
fx = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fx)


def main():
    gen = torch.Generator().manual_seed(4321)
    src = os.path.join(fx.OUT, 'bert')
    d = os.path.join(fx.OUT, 'bert-bin')
    os.makedirs(os.path.join(d, '2_Dense'), exist_ok=True)
    shutil.copyfile(os.path.join(src, 'tokenizer.json'), os.path.join(d, 'tokenizer.json'))
    sentences_file = os.path.join(fx.OUT, 'sentences.txt')
    D, L, H, F, P = 32, 2, 4, 64, 64
    V = len(fx.json.load(open(os.path.join(d, 'tokenizer.json'), encoding='utf-8'))['model']['vocab'])
    cfg = {'architectures': ['BertModel'], 'model_type': 'bert', 'vocab_size': V, 'hidden_size': D, 'num_hidden_layers': L, 'num_attention_heads': H,
           'intermediate_size': F, 'hidden_act': 'gelu', 'max_position_embeddings': P, 'type_vocab_size': 2, 'layer_norm_eps': 1e-12,
           'pad_token_id': 0, 'position_embedding_type': 'absolute'}
    fx.write_json(os.path.join(d, 'config.json'), cfg)
    p = fx.rand_params(fx.bert_shapes('', V, D, L, F, P, 2), gen)
    sd = dict(p)
    for i in range(L):  # Q, K, V as views of one [3D, D] storage
        b = f'encoder.layer.{i}.attention.self.'
        qkv = torch.cat([p[b + n + '.weight'] for n in ('query', 'key', 'value')], 0)
        for j, n in enumerate(('query', 'key', 'value')):
            sd[b + n + '.weight'] = qkv[j * D:(j + 1) * D]
    sd['embeddings.position_ids'] = torch.arange(P).unsqueeze(0)
    torch.save(sd, os.path.join(d, 'pytorch_model.bin'))
    dw, db = 0.3 * torch.randn(24, D, generator=gen), 0.3 * torch.randn(24, generator=gen)
    fx.st_files(d, [{'idx': 0, 'name': '0', 'path': '', 'type': 'sentence_transformers.models.Transformer'},
                    {'idx': 1, 'name': '1', 'path': '1_Pooling', 'type': 'sentence_transformers.models.Pooling'},
                    {'idx': 2, 'name': '2', 'path': '2_Dense', 'type': 'sentence_transformers.models.Dense'},
                    {'idx': 3, 'name': '3', 'path': '3_Normalize', 'type': 'sentence_transformers.models.Normalize'}], 'cls', 24, dense=(dw, db))
    os.remove(os.path.join(d, '2_Dense', 'model.safetensors'))
    torch.save({'linear.weight': dw, 'linear.bias': db}, os.path.join(d, '2_Dense', 'pytorch_model.bin'), _use_new_zipfile_serialization=False)
    ids = fx.tokenize_js(os.path.join(d, 'tokenizer.json'), sentences_file, 24)
    h, mask = fx.transformer_forward('bert', {'bert.' + k: v for k, v in p.items()}, ids, cfg)
    ref = torch.nn.functional.normalize(torch.tanh(torch.nn.functional.linear(fx.st_pool(h, mask, 'cls'), dw, db)), p=2, dim=1)
    fx.save_safetensors(os.path.join(d, 'ref.safetensors'), {'vectors': ref})
    print(f'fixture in {d}', file=fx.sys.stderr)


if __name__ == '__main__':
    main()
