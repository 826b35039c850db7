#!/usr/bin/python3
"""SentencePiece WORD and CHAR model fixtures, committed so CI needs no Python:
  test/fixtures/laser/spm-word.model, spm-char.model   spm_train --model_type=word / char on a slice
                                                       of the shared training corpus
  test/fixtures/laser/spm-ids-word-char.json.gz        python3-sentencepiece's ids for every sentence
                                                       of the shared dev set (40 languages: hashes of
                                                       all, the ids of the first 10 rows)
Run from the repository root: /usr/bin/python3 scripts/make-spm-word-char-fixtures.py
(Debian python3-sentencepiece 0.1.97, sentencepiece's spm_train)."""
import gzip, json, os, subprocess, tempfile
import sentencepiece as spm

OUT = 'test/fixtures/laser'
DATA = '../shared/data/gettext'


def read_tsv(path):
    with gzip.open(path, 'rt', encoding='utf-8') as f:
        rows = [line.rstrip('\n').split('\t') for line in f]
    return rows[0], rows[1:]


def fnv1a(text):
    h = 0x811c9dc5
    for c in text.encode('utf-8'):
        h = ((h ^ c) * 0x01000193) & 0xffffffff
    return h


with tempfile.TemporaryDirectory() as tmp:
    header, rows = read_tsv(f'{DATA}/train.tsv.gz')
    corpus = os.path.join(tmp, 'corpus.txt')
    with open(corpus, 'w', encoding='utf-8') as f:
        for r in rows[::16]:
            for cell in r:
                if cell.strip():
                    f.write(cell + '\n')
    common = ['--input', corpus, '--input_sentence_size=100000', '--shuffle_input_sentence=true', '--minloglevel=1']
    # a small word vocabulary (most dev words are unknown: runs of <unk> are merged) and a character
    # vocabulary without every rare character (character_coverage below 1) and no normaliser (identity)
    subprocess.run(['spm_train', *common, '--model_prefix', os.path.join(OUT, 'spm-word'), '--model_type=word',
                    '--vocab_size=3000'], check=True)
    subprocess.run(['spm_train', *common, '--model_prefix', os.path.join(OUT, 'spm-char'), '--model_type=char',
                    '--vocab_size=1000', '--hard_vocab_limit=false', '--character_coverage=0.999', '--normalization_rule_name=identity'], check=True)
for kind in ('word', 'char'):
    os.remove(os.path.join(OUT, f'spm-{kind}.vocab'))

dev_header, dev_rows = read_tsv(f'{DATA}/dev.tsv.gz')
dev_sentences = [r[j] if j < len(r) else '' for j in range(len(dev_header)) for r in dev_rows]
FULL = 10
ids = {'langs': dev_header, 'rows': len(dev_rows), 'full': FULL}
for kind in ('word', 'char'):
    sp = spm.SentencePieceProcessor(model_file=os.path.join(OUT, f'spm-{kind}.model'))
    enc = [' '.join(map(str, sp.encode(s))) for s in dev_sentences]
    ids[kind] = {'hash': ''.join(f'{fnv1a(e):08x}' for e in enc),
                 'ids': [e for i, e in enumerate(enc) if i % len(dev_rows) < FULL]}
with gzip.open(os.path.join(OUT, 'spm-ids-word-char.json.gz'), 'wt', encoding='utf-8', compresslevel=9) as f:
    json.dump(ids, f, ensure_ascii=False, separators=(',', ':'))
