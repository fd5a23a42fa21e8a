// The binaries `npm start` needs, obtained by the scripts of tools/ (pinned, cached in ~/.cache/tarmac),
// their output shown as progress lines. A script that fails stops the start with an error that says
// what to do instead.
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { childEnv, Config } from '../../config';
import { temporalCli } from '../../temporal/binaries';
import { describeExit } from './children';
import { red, say } from './output';
import { REPO_ROOT, toolScript } from './paths';

/** The sandbox tools (bubblewrap, iptables); with SANDBOX=off only a warning. */
export async function obtainSandbox(config: Config): Promise<void> {
  if (config.sandbox.mode === 'off') {
    say(
      red(
        'WARNING: SANDBOX=off (single-tenant development): user code runs as the worker user, unisolated. Never with more than one tenant.',
      ),
    );
  } else {
    await runTool(
      'obtain-sandbox.sh',
      [],
      'Install bubblewrap and iptables (Debian: apt-get install bubblewrap iptables), or set SANDBOX=off for single-tenant development only.',
    );
  }
}

/** PostgreSQL with pgvector (downloaded once, in seconds). */
export async function obtainPostgres(): Promise<void> {
  await runTool(
    'obtain-postgres.sh',
    [],
    'Set EMBEDDED_POSTGRES_BIN_DIR to the bin directory of a PostgreSQL 18 with pgvector, or DATABASE_URL to a PostgreSQL server with pgvector.',
  );
}

/** The local embedding model, all-MiniLM-L6-v2 (downloaded and converted once, in a minute or two). */
export async function obtainEmbeddingModel(): Promise<void> {
  await runTool(
    'obtain-embedding-model.sh',
    [],
    'Set LOCAL_EMBEDDING_MODEL_DIR to a folder with the model (model.onnx, tokenizer.json, tokenizer_config.json, config.json), ' +
      'configure another embedding model (OPENAI_API_KEY or DEFAULT_EMBEDDING_MODEL), or LOCAL_EMBEDDINGS=off for full-text-only knowledge bases.',
  );
}

/** Whether the Temporal CLI still has to be obtained (neither cached nor given by TEMPORAL_CLI_PATH). */
export function temporalCliMissing(config: Config): boolean {
  return temporalCli(config).type === 'cached-download';
}

/** The Temporal CLI (built once, in minutes). */
export async function obtainTemporalCli(): Promise<void> {
  say('Temporal CLI not cached yet (first start only): running tools/obtain-temporal.sh --cli-only');
  say('(building it from source with Go takes a few minutes; later starts reuse ~/.cache/tarmac)');
  await runTool(
    'obtain-temporal.sh',
    ['--cli-only'],
    'Set TEMPORAL_CLI_PATH to a `temporal` binary, or TEMPORAL_ADDRESS to a running Temporal server.',
  );
}

/**
 * The Node.js the api and the worker run on: the pinned Node 24 of tools/obtain-node.sh (downloaded once, 50 MB),
 * whose garbage collector and async context cost the worker less per run (bench/RESULTS.md, session 14) and the
 * api ~18 % less CPU per read (session 18) than Node 20's; NODE_BINARY names another. If it cannot be obtained,
 * they run on this Node, and say so.
 */
export async function obtainPlatformNode(): Promise<string> {
  try {
    const printed = await runTool('obtain-node.sh', [], '');
    if (printed) return printed;
  } catch (err) {
    say(red(`${(err as Error).message.trim()}: the api and the worker run on this Node (${process.version}) instead.`));
  }
  return process.execPath;
}

/**
 * Runs a script of tools/, its stderr shown as progress; resolves to the last line it printed on stdout (what
 * the script obtained, for those that print it), every stdout line shown too. On failure, `advice` says what
 * to do instead.
 */
export function runTool(script: string, args: string[], advice: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const proc = spawn('bash', [toolScript(script), ...args], {
      cwd: REPO_ROOT,
      env: childEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let last: string | undefined;
    readline.createInterface({ input: proc.stderr, crlfDelay: Infinity }).on('line', (l) => say(`  ${l}`));
    const stdout = readline.createInterface({ input: proc.stdout, crlfDelay: Infinity });
    stdout.on('line', (l) => {
      if (l.trim()) last = l.trim();
      say(`  ${l}`);
    });
    proc.on('error', reject);
    // 'close', not 'exit': every line of stdout has been read by then.
    proc.on('close', (code, signal) => {
      if (code === 0) resolve(last);
      else reject(new Error(`tools/${script} failed (${describeExit(code, signal)}).${advice ? `\n${advice}` : ''}`));
    });
  });
}
