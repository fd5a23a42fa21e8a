// Database access for the operator commands (`npm run migrate`, `npm run admin`).
import type { DataSource } from 'typeorm';
import type { Config } from '../config';
import { createDataSource } from '../persistence/data-source';
import { embeddedPassword, embeddedPostgresUrl } from './postgres/embedded-postgres';
import path from 'node:path';

/** DATABASE_URL, else the embedded database that `npm start` runs (reachable while it runs). */
export function cliDatabase(config: Config): { url: string; embedded: boolean } {
  if (config.databaseUrl) return { url: config.databaseUrl, embedded: false };
  const password = embeddedPassword(path.join(config.dataDir, 'postgres')) ?? '(not yet created: run npm start first)';
  return { url: embeddedPostgresUrl(config.embeddedPostgresPort, password), embedded: true };
}

/** Connects, or throws an error that tells the operator what to do. */
export async function connectCli(config: Config, applicationName: string): Promise<DataSource> {
  const { url, embedded } = cliDatabase(config);
  try {
    return await createDataSource(url, { applicationName, poolSize: 2 }).initialize();
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    if (embedded) {
      throw new Error(
        `Cannot reach the local database of \`npm start\` at localhost:${config.embeddedPostgresPort} (${reason}).\n` +
          'Run this command while `npm start` is running, or set DATABASE_URL.',
      );
    }
    throw new Error(`Cannot connect to DATABASE_URL (${reason})`);
  }
}

/** A short, password-free description of where a command is connected. */
export function describeDatabase(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 5432}${u.pathname}`;
  } catch {
    return '(unparseable DATABASE_URL)';
  }
}
