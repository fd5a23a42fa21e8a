// `npm run cluster`: the production shape on one machine (src/cli/cluster/production-shape.ts): PostgreSQL, two
// Temporal server nodes with the UI, an S3-compatible store, HAProxy in front of two apis and of Temporal, two
// workers and the embedding server, each on its own 127.0.0.x address with its own directory under
// .data/cluster. It obtains what is missing (tools/*.sh, cached in ~/.cache/tarmac), prints the same banner as
// `npm start` with the load balancer's URL and the hosts, and stops everything on Ctrl-C (workers first).
//   npm run cluster -- [--apis N] [--workers M] [--temporal-nodes K]
import path from 'node:path';
import { loadConfig } from '../config';
import { describeIsolation, isolationOnThisHost } from '../runtime/sandbox/isolation';
import { pastaProgram } from '../runtime/sandbox/pasta-program';
import { printBanner } from './start/banner';
import { obtainEmbeddingModel, obtainPlatformNode, obtainPostgres, obtainSandbox, runTool } from './start/obtain';
import { red, say } from './start/output';
import { bannerConfig, startProductionShape, type ProductionShape } from './cluster/production-shape';

function flag(name: string): number | undefined {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return undefined;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n)) throw new Error(`--${name} takes a number`);
  return n;
}

async function main() {
  const config = loadConfig();
  const dataDir = path.join(config.dataDir, 'cluster');
  say(`starting the production shape on this machine (data in ${path.relative(process.cwd(), dataDir)})`);
  await obtainSandbox(config);
  const isolation = isolationOnThisHost(config.sandbox.mode, pastaProgram(config.sandbox));
  if (isolation.mode === 'none') throw new Error(`User code ${describeIsolation(isolation)}`);
  await obtainPostgres();
  await runTool('obtain-temporal.sh', ['--cli-only'], 'The Temporal server is built in the CLI module graph.');
  await runTool('obtain-temporal-server.sh', [], 'Go and the Go module proxy build the Temporal server.');
  const haproxy = await runTool('obtain-haproxy.sh', [], 'Install HAProxy (Debian: apt-get install haproxy).');
  await runTool('obtain-moto.sh', [], 'Python 3 with pip and PyPI install the S3-compatible store (moto).');
  let embeddings = true;
  await obtainEmbeddingModel().catch((err: Error) => {
    say(red(`${err.message}\nContinuing without the local embedding model.`));
    embeddings = false;
  });
  const node = await obtainPlatformNode();
  if (!haproxy) throw new Error('tools/obtain-haproxy.sh printed no HAProxy binary');

  let shape: ProductionShape | undefined;
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    say('stopping: workers (draining), apis, embedding server, store, Temporal, load balancer, PostgreSQL...');
    await shape?.stop();
    say('stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  shape = await startProductionShape({
    dataDir,
    apis: flag('apis'),
    workers: flag('workers'),
    temporalNodes: flag('temporal-nodes'),
    embeddings,
    node,
    haproxy,
    say,
  });
  printBanner(bannerConfig(shape, dataDir), shape.firstStart, isolation, embeddings);
  const { plan } = shape;
  process.stdout.write(
    [
      'Hosts (each its own address and directory under .data/cluster):',
      `  load balancer  ${shape.apiUrl} (apis), ${shape.temporalAddress} (Temporal)`,
      ...shape.apis.map((a) => `  ${a.name.padEnd(13)}  ${a.url}`),
      ...plan.workers.map((w) => `  ${w.name.padEnd(13)}  ${w.host} (metrics :${w.metricsPort})`),
      ...shape.temporal.nodes.map((n) => `  temporal-${n.spec.name.padEnd(4)}  ${n.frontendAddress}`),
      `  postgres       ${plan.postgres.host}:${plan.postgres.port}`,
      `  object store   ${shape.store.endpoint}`,
      ...(shape.embeddings ? [`  embeddings     ${shape.embeddings.url}`] : []),
      '',
    ].join('\n'),
  );
}

main().catch((err: Error) => {
  say(red(err.message));
  process.exit(1);
});
