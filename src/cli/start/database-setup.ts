// The database made ready for the api and the worker: the pending migrations applied (and listed), and on
// an empty database (no organization yet) the first organization, user and API key created. The key's
// value is handed to `onKeyCreated` at once, so that it is shown even if the start fails after this.
import { createDataSource, migrate } from '../../persistence/data-source';
import { Organization } from '../../persistence/entities';
import { bootstrapOrganization } from '../../services/accounts/accounts';
import type { Config } from '../../config';
import { say } from './output';

/** Returns the API key created on a first start, else undefined. */
export async function migrateAndBootstrap(
  databaseUrl: string,
  config: Config,
  onKeyCreated: (key: string) => void,
): Promise<string | undefined> {
  let bootstrapKey: string | undefined;
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
      bootstrapKey = value;
      onKeyCreated(value);
      say(
        `first start: created organization "${organization.name}" (${organization.organization_id}), user ${user.email} and an API key`,
      );
    }
  } finally {
    await ds.destroy();
  }
  return bootstrapKey;
}
