// The wiki source against the local wiki double (test/harness/wiki-provider.ts, Confluence Cloud's REST API):
// all pages, spaces, page trees, pagination by `_links.next`, storage HTML to text, versions, a refused token
// failing the listing, 429 with Retry-After waited out, domains checked.
import { expect } from 'chai';
import {
  storageToText,
  wikiDomain,
  wikiSource,
  WikiAuthError,
  type WikiConfig,
} from '../../../../../src/services/data-connectors/sources/wiki';
import { createOutboundPolicy } from '../../../../../src/security/outbound-policy';
import { startWikiProvider, type WikiProvider } from '../../../../harness/wiki-provider';
import { listAll, rejectionOf, sourceContext } from '../../../../support/sources';

const STORAGE = `<h1>Runbook</h1><p>Restart the <strong>api</strong> with <a href="https://x/y">the script</a>:</p>
<ac:structured-macro ac:name="code"><ac:plain-text-body><![CDATA[npm run api && echo "<ok>"]]></ac:plain-text-body></ac:structured-macro>
<ul><li>one</li><li>two &amp; three</li></ul><ac:image><ri:attachment ri:filename="a.png" /></ac:image>
<table><tbody><tr><th>Key</th><th>Value</th></tr><tr><td>port</td><td>8080</td></tr></tbody></table>`;

describe('wiki source (wiki double)', () => {
  let wiki: WikiProvider;
  let config: WikiConfig;
  beforeEach(async () => {
    wiki = await startWikiProvider({ maxLimit: 2 });
    config = { wiki_email: wiki.email, wiki_api_token: wiki.token, domain: 'example.atlassian.net' };
  });
  afterEach(async () => wiki.close());

  it('turns storage-format HTML into text', () => {
    const text = storageToText(STORAGE);
    expect(text).to.contain('Runbook');
    expect(text).to.contain('Restart the api with the script:');
    expect(text).to.contain('npm run api && echo "<ok>"');
    expect(text).to.contain(' * one\n * two & three');
    expect(text).to.match(/Key\s+Value\nport\s+8080/);
    expect(text).to.not.contain('https://x/y');
    expect(text).to.not.match(/<\/?(p|ac:|ri:|strong|table)/);
  });

  it('lists every page across pages of results, and reads them as text with versions', async () => {
    const home = wiki.addPage({ title: 'Home', space: 'ENG', body: STORAGE });
    const ids = [
      home,
      ...[1, 2, 3, 4].map((n) =>
        wiki.addPage({ title: `Page ${n}/x`, space: n % 2 ? 'ENG' : 'OPS', body: `<p>text ${n}</p>` }),
      ),
    ];
    wiki.addPage({ title: 'Hidden', space: 'ENG', body: '<p>secret</p>', restricted: true });
    const source = wikiSource(config, { settings: wiki.settings(), pageSize: 50 });
    const ctx = sourceContext();
    const { items, errors } = await listAll(source, ctx);
    expect(errors).to.deep.equal([]);
    expect(items.map((i) => i.sourceUri)).to.deep.equal(ids.map((id) => `wiki://example.atlassian.net/${id}`));
    expect(items[1]).to.deep.equal({
      path: `ENG/${ids[1]}/Page 1_x.txt`,
      sourceUri: `wiki://example.atlassian.net/${ids[1]}`,
      title: 'Page 1/x',
      version: '1',
      meta: { wiki_page_id: ids[1], space_key: 'ENG', url: `${wiki.baseUrl}/wiki/spaces/ENG/pages/${ids[1]}` },
    });
    // Five pages, the server's limit 2 (though 50 were asked for): three listing requests, by _links.next.
    const listings = wiki.requests.filter((r) => r.path === '/wiki/rest/api/content');
    expect(listings.map((r) => r.query.start)).to.deep.equal(['0', '2', '4']);
    expect(listings[0].query.limit).to.equal('50');

    const content = await source.read(items[0], ctx);
    expect(content.contentType).to.equal('text/plain; charset=utf-8');
    expect(content.body.toString()).to.match(/^Home\n\nRunbook\n/);
    expect(content.body.toString()).to.contain('npm run api');
    expect(content.version).to.equal('1');

    wiki.editPage(ids[2], '<p>edited</p>');
    const again = await listAll(wikiSource({ ...config, space_keys: ['OPS'] }, { settings: wiki.settings() }));
    expect(again.items.map((i) => [i.sourceUri, i.version])).to.deep.equal([
      [`wiki://example.atlassian.net/${ids[2]}`, '2'],
      [`wiki://example.atlassian.net/${ids[4]}`, '1'],
    ]);
  });

  it('reads the pages of page_ids and all their descendants, and reports missing ones', async () => {
    const root = wiki.addPage({ title: 'Root', space: 'ENG', body: '<p>r</p>' });
    const kids = [1, 2, 3].map((n) =>
      wiki.addPage({ title: `Kid ${n}`, space: 'ENG', parent: root, body: `<p>k${n}</p>` }),
    );
    const grandkid = wiki.addPage({ title: 'Grandkid', space: 'ENG', parent: kids[2], body: '<p>g</p>' });
    wiki.addPage({ title: 'Elsewhere', space: 'ENG', body: '<p>e</p>' });
    const hidden = wiki.addPage({ title: 'Hidden', space: 'ENG', body: '<p>h</p>', restricted: true });
    const { items, errors } = await listAll(
      wikiSource({ ...config, page_ids: [root, '999999', hidden, 'x/../1', kids[0]] }, { settings: wiki.settings() }),
    );
    expect(items.map((i) => i.title)).to.deep.equal(['Root', 'Kid 1', 'Kid 2', 'Kid 3', 'Grandkid']);
    expect(items[4].sourceUri).to.equal(`wiki://example.atlassian.net/${grandkid}`);
    expect(errors.map((e) => [e.type, e.path])).to.deep.equal([
      ['NotFound', 'wiki://example.atlassian.net/999999'],
      ['NotFound', `wiki://example.atlassian.net/${hidden}`],
      ['InvalidPageId', 'x/../1'],
    ]);
    expect(errors[0].message).to.contain('No content found with id');
    expect(wiki.requests.filter((r) => r.path === `/wiki/rest/api/content/${root}/child/page`)).to.have.length(2);
  });

  it('fails the whole listing on a refused token, with a clear message', async () => {
    wiki.addPage({ title: 'Home', space: 'ENG', body: '<p>x</p>' });
    const err = await rejectionOf(
      listAll(wikiSource({ ...config, wiki_api_token: 'revoked' }, { settings: wiki.settings() })),
    );
    expect(err).to.be.instanceOf(WikiAuthError);
    expect(err.type).to.equal('Unauthorized');
    expect(err.message).to.equal(
      'the wiki at example.atlassian.net refused wiki_email and wiki_api_token (HTTP 401): check the email and create a new API token',
    );
  });

  it('waits out 429 with Retry-After; past the bound the listing reports RateLimited', async () => {
    const id = wiki.addPage({ title: 'Home', space: 'ENG', body: '<p>x</p>' });
    wiki.rateLimit(2, 1);
    const ctx = sourceContext();
    const { items } = await listAll(wikiSource(config, { settings: wiki.settings() }), ctx);
    expect(items.map((i) => i.sourceUri)).to.deep.equal([`wiki://example.atlassian.net/${id}`]);
    expect(ctx.notes.filter((n) => n.includes('rate limited, waiting 1 s'))).to.have.length(2);

    wiki.rateLimit(1, 600);
    const limited = await listAll(
      wikiSource(config, { settings: wiki.settings(), retry: { retries: 3, maxWaitSeconds: 60 } }),
    );
    expect(limited.errors.map((e) => [e.type, e.path])).to.deep.equal([
      ['RateLimited', 'pages of example.atlassian.net'],
    ]);
    expect(limited.errors[0].message).to.contain('Retry-After 600');
  });

  it('accepts only host names of the allowed suffixes as the domain', async () => {
    const settings = { baseUrl: undefined, domainSuffixes: ['atlassian.net'] };
    expect(wikiDomain('https://Example.atlassian.net/', settings)).to.deep.equal({ domain: 'example.atlassian.net' });
    expect(wikiDomain('atlassian.net', settings)).to.deep.equal({ domain: 'atlassian.net' });
    for (const bad of [
      '127.0.0.1',
      'localhost',
      'evil.com',
      'example.atlassian.net.evil.com',
      'x.atlassian.net/path',
      'http://x.atlassian.net',
    ]) {
      expect(wikiDomain(bad, settings), bad).to.have.property('error');
    }
    expect(wikiDomain('wiki.example.com', { baseUrl: undefined, domainSuffixes: [] })).to.deep.equal({
      domain: 'wiki.example.com',
    });
    const err = await rejectionOf(
      listAll(wikiSource({ ...config, domain: '10.0.0.1' }, { settings: wiki.settings() })),
    );
    expect(err.type).to.equal('InvalidConfig');
    expect(err.message).to.contain('host name');
    expect(wiki.requests).to.have.length(0);
  });

  it("checks a tenant's own domain (any suffix allowed) with the outbound policy before the first request", async () => {
    // A domain whose DNS answers cloud metadata: refused, and nothing is asked of anyone.
    const anyDomain = { baseUrl: undefined, domainSuffixes: [] };
    const policy = createOutboundPolicy(
      { cidrs: [], hostPorts: [] },
      { resolver: async () => [{ address: '169.254.169.254', family: 4 }] },
    );
    const err = await rejectionOf(
      listAll(wikiSource({ ...config, domain: 'wiki.tenant.example' }, { settings: anyDomain, policy })),
    );
    expect(err.type).to.equal('AddressRefused');
    expect(err.message).to.contain('OUTBOUND_ALLOW');
    expect(wiki.requests).to.have.length(0);
  });
});
