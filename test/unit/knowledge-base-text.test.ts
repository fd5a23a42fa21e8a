// The pure parts of knowledge bases: text extraction, chunking, reciprocal rank fusion, the embedding model a
// request resolves to (none configured: full text only), and the DEFAULT_EMBEDDING_MODEL setting.
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config';
import { chunkText, CHUNK_OVERLAP, CHUNK_SIZE } from '../../src/services/knowledge-bases/chunking';
import { ExtractionError, extractText, htmlToText } from '../../src/services/knowledge-bases/extract';
import { resolveEmbeddingModel } from '../../src/services/knowledge-bases/knowledge-bases';
import { fuse, retrievalOf, RRF_K } from '../../src/services/knowledge-bases/query';

const models = (env: Record<string, string>) => loadConfig(env).models;

describe('knowledge base text', () => {
  it('extracts text, Markdown, HTML, JSON and CSV; refuses PDF and binary', () => {
    expect(extractText('a.md', Buffer.from('# T\n\nbody'))).to.equal('# T\n\nbody');
    expect(htmlToText('<p>a &lt;b&gt; &#233;</p><script>x()</script><!-- c --><div>d</div>')).to.equal('a <b> é\nd');
    expect(extractText('d.json', Buffer.from('{"a":{"b":[1,"x"]},"c":true}'))).to.equal(
      'a.b[0]: 1\na.b[1]: x\nc: true',
    );
    expect(extractText('t.csv', Buffer.from('a,b\n1,2\n'))).to.equal('a,b\n1,2\n');
    expect(() => extractText('r.pdf', Buffer.from('%PDF'))).to.throw(ExtractionError, '.pdf files are not supported');
    expect(() => extractText('blob', Buffer.from([0, 1, 2]))).to.throw(ExtractionError);
    expect(() => extractText('bad.json', Buffer.from('{'))).to.throw(ExtractionError, 'not valid JSON');
  });

  it('chunks in overlapping windows cut at boundaries, with stable hashes', () => {
    const words = Array.from({ length: 600 }, (_, i) => `word${i}`).join(' ');
    const chunks = chunkText(words);
    expect(chunks.length).to.be.greaterThan(3);
    for (const c of chunks) {
      expect(c.content.length).to.be.at.most(CHUNK_SIZE);
      expect(c.content)
        .to.match(/^word\d+/)
        .and.match(/word\d+$/);
    }
    const firstEnd = chunks[0].content.slice(-CHUNK_OVERLAP / 2);
    expect(chunks[1].content).to.include(firstEnd.slice(firstEnd.indexOf(' ') + 1));
    expect(chunkText(words).map((c) => c.hash)).to.deep.equal(chunks.map((c) => c.hash));
    expect(chunkText('  ')).to.deep.equal([]);
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
