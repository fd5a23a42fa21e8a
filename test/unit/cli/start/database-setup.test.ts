// The first start's bootstrap (src/cli/start/database-setup.ts) on a PostgreSQL of this file's own: an empty
// database gets the first organization, user and API key and a one-time link that sets the user's password,
// stored hashed; the banner shows the key and the link once; a second start creates nothing.
import { expect } from 'chai';
import { loadConfig } from '../../../../src/config';
import { printBanner } from '../../../../src/cli/start/banner';
import { migrateAndBootstrap, type FirstStart } from '../../../../src/cli/start/database-setup';
import { setPasswordWithReset } from '../../../../src/services/accounts/password-resets';
import { hashSecretToken } from '../../../../src/security/secret-tokens';
import { verifyPassword } from '../../../../src/security/passwords';
import { migratedDatabase, type TestDatabase } from '../../../harness/postgres';

/** What printBanner writes, instead of writing it. */
function bannerOf(first: FirstStart | undefined, config = loadConfig({ PUBLIC_BASE_URL: 'https://tarmac.example' })) {
  const write = process.stdout.write;
  let text = '';
  process.stdout.write = ((chunk: string) => ((text += chunk), true)) as typeof process.stdout.write;
  try {
    printBanner(config, first, { mode: 'off', missing: [] });
  } finally {
    process.stdout.write = write;
  }
  return text;
}

describe('npm start: the first start', function () {
  this.timeout(120_000);
  let db: TestDatabase;
  before(async () => (db = await migratedDatabase()));
  after(() => db?.stop());

  it('creates the first user with a key and a one-time link that sets the password; later starts create nothing', async () => {
    const config = loadConfig({ BOOTSTRAP_EMAIL: 'first@example.test' });
    const handed: FirstStart[] = [];
    const first = await migrateAndBootstrap(db.url, config, (f) => handed.push(f));
    expect(first).to.not.equal(undefined);
    expect(handed).to.deep.equal([first]);
    expect(first!.apiKey).to.match(/^tmk_/);
    expect(first!.resetExpiresAt.getTime() - Date.now()).to.be.closeTo(86_400_000, 60_000);

    const [reset] = await db.ds.query(
      `SELECT r.token_hash, r.used_at FROM password_resets r JOIN users u USING (user_id) WHERE u.email = $1`,
      ['first@example.test'],
    );
    expect(reset.token_hash.equals(hashSecretToken(first!.resetToken)), 'stored as its hash').to.equal(true);
    expect(reset.used_at).to.equal(null);

    const banner = bannerOf(first);
    expect(banner).to.include(first!.apiKey);
    expect(banner).to.include(`https://tarmac.example/console/set-password#token=${first!.resetToken}`);
    expect(banner).to.include(`https://tarmac.example/api/password-resets/${first!.resetToken}`);
    expect(bannerOf(undefined)).to.not.include('set-password#token=');
    expect(bannerOf(undefined)).to.include('npm run admin -- reset-password --email admin@localhost');

    // The link sets the password once.
    const userId = await setPasswordWithReset(db.ds, first!.resetToken, 'the first password');
    const [user] = await db.ds.query(`SELECT password_hash FROM users WHERE user_id = $1`, [userId]);
    expect(await verifyPassword('the first password', user.password_hash)).to.equal(true);
    const reused = await setPasswordWithReset(db.ds, first!.resetToken, 'another password').catch((e) => e);
    expect(reused.status).to.equal(404);

    expect(await migrateAndBootstrap(db.url, config, () => expect.fail('a second start creates nothing'))).to.equal(
      undefined,
    );
  });
});
