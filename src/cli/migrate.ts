// `npm run migrate`: applies pending migrations to DATABASE_URL (the embedded database of `npm start`
// when unset). Safe to run from several places at once: migrations take an advisory lock.
import { ConfigError, loadConfig } from '../config';
import { migrate } from '../persistence/data-source';
import { cliDatabase, connectCli, describeDatabase } from './database';

async function main(): Promise<number> {
  const config = loadConfig();
  const { url, embedded } = cliDatabase(config);
  console.log(
    `migrate: ${describeDatabase(url)}${embedded ? ' (DATABASE_URL unset: the embedded database of npm start)' : ''}`,
  );
  const ds = await connectCli(config, 'tarmac-migrate');
  try {
    const ran = await migrate(ds);
    if (ran.length) for (const name of ran) console.log(`migrate: applied ${name}`);
    else console.log('migrate: database is up to date');
    return 0;
  } finally {
    await ds.destroy();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof ConfigError || err instanceof Error ? `migrate: ${err.message}` : err);
    process.exit(1);
  },
);
