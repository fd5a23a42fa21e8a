// The database made ready for the api and the worker: the pending migrations applied (and listed), and on
// an empty database (no organization yet) the first organization, user, API key and a one-time link that sets
// the user's password. They are handed to `onCreated` at once, so that they are shown even if the start fails
// after this.
import { createDataSource, migrate } from '../../persistence/data-source';
import { Organization } from '../../persistence/entities';
import { bootstrapOrganization } from '../../services/accounts/accounts';
import { createPasswordReset } from '../../services/accounts/password-resets';
import type { Config } from '../../config';
import { say } from './output';

/** What a first start made: shown once, never stored but as hashes. */
export interface FirstStart {
  apiKey: string;
  /** The token of the link that sets the first user's password, and when it ends. */
  resetToken: string;
  resetExpiresAt: Date;
}

/** Returns what a first start created, else undefined. */
export async function migrateAndBootstrap(
  databaseUrl: string,
  config: Config,
  onCreated: (first: FirstStart) => void,
): Promise<FirstStart | undefined> {
  let first: FirstStart | undefined;
  const ds = await createDataSource(databaseUrl, { applicationName: 'tarmac-start', poolSize: 2 }).initialize();
  try {
    const ran = await migrate(ds);
    say(ran.length ? `migrations: applied ${ran.join(', ')}` : 'migrations: database is up to date');
    if ((await ds.getRepository(Organization).count()) === 0) {
      const { organization, user, value } = await bootstrapOrganization(ds, {
        organizationName: config.bootstrap.organizationName,
        email: config.bootstrap.email,
        keyName: 'created by npm start',
      });
      const reset = await createPasswordReset(ds, user.user_id, config.passwordResetTtlSeconds);
      first = { apiKey: value, resetToken: reset.token, resetExpiresAt: reset.expiresAt };
      onCreated(first);
      say(
        `first start: created organization "${organization.name}" (${organization.organization_id}), user ${user.email}, an API key and a link that sets the password`,
      );
    }
  } finally {
    await ds.destroy();
  }
  return first;
}
