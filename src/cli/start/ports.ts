// Before anything is started: every port `npm start` is about to bind is free (the api's, and those of
// the local PostgreSQL, Temporal dev server and embedding server when they run). Otherwise one error names each busy port
// and the variable that moves it, instead of a crash later.
import net from 'node:net';
import type { Config } from '../../config';

export async function checkPortsFree(
  config: Config,
  local: { postgres: boolean; temporal: boolean; embeddings: boolean },
): Promise<void> {
  const ports: Array<[string, number, string]> = [['api (PORT)', config.port, config.host]];
  if (local.postgres) ports.push(['PostgreSQL (EMBEDDED_POSTGRES_PORT)', config.embeddedPostgresPort, '127.0.0.1']);
  if (local.temporal) {
    ports.push(['Temporal (TEMPORAL_DEV_PORT)', config.temporal.devPort, '127.0.0.1']);
    ports.push(['Temporal UI (TEMPORAL_DEV_UI_PORT)', config.temporal.devUiPort, '127.0.0.1']);
  }
  if (local.embeddings)
    ports.push(['local embeddings (LOCAL_EMBEDDINGS_PORT)', config.localEmbeddings.port, config.localEmbeddings.host]);
  const busy: string[] = [];
  for (const [what, port, host] of ports) {
    if (!(await portFree(port, host))) busy.push(`port ${port} for ${what} is already in use`);
  }
  if (busy.length) {
    throw new Error(
      `${busy.join('\n')}\nIs another \`npm start\` running? Stop it, or choose other ports with the variables named above.`,
    );
  }
}

function portFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}
