// The plain BM25 baseline of the retrieval benchmark, computed by a library: PyPI rank-bm25's BM25Okapi
// (lowercased word tokens, no stemming or stop words), in a venv of test/harness/python-venv.ts, over whole
// documents and over passages of PASSAGE_WORDS words (a document ranks as its best passage).
import { execFile } from 'node:child_process';
import { pythonVenv } from '../../test/harness/python-venv';
import type { Document } from './corpus';

const REQUIREMENTS = ['rank-bm25==0.2.2', 'numpy==2.2.6'];
export const PASSAGE_WORDS = 200;

const SCRIPT = `
import json, re, sys
from rank_bm25 import BM25Okapi
data = json.load(sys.stdin)
tok = lambda t: re.findall(r"\\w+", t.lower())
def rank(units, owners, questions, depth):
    bm25 = BM25Okapi([tok(u) for u in units])
    out = []
    for q in questions:
        scores = bm25.get_scores(tok(q))
        seen, ranking = set(), []
        for i in sorted(range(len(units)), key=lambda i: -scores[i]):
            if owners[i] not in seen:
                seen.add(owners[i]); ranking.append(owners[i])
                if len(ranking) == depth: break
        out.append(ranking)
    return out
names = [d["name"] for d in data["docs"]]
texts = [d["text"] for d in data["docs"]]
passages, owners = [], []
for name, text in zip(names, texts):
    words = re.findall(r"\\S+", text)
    for i in range(0, max(1, len(words)), data["passage"]):
        passages.append(" ".join(words[i:i + data["passage"]])); owners.append(name)
print(json.dumps({"documents": rank(texts, names, data["questions"], data["depth"]),
                  "passages": rank(passages, owners, data["questions"], data["depth"])}))
`;

/** Per question, document names best first: over whole documents, and over passages. */
export async function bm25Rankings(
  docs: Array<Pick<Document, 'name' | 'text'>>,
  questions: string[],
  depth: number,
): Promise<{ documents: string[][]; passages: string[][] }> {
  const python = await pythonVenv('bm25', REQUIREMENTS);
  const child = execFile(python, ['-c', SCRIPT], { maxBuffer: 256 * 1024 * 1024 });
  const out = new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (d) => (text += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`rank-bm25 exited ${code}`))));
  });
  child.stdin!.end(JSON.stringify({ docs, questions, depth, passage: PASSAGE_WORDS }));
  return JSON.parse(await out) as { documents: string[][]; passages: string[][] };
}
