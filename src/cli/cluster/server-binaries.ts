// Where the production Temporal engine's binaries are: the pinned builds that tools/obtain-temporal-server.sh
// caches (the server, temporal-sql-tool and the PostgreSQL schemas beside them; the UI server), and the CLI of
// tools/obtain-temporal.sh for operator commands. No download at run time: absent binaries are reported.
import fs from 'node:fs';
import path from 'node:path';
import { CLI_VERSION } from '../../temporal/binaries';

/** The version CLI v1.5.1 embeds: the dev server and the cluster run the same engine. */
export const SERVER_VERSION = 'v1.29.1';
/** The UI CLI v1.5.1 embeds (github.com/temporalio/ui-server/v2 in its go.mod). */
export const UI_SERVER_VERSION = 'v2.42.1';

export interface ServerBinaries {
  server: string;
  sqlTool: string;
  /** `schema/postgresql/v12/temporal` and `.../visibility`: what temporal-sql-tool's update-schema applies. */
  defaultSchemaDir: string;
  visibilitySchemaDir: string;
  uiServer: string;
  /** The Temporal CLI, for `temporal operator ...` against the cluster. */
  cli: string;
}

export function serverBinaries(cacheDir: string): ServerBinaries {
  const serverDir = path.join(cacheDir, `temporal-server-${SERVER_VERSION}`);
  const schemas = path.join(serverDir, 'schema', 'postgresql', 'v12');
  return {
    server: path.join(serverDir, 'temporal-server'),
    sqlTool: path.join(serverDir, 'temporal-sql-tool'),
    defaultSchemaDir: path.join(schemas, 'temporal', 'versioned'),
    visibilitySchemaDir: path.join(schemas, 'visibility', 'versioned'),
    uiServer: path.join(cacheDir, `ui-server-${UI_SERVER_VERSION}`, 'ui-server'),
    cli: path.join(cacheDir, `temporal-cli-${CLI_VERSION}`, 'temporal'),
  };
}

/** The binaries that are not there (empty when the engine can run), for a message that says what to run. */
export function missingServerBinaries(bin: ServerBinaries): string[] {
  return [bin.server, bin.sqlTool, bin.defaultSchemaDir, bin.visibilitySchemaDir, bin.uiServer, bin.cli].filter(
    (p) => !fs.existsSync(p),
  );
}
