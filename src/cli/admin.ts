// `npm run admin -- <command>`: operator commands that work straight on the database.
// Uses DATABASE_URL, else the embedded database of a running `npm start`.
import { parseArgs } from 'node:util';
import type { DataSource } from 'typeorm';
import { ConfigError, loadConfig, type Config } from '../config';
import { Organization, User } from '../persistence/entities';
import { bootstrapOrganization, createApiKey, isMember } from '../services/accounts/accounts';
import { createPasswordReset } from '../services/accounts/password-resets';
import { resetLinkLines } from './reset-link-lines';
import { connectCli } from './database';
import { isUuid } from '../ids';

const USAGE = `Usage:
  npm run admin -- create-organization --name <organization name> --email <user email>
      Creates an organization, its first user (a member; an existing user is reused) and a key for that user.

  npm run admin -- create-api-key --name <key name> [--org <organization id>] [--email <member email>]
      Creates a key in the organization: a user key for --email (who must be a member), else an
      organization key. --org may be left out when the database holds exactly one organization.

  npm run admin -- reset-password --email <user email>
      Prints a one-time link that sets the user's password (PASSWORD_RESET_TTL_SECONDS, 24 h by default);
      it replaces the user's unused links. Setting the password ends every session of the user.

The database is DATABASE_URL, or the embedded one while \`npm start\` runs.
Key values are printed once and stored only as hashes.`;

class UsageError extends Error {
  constructor(
    message: string,
    readonly showUsage = true,
  ) {
    super(message);
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

function parse(args: string[], options: Record<string, { type: 'string' }>, required: string[]) {
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: false,
    }) as unknown as {
      values: Record<string, string | undefined>;
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  for (const name of required) {
    if (!values[name]?.trim()) throw new UsageError(`--${name} is required`);
  }
  if (values.email !== undefined && !EMAIL.test(values.email.trim()))
    throw new UsageError(`--email must be an email address`);
  if (values.org !== undefined && !isUuid(values.org)) throw new UsageError(`--org must be an organization id (uuid)`);
  if (values.name !== undefined && values.name.trim().length > 200)
    throw new UsageError('--name must be at most 200 characters');
  return values;
}

async function createOrganizationCommand(ds: DataSource, args: string[]): Promise<void> {
  const v = parse(args, { name: { type: 'string' }, email: { type: 'string' } }, ['name', 'email']);
  const { organization, user, key, value } = await bootstrapOrganization(ds, {
    organizationName: v.name!.trim(),
    email: v.email!,
    keyName: 'created by npm run admin',
  });
  console.log(`organization  ${organization.organization_id}  "${organization.name}"`);
  console.log(`user          ${user.user_id}  ${user.email}`);
  console.log(`api key       ${key.api_key_id}  (user key)`);
  console.log('');
  console.log('API key value (shown only now):');
  console.log(`  ${value}`);
}

async function createApiKeyCommand(ds: DataSource, args: string[]): Promise<void> {
  const v = parse(args, { name: { type: 'string' }, org: { type: 'string' }, email: { type: 'string' } }, ['name']);
  let organization: Organization | null;
  if (v.org) {
    organization = await ds.getRepository(Organization).findOneBy({ organization_id: v.org });
    if (!organization) throw new Error(`No organization ${v.org}`);
  } else {
    const all = await ds.getRepository(Organization).find({ order: { created_at: 'ASC' }, take: 21 });
    if (all.length === 0)
      throw new Error(
        'The database has no organization yet: create one with `create-organization` (or run `npm start` once).',
      );
    if (all.length > 1) {
      const list = all
        .slice(0, 20)
        .map((o) => `  ${o.organization_id}  ${o.name}`)
        .join('\n');
      throw new UsageError(
        `Several organizations exist; choose one with --org:\n${list}${all.length > 20 ? '\n  ...' : ''}`,
        false,
      );
    }
    organization = all[0];
  }
  let user: User | null = null;
  if (v.email) {
    user = await ds.getRepository(User).findOneBy({ email: v.email.trim().toLowerCase() });
    if (!user || !(await isMember(ds, organization.organization_id, user.user_id))) {
      throw new Error(
        `${v.email} is not a member of organization ${organization.organization_id} ("${organization.name}")`,
      );
    }
  }
  const { key, value } = await createApiKey(ds, {
    organizationId: organization.organization_id,
    userId: user?.user_id ?? null,
    name: v.name!.trim(),
    createdBy: user?.user_id ?? 'admin-cli',
  });
  console.log(`organization  ${organization.organization_id}  "${organization.name}"`);
  console.log(
    `api key       ${key.api_key_id}  "${key.name}"  (${user ? `user key for ${user.email}` : 'organization key'})`,
  );
  console.log('');
  console.log('API key value (shown only now):');
  console.log(`  ${value}`);
}

async function resetPasswordCommand(ds: DataSource, args: string[], config: Config): Promise<void> {
  const v = parse(args, { email: { type: 'string' } }, ['email']);
  const email = v.email!.trim().toLowerCase();
  const user = await ds.getRepository(User).findOneBy({ email });
  if (!user) throw new Error(`No user has the email ${email}`);
  const { token, expiresAt } = await createPasswordReset(ds, user.user_id, config.passwordResetTtlSeconds);
  console.log(`user          ${user.user_id}  ${user.email}`);
  console.log('');
  for (const line of resetLinkLines(config.publicBaseUrl, token, expiresAt)) console.log(line);
}

const COMMANDS: Record<string, (ds: DataSource, args: string[], config: Config) => Promise<void>> = {
  'create-organization': createOrganizationCommand,
  'create-api-key': createApiKeyCommand,
  'reset-password': resetPasswordCommand,
};

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    console.log(USAGE);
    return command ? 0 : 2;
  }
  const run = COMMANDS[command];
  if (!run) {
    console.error(`admin: unknown command ${JSON.stringify(command)}\n\n${USAGE}`);
    return 2;
  }
  // Arguments are checked before connecting, so a typo answers at once.
  if (rest.includes('--help') || rest.includes('-h')) {
    console.log(USAGE);
    return 0;
  }
  try {
    dryParse(command, rest);
  } catch (err) {
    if (err instanceof UsageError) return usage(err);
    throw err;
  }
  const config = loadConfig();
  const ds = await connectCli(config, 'tarmac-admin');
  try {
    await run(ds, rest, config);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) return usage(err);
    if ((err as { code?: string }).code === '42P01') {
      throw new Error('The database has no tables yet: run `npm run migrate` (or `npm start`) first.');
    }
    throw err;
  } finally {
    await ds.destroy();
  }
}

function dryParse(command: string, args: string[]): void {
  if (command === 'create-organization')
    parse(args, { name: { type: 'string' }, email: { type: 'string' } }, ['name', 'email']);
  else if (command === 'reset-password') parse(args, { email: { type: 'string' } }, ['email']);
  else parse(args, { name: { type: 'string' }, org: { type: 'string' }, email: { type: 'string' } }, ['name']);
}

function usage(err: UsageError): number {
  if (err.message) console.error(`admin: ${err.message}${err.showUsage ? '\n' : ''}`);
  if (err.showUsage) console.error(USAGE);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof ConfigError || err instanceof Error ? `admin: ${err.message}` : err);
    process.exit(1);
  },
);
