// The drive source against the local drive double (test/harness/drive-provider.ts, Google Drive's wire
// protocol): code exchange, tokens persisted through the caller's store, refresh when expired and on 401,
// downloads and text exports, folders with pagination, per-item errors, 429 with Retry-After waited out.
import { expect } from 'chai';
import {
  driveSource,
  exchangeDriveAuthCode,
  DriveAuthError,
  type DriveToken,
  type DriveTokenStore,
} from '../../../../../src/services/data-connectors/sources/drive';
import { SourceError } from '../../../../../src/services/data-connectors/sources/source-error';
import { startDriveProvider, type DriveProvider } from '../../../../harness/drive-provider';
import { listAll, rejectionOf, sourceContext } from '../../../../support/sources';

const DOC = 'application/vnd.google-apps.document';
const SHEET = 'application/vnd.google-apps.spreadsheet';
const FOLDER = 'application/vnd.google-apps.folder';

/** A token store as a connector row would be: what was saved, in order. */
function memoryTokens(initial?: DriveToken): DriveTokenStore & { saved: DriveToken[] } {
  const saved: DriveToken[] = [];
  return {
    saved,
    load: async () => saved.at(-1) ?? initial,
    save: async (t) => void saved.push(t),
  };
}

describe('drive source (drive double)', () => {
  let drive: DriveProvider;
  beforeEach(async () => (drive = await startDriveProvider({ pageSize: 2 })));
  afterEach(async () => drive.close());

  it('exchanges the auth code once, persists the token and reads files and exports', async () => {
    const pdf = drive.addFile({ name: 'report.pdf', mimeType: 'application/pdf', content: '%PDF-1.7 data' });
    const doc = drive.addFile({ name: 'Notes', mimeType: DOC, content: 'Meeting notes\nline 2' });
    const sheet = drive.addFile({ name: 'Budget', mimeType: SHEET, content: 'a,b\n1,2\n' });
    const tokens = memoryTokens();
    const source = driveSource(
      { auth_code: drive.issueCode(), file_ids: [pdf, doc, sheet] },
      { settings: drive.settings(), tokens },
    );
    const { items, errors } = await listAll(source);
    expect(errors).to.deep.equal([]);
    expect(items.map((i) => [i.path, i.sourceUri, i.title, i.version])).to.deep.equal([
      [`${pdf}/report.pdf`, `drive://${pdf}`, 'report.pdf', '1'],
      [`${doc}/Notes.txt`, `drive://${doc}`, 'Notes', '1'],
      [`${sheet}/Budget.csv`, `drive://${sheet}`, 'Budget', '1'],
    ]);
    expect(tokens.saved).to.have.length(1);
    expect(tokens.saved[0].accessToken).to.match(/^ya29\./);
    expect(tokens.saved[0].refreshToken).to.match(/^1\/\//);
    expect(tokens.saved[0].expiresAt).to.be.greaterThan(Date.now());

    const [a, b, c] = await Promise.all(items.map((i) => source.read(i, sourceContext())));
    expect([a.body.toString(), a.contentType]).to.deep.equal(['%PDF-1.7 data', 'application/pdf']);
    expect([b.body.toString(), b.contentType]).to.deep.equal(['Meeting notes\nline 2', 'text/plain; charset=utf-8']);
    expect([c.body.toString(), c.contentType]).to.deep.equal(['a,b\n1,2\n', 'text/csv; charset=utf-8']);
    const paths = drive.requests.map(
      (r) =>
        `${r.method} ${r.path}${r.query.alt ? `?alt=${r.query.alt}` : ''}${r.query.mimeType ? `?mimeType=${r.query.mimeType}` : ''}`,
    );
    expect(paths).to.include(`GET /drive/v3/files/${doc}/export?mimeType=text/plain`);
    expect(paths).to.include(`GET /drive/v3/files/${sheet}/export?mimeType=text/csv`);
    expect(paths).to.include(`GET /drive/v3/files/${pdf}?alt=media`);
    expect(drive.requests.filter((r) => r.grantType).map((r) => r.grantType)).to.deep.equal(['authorization_code']);

    // A second listing (the next job) uses the stored token: no exchange (the code was one-use anyway).
    drive.updateFile(doc, 'changed');
    const next = await listAll(
      driveSource({ auth_code: 'spent', file_ids: [doc] }, { settings: drive.settings(), tokens }),
    );
    expect(next.items[0].version).to.equal('2');
    expect(drive.requests.filter((r) => r.grantType)).to.have.length(1);
  });

  it('exchangeDriveAuthCode: a refused code or client is a clear DriveAuthError', async () => {
    const token = await exchangeDriveAuthCode(drive.settings(), drive.issueCode());
    expect(token.accessToken).to.match(/^ya29\./);
    const spent = await rejectionOf(exchangeDriveAuthCode(drive.settings(), 'not-a-code'));
    expect(spent).to.be.instanceOf(DriveAuthError);
    expect(spent.type).to.equal('Unauthorized');
    expect(spent.message).to.equal(
      'the drive refused the auth_code (HTTP 400, invalid_grant: Bad Request); connect the drive again for a new auth_code',
    );
    const wrongClient = await rejectionOf(
      exchangeDriveAuthCode({ ...drive.settings(), clientSecret: 'nope' }, drive.issueCode()),
    );
    expect(wrongClient.message).to.contain('HTTP 401, invalid_client');
    const unconfigured = await rejectionOf(
      exchangeDriveAuthCode({ ...drive.settings(), clientSecret: undefined }, 'x'),
    );
    expect(unconfigured.message).to.contain('DRIVE_DATA_CONNECTOR_CLIENT_SECRET');
  });

  it('refreshes an expired token before use, and a rejected one on 401, saving each', async () => {
    const id = drive.addFile({ name: 'a.txt', content: 'A' });
    const first = await exchangeDriveAuthCode(drive.settings(), drive.issueCode());
    // Stored as expired: refreshed before the first request.
    const tokens = memoryTokens({ ...first, expiresAt: Date.now() - 1000 });
    const source = driveSource({ file_ids: [id] }, { settings: drive.settings(), tokens });
    const { items } = await listAll(source);
    expect(items).to.have.length(1);
    expect(tokens.saved).to.have.length(1);
    expect(tokens.saved[0].accessToken).to.not.equal(first.accessToken);
    expect(tokens.saved[0].refreshToken).to.equal(first.refreshToken); // kept: the refresh answer has none

    // Revoked by the provider before its expiry: the 401 refreshes once and the read goes on.
    drive.expireAccessTokens();
    const content = await source.read(items[0], sourceContext());
    expect(content.body.toString()).to.equal('A');
    expect(tokens.saved).to.have.length(2);
    expect(drive.requests.filter((r) => r.grantType).map((r) => r.grantType)).to.deep.equal([
      'authorization_code',
      'refresh_token',
      'refresh_token',
    ]);
  });

  it('fails the whole listing when the refresh token is refused or there is no token at all', async () => {
    const id = drive.addFile({ name: 'a.txt', content: 'A' });
    const first = await exchangeDriveAuthCode(drive.settings(), drive.issueCode());
    drive.expireAccessTokens();
    drive.revokeRefreshTokens();
    const err = await rejectionOf(
      listAll(driveSource({ file_ids: [id] }, { settings: drive.settings(), tokens: memoryTokens(first) })),
    );
    expect(err).to.be.instanceOf(DriveAuthError);
    expect(err.message).to.contain(
      'the drive refused the stored refresh token (HTTP 400, invalid_grant: Token has been expired or revoked.)',
    );
    const none = await rejectionOf(
      listAll(driveSource({ file_ids: [id] }, { settings: drive.settings(), tokens: memoryTokens() })),
    );
    expect(none.message).to.equal('the drive connector holds no token and no auth_code');
  });

  it('lists folders recursively across pages, and reports missing, forbidden, unsupported and too large files', async () => {
    const folder = drive.addFile({ name: 'Team', mimeType: FOLDER });
    const sub = drive.addFile({ name: 'Sub', mimeType: FOLDER, parents: [folder] });
    const inFolder = [1, 2, 3].map((n) =>
      drive.addFile({ name: `f${n}.txt`, content: `file ${n}`, parents: [folder] }),
    );
    const deep = drive.addFile({ name: 'deep.md', content: '# deep', parents: [sub] });
    drive.addFile({ name: 'gone.txt', content: 'x', parents: [folder], trashed: true });
    const forbidden = drive.addFile({ name: 'private.txt', content: 'no', forbidden: true });
    const drawing = drive.addFile({ name: 'Sketch', mimeType: 'application/vnd.google-apps.drawing' });
    const big = drive.addFile({ name: 'big.bin', mimeType: 'application/octet-stream', content: Buffer.alloc(5000) });
    const source = driveSource(
      { file_ids: [folder, 'missing123', forbidden, drawing, big, '../etc', inFolder[0]] },
      {
        settings: drive.settings(),
        tokens: memoryTokens(await exchangeDriveAuthCode(drive.settings(), drive.issueCode())),
      },
    );
    const ctx = sourceContext({ maxItemBytes: 1000 });
    const { items, errors } = await listAll(source, ctx);
    expect(items.map((i) => i.sourceUri).sort()).to.deep.equal([...inFolder, deep].map((id) => `drive://${id}`).sort());
    expect(errors.map((e) => [e.type, e.path])).to.deep.equal([
      ['NotFound', 'drive://missing123'],
      ['Forbidden', `drive://${forbidden}`],
      ['Unsupported', `drive://${drawing}`],
      ['TooLarge', `drive://${big}`],
      ['InvalidFileId', '../etc'],
    ]);
    expect(errors[0].message).to.equal('drive://missing123: File not found: missing123.');
    // Three files of Team on pages of two: two listing requests for it.
    expect(drive.requests.filter((r) => r.query.q === `'${folder}' in parents and trashed = false`)).to.have.length(2);

    // Grown past the cap after listing: the download stops at the cap.
    drive.updateFile(inFolder[0], Buffer.alloc(4000));
    const first = items.find((i) => i.sourceUri === `drive://${inFolder[0]}`)!;
    const err = await rejectionOf(source.read(first, ctx));
    expect(err).to.be.instanceOf(SourceError);
    expect(err.type).to.equal('TooLarge');
  });

  it('waits out 429 with Retry-After, and gives up past the bound with RateLimited', async () => {
    const id = drive.addFile({ name: 'a.txt', content: 'A' });
    const tokens = memoryTokens(await exchangeDriveAuthCode(drive.settings(), drive.issueCode()));
    drive.rateLimit(2, 1);
    const ctx = sourceContext();
    const source = driveSource({ file_ids: [id] }, { settings: drive.settings(), tokens });
    const { items } = await listAll(source, ctx);
    expect(items).to.have.length(1);
    expect(ctx.notes.filter((n) => n.includes('rate limited, waiting 1 s'))).to.have.length(2);

    // A Retry-After beyond the bound is not waited for.
    drive.rateLimit(1, 3600);
    const err = await rejectionOf(source.read(items[0], ctx));
    expect(err.type).to.equal('RateLimited');
    expect(err.message).to.contain('Retry-After 3600');
    // Still limited after the allowed retries.
    const impatient = driveSource(
      { file_ids: [id] },
      { settings: drive.settings(), tokens, retry: { retries: 1, maxWaitSeconds: 5 } },
    );
    drive.rateLimit(2, 1);
    const listed = await listAll(impatient);
    expect(listed.errors.map((e) => e.type)).to.deep.equal(['RateLimited']);
  });
});
