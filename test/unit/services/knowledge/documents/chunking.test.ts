// The pure parts of knowledge bases: text extraction (PDFs made by pdf-lib, test/fixtures/pdf.ts), token-aware
// chunking, reciprocal rank fusion, the embedding model a request resolves to (none configured: full text
// only), and the DEFAULT_EMBEDDING_MODEL setting.
import { Readable } from 'node:stream';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../../../../src/config';
import {
  chunkText,
  chunkTextInSlices,
  CHUNK_OVERLAP_TOKENS,
  CHUNK_TOKENS,
  countTokens,
} from '../../../../../src/services/knowledge/documents/chunking';
import {
  ExtractionError,
  extractDocument,
  extractText,
  htmlToText,
} from '../../../../../src/services/knowledge/documents/extract';
import { resolveEmbeddingModel } from '../../../../../src/services/knowledge/knowledge-bases';
import { fuse, retrievalOf, RRF_K } from '../../../../../src/services/knowledge/retrieval/query';
import { makePdf } from '../../../../fixtures/pdf';

const models = (env: Record<string, string>) => loadConfig(env).models;

describe('knowledge base text', () => {
  it('extracts text, Markdown, HTML, JSON and CSV; refuses binary and unknown formats', () => {
    expect(extractText('a.md', Buffer.from('# T\n\nbody'))).to.equal('# T\n\nbody');
    expect(htmlToText('<p>a &lt;b&gt; &#233;</p><script>x()</script><!-- c --><div>d</div>')).to.equal('a <b> é\n\nd');
    expect(extractText('d.json', Buffer.from('{"a":{"b":[1,"x"]},"c":true}'))).to.equal(
      'a.b[0]: 1\na.b[1]: x\nc: true',
    );
    expect(extractText('t.csv', Buffer.from('a,b\n1,2\n'))).to.equal('a,b\n1,2\n');
    expect(() => extractText('r.doc', Buffer.from('\xd0\xcf\x11\xe0'))).to.throw(
      ExtractionError,
      '.doc files are not supported (the legacy binary Word format',
    );
    expect(() => extractText('blob', Buffer.from([0, 1, 2]))).to.throw(ExtractionError, 'binary');
    expect(() => extractText('notes.txt', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0]))).to.throw(ExtractionError);
    expect(() => extractText('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9]))).to.throw(ExtractionError, 'UTF-8');
    expect(() => extractText('bad.json', Buffer.from('{'))).to.throw(ExtractionError, 'not valid JSON');
  });

  it('extracts the text and metadata of PDFs; a broken or empty PDF is InvalidContent', async () => {
    const pdf = await makePdf(
      [['The first page speaks of glaciers.', 'A second line.'], ['Page two: volcanoes of Iceland.']],
      'Geology notes',
    );
    const doc = await extractDocument('notes.pdf', Readable.from([pdf]));
    expect(doc.text).to.equal('The first page speaks of glaciers.\nA second line.\n\nPage two: volcanoes of Iceland.');
    expect(doc.meta).to.deep.equal({ format: 'pdf', pages: '2', title: 'Geology notes' });
    const failure = async (name: string, bytes: Buffer) =>
      extractDocument(name, Readable.from([bytes])).then(
        () => undefined,
        (err: ExtractionError) => err,
      );
    const broken = await failure('broken.pdf', Buffer.from('%PDF-1.4 binary'));
    expect(broken).to.be.instanceOf(ExtractionError).and.include({ type: 'InvalidContent' });
    expect(broken!.message).to.include('broken.pdf is not a readable PDF');
    const blank = await failure('scan.pdf', await makePdf([[]]));
    expect(blank).to.include({ type: 'InvalidContent' });
    expect(blank!.message).to.include('no text layer');
    const html = await extractDocument(
      'p.html',
      Readable.from([Buffer.from('<title>Home &amp; away</title><p>x</p>')]),
    );
    expect(html.meta).to.deep.equal({ format: 'html', title: 'Home & away' });
  });

  it('chunks by tokens in overlapping windows cut at boundaries, with stable hashes', () => {
    const words = Array.from({ length: 1200 }, (_, i) => `word${i}`).join(' ');
    const chunks = chunkText(words);
    expect(chunks.length).to.be.greaterThan(3);
    for (const c of chunks) {
      expect(c.tokens).to.equal(countTokens(c.content)).and.be.at.most(CHUNK_TOKENS);
      if (c !== chunks.at(-1)) expect(c.tokens).to.be.greaterThan(CHUNK_TOKENS / 2);
      expect(c.content)
        .to.match(/^word\d+/)
        .and.match(/word\d+$/);
    }
    // Consecutive chunks share their boundary words, at most CHUNK_OVERLAP_TOKENS of them.
    for (let i = 1; i < chunks.length; i++) {
      const firstOfNext = chunks[i].content.split(' ')[0];
      const prev = chunks[i - 1].content.split(' ');
      const at = prev.indexOf(firstOfNext);
      expect(at, `chunk ${i} starts inside chunk ${i - 1}`).to.be.greaterThan(0);
      expect(countTokens(prev.slice(at).join(' '))).to.be.at.most(CHUNK_OVERLAP_TOKENS + 1);
    }
    expect(chunkText(words).map((c) => c.hash)).to.deep.equal(chunks.map((c) => c.hash));
    expect(chunkText('  ')).to.deep.equal([]);
  });

  it('prefers paragraph breaks, splits unbroken text and counts special tokens as text', () => {
    const para = (n: number) => Array.from({ length: 20 }, (_, i) => `p${n}w${i}`).join(' ') + '.';
    const text = [para(1), para(2), para(3), para(4)].join('\n\n');
    const chunks = chunkText(text, 120, 10);
    expect(chunks.length).to.be.greaterThan(2);
    for (const c of chunks) expect(c.content).to.match(/p\dw19\.$/);
    // CJK text has no spaces: it is cut into pieces that fit, never over the limit.
    const cjk = '知識庫'.repeat(400);
    const pieces = chunkText(cjk, 64, 8);
    expect(pieces.length).to.be.greaterThan(5);
    for (const c of pieces) expect(c.tokens).to.be.at.most(64);
    expect(pieces.map((c) => c.content).join('')).to.include('知識庫'.repeat(10));
    // A long unbroken word is cut without ever being encoded whole (quadratic): this returns at once.
    const long = chunkText('x'.repeat(200_000));
    expect(long.length).to.be.greaterThan(10);
    for (const c of long) expect(c.tokens).to.be.at.most(CHUNK_TOKENS);
    expect(chunkText('a <|endoftext|> b')[0].content).to.equal('a <|endoftext|> b');
  });

  it('chunks a long text in slices: the same chunks, with the event loop served meanwhile', async () => {
    const paragraph = (i: number) => `Paragraph ${i} says something about item ${i * 7}; then it ends. `.repeat(12);
    const text = Array.from({ length: 400 }, (_, i) => paragraph(i)).join('\n\n');
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const sliced = await chunkTextInSlices(text).finally(() => clearInterval(ticker));
    expect(sliced).to.deep.equal(chunkText(text));
    expect(sliced.length).to.be.greaterThan(100);
    // Timers ran while it worked: each slice ended with a turn of the event loop.
    expect(turns).to.be.greaterThan(1);
  });

  it('fuses rankings by reciprocal rank', () => {
    const fused = fuse(
      [
        [
          { chunk_id: 'a', score: 0.9 },
          { chunk_id: 'b', score: 0.8 },
        ],
        [
          { chunk_id: 'b', score: 3 },
          { chunk_id: 'c', score: 2 },
        ],
      ],
      2,
    );
    expect(fused.map((h) => h.chunk_id)).to.deep.equal(['b', 'a']);
    expect(fused[0].score).to.be.closeTo(1 / (RRF_K + 2) + 1 / (RRF_K + 1), 1e-12);
  });

  it('resolves the embedding model; none configured means full text only', () => {
    const none = models({});
    expect(none.defaultEmbeddingModel).to.equal(undefined);
    expect(resolveEmbeddingModel(none, {})).to.equal(null);
    expect(retrievalOf({ type: 'gtc_hybrid_sql_pg_vector', embedding_model: null })).to.equal('full_text');
    const openai = models({ OPENAI_API_KEY: 'sk' });
    expect(openai.defaultEmbeddingModel).to.equal('openai/text-embedding-3-small');
    expect(resolveEmbeddingModel(openai, { embedding_model: 'text-embedding-ada-002' })).to.equal(
      'openai/text-embedding-ada-002',
    );
    const local = models({
      MODEL_PROVIDERS: 'ollama=http://127.0.0.1:11434/v1',
      DEFAULT_EMBEDDING_MODEL: 'ollama/nomic-embed-text',
    });
    expect(
      resolveEmbeddingModel(local, {
        type: 'gtc_pg_vector',
        config: { gtc_pg_vector: { use_default_embedding_model: true } },
      }),
    ).to.equal('ollama/nomic-embed-text');
    let problems: string[] = [];
    try {
      loadConfig({ DEFAULT_EMBEDDING_MODEL: 'nope/m' });
    } catch (err) {
      problems = (err as ConfigError).problems;
    }
    expect(problems.join('\n')).to.include('DEFAULT_EMBEDDING_MODEL names provider "nope"');
  });
});
