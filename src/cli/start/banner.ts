// The block printed once the api and the worker are ready: where the API, its OpenAPI document, the
// Temporal UI and the data are, which model providers are configured, whether user code is sandboxed,
// and how to call the API: with the key created on a first start (the only time it is shown) and the link that
// sets the first user's password, else how to make another key or link.
import { LOCAL_EMBEDDING_DEFAULT } from '../../config/models';
import path from 'node:path';
import type { Config } from '../../config';
import { describeIsolation, type IsolationPlan } from '../../runtime/sandbox/isolation';
import { temporalUiUrl } from '../../temporal/ui-url';
import { bold, green, red, rel } from './output';
import type { FirstStart } from './database-setup';
import { resetLinkLines } from '../reset-link-lines';

/** Which model providers assistant runs and chat messages use, or how to configure one (docs/assistants.md: Model providers). */
function modelsLine(config: Config): string {
  const names = Object.keys(config.models.providers);
  if (!names.length)
    return 'none: set OPENAI_API_KEY, or MODEL_PROVIDERS=ollama=http://127.0.0.1:11434/v1 (docs/assistants.md)';
  return `${names.join(', ')}; default ${config.models.defaultModel ?? '(none: set DEFAULT_MODEL)'}`;
}

/** What knowledge bases embed with: the configured default, else the local model when `npm start` runs it. */
function embeddingsLine(config: Config, localEmbeddings: boolean): string {
  if (config.models.defaultEmbeddingModel) return config.models.defaultEmbeddingModel;
  if (localEmbeddings) return `${LOCAL_EMBEDDING_DEFAULT} (on this machine, docs/knowledge-bases.md)`;
  return 'none: knowledge bases are full text only (LOCAL_EMBEDDINGS=auto runs a local model)';
}

export function printBanner(
  config: Config,
  firstStart: FirstStart | undefined,
  isolation: IsolationPlan,
  localEmbeddings = false,
): void {
  const base = config.publicBaseUrl;
  const ui = temporalUiUrl(config);
  const rule = '-'.repeat(78);
  const lines = [
    rule,
    bold('tarmac is running'),
    '',
    `  Console       ${base}/console  (sign in with your email and password)`,
    `  API           ${base}/api`,
    `  OpenAPI       ${base}/api/openapi.json`,
    `  Temporal UI   ${ui ?? '(set TEMPORAL_UI_URL to show it here)'}`,
    `  Data          ${config.databaseUrl ? 'DATABASE_URL' : rel(path.join(config.dataDir, 'postgres'))}` +
      (config.temporal.address ? '' : `, ${rel(path.join(config.dataDir, 'temporal.sqlite'))}`) +
      (config.blobS3 ? `, blobs in s3://${config.blobS3.bucket}` : `, blobs in ${rel(config.blobDir)}`),
    `  Models        ${modelsLine(config)}`,
    `  Embeddings    ${embeddingsLine(config, localEmbeddings)}`,
    `  User code     ${isolation.mode === 'off' ? red(describeIsolation(isolation)) : describeIsolation(isolation)}`,
    ...(isolation.mode === 'rootless'
      ? [
          '                (limits without root: see docs/security.md#rootless-mode; the start log lists what each missing piece adds)',
        ]
      : []),
    '',
  ];
  if (firstStart) {
    const bootstrapKey = firstStart.apiKey;
    lines.push(
      `  Your API key (${config.bootstrap.email}, organization "${config.bootstrap.organizationName}").`,
      '  It is shown only now; it keeps working across restarts:',
      '',
      `    ${green(bootstrapKey)}`,
      '',
      `  Your password (${config.bootstrap.email}) is not set yet.`,
      ...resetLinkLines(base, firstStart.resetToken, firstStart.resetExpiresAt, '  '),
      `  Another link later: npm run admin -- reset-password --email ${config.bootstrap.email}`,
      '',
      '  Try it:',
      `    export TARMAC_API_KEY=${bootstrapKey}`,
    );
  } else {
    lines.push(
      '  API key: shown on the first start (old keys keep working). To make another, in a second terminal:',
      `    npm run admin -- create-api-key --name "my key" --email ${config.bootstrap.email}`,
      `  A link that sets a password: npm run admin -- reset-password --email ${config.bootstrap.email}`,
      '',
      '  Try it:',
      '    export TARMAC_API_KEY=<your key>',
    );
  }
  lines.push(
    `    curl -H "Authorization: Bearer $TARMAC_API_KEY" ${base}/api/users`,
    '',
    'Ctrl-C stops everything.',
    rule,
  );
  process.stdout.write(`\n${lines.join('\n')}\n\n`);
}
