// A tiny random BERT sentence encoder for tests of the local embedding model: the real graph builder
// (tools/embedding-model/build_onnx.py --random, in the venv its obtain script uses) over a small WordPiece
// vocabulary, so the whole path (tokenizer, onnxruntime, pooling, server) runs in milliseconds without the
// real weights. Its vectors mean nothing; their shape, length and consistency do.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pythonVenv } from '../harness/python-venv';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../../..');
const HIDDEN = 32;
const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
const WORDS =
  'the a of and to in is it on for cat dog fox paris france capital river quick brown lazy jumps over'.split(' ');
const LETTERS = 'abcdefghijklmnopqrstuvwxyz0123456789'.split('');
const PUNCTUATION = '.,!?;:\'"-()'.split('');

function tokenizerJson(vocab: Record<string, number>) {
  const special = (id: string) => ({ SpecialToken: { id, type_id: 0 } });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]')],
      pair: [
        special('[CLS]'),
        { Sequence: { id: 'A', type_id: 0 } },
        special('[SEP]'),
        { Sequence: { id: 'B', type_id: 1 } },
        special('[SEP]'),
      ],
      special_tokens: Object.fromEntries(['[CLS]', '[SEP]'].map((t) => [t, { id: t, ids: [vocab[t]], tokens: [t] }])),
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab,
    },
  };
}

let made: Promise<string> | undefined;

/** A folder with model.onnx, tokenizer.json, tokenizer_config.json and config.json of a tiny random BERT. */
export function tinyEmbeddingModel(): Promise<string> {
  made ??= (async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarmac-tiny-bert-'));
    const tokens = [...SPECIAL, ...WORDS, ...LETTERS, ...LETTERS.map((l) => `##${l}`), ...PUNCTUATION];
    const vocab = Object.fromEntries(tokens.map((t, i) => [t, i]));
    fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(tokenizerJson(vocab)));
    fs.writeFileSync(
      path.join(dir, 'tokenizer_config.json'),
      JSON.stringify({ do_lower_case: true, tokenizer_class: 'BertTokenizer', model_max_length: 512 }),
    );
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ hidden_size: HIDDEN }));
    const python = await pythonVenv('onnx-build', ['onnx==1.23.2', 'numpy==2.4.6']);
    const builder = path.join(ROOT, 'tools', 'embedding-model', 'build_onnx.py');
    const args = [String(HIDDEN), '2', '4', '64', String(tokens.length)];
    await run(python, [builder, dir, path.join(dir, 'model.onnx'), '--random', ...args], { timeout: 300_000 });
    return dir;
  })();
  return made;
}
