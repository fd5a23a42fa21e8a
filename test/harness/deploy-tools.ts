// What the deployment checks (test/deploy/) run: the pinned helm and kubeconform, the Kubernetes and
// compose-spec schemas, all from tools/obtain-k8s-tools.sh's cache (its versions are read from the script, so
// the two cannot disagree), and the names of the environment variables src/config reads.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from '../support/house';

export const CHART = path.join(REPO_ROOT, 'deploy', 'helm', 'tarmac');
/** Every values file the chart is checked with (besides its defaults). */
export const CI_VALUES = fs
  .readdirSync(path.join(CHART, 'ci'))
  .filter((f) => f.endsWith('-values.yaml'))
  .sort();
/** The kinds kubeconform has no schema for offline (CRDs): checked by test/deploy/helm-manifests only. */
export const CRD_KINDS = ['ServiceMonitor', 'ScaledObject'];

/** The values each install must give (the rest have defaults), valid as src/config reads them. */
export const REQUIRED_VALUES = {
  'secrets.secretsKey': 'q83vEjA6b8k0n3Pq1d5t7x9zB2c4e6g8i0k2m4o6q8s=',
  'database.url': 'postgres://tarmac:tarmac@postgres:5432/tarmac',
  'blobs.s3.bucket': 'tarmac-blobs',
};

const SCRIPT = fs.readFileSync(path.join(REPO_ROOT, 'tools', 'obtain-k8s-tools.sh'), 'utf8');
function pin(name: string): string {
  const value = new RegExp(`^${name}=(\\S+)`, 'm').exec(SCRIPT)?.[1];
  if (!value) throw new Error(`tools/obtain-k8s-tools.sh sets no ${name}`);
  return value;
}
export const K8S_VERSION = pin('K8S_VERSION');
const CACHE = path.resolve(process.env.TARMAC_CACHE_DIR ?? path.join(os.homedir(), '.cache', 'tarmac'));

function cached(relative: string): string {
  const file = path.join(CACHE, relative);
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: run bash tools/obtain-k8s-tools.sh first`);
  return file;
}

const helmBin = () => cached(`helm-${pin('HELM_VERSION')}/helm`);
const kubeconformBin = () => cached(`kubeconform-${pin('KUBECONFORM_VERSION')}/kubeconform`);
const schemaDir = () => cached(`kubernetes-json-schema-v${K8S_VERSION}/v${K8S_VERSION}-local-strict`);
export const composeSchemaFile = () => cached(`compose-spec-${pin('COMPOSE_GO_VERSION')}/compose-spec.json`);

export interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(bin: string, args: string[], input?: string): Ran {
  const r = spawnSync(bin, args, { encoding: 'utf8', input, maxBuffer: 64 * 1024 * 1024, timeout: 120_000 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

export const helm = (args: string[]) => run(helmBin(), args);

/** helm template of the chart with `valuesFiles` (names under ci/) and `--set` pairs (typed as YAML: numbers, booleans), for the pinned Kubernetes. */
export function template(valuesFiles: string[], set: Record<string, string> = {}): Ran {
  return helm([
    'template',
    'rel',
    CHART,
    '--namespace',
    'tarmac',
    '--kube-version',
    K8S_VERSION,
    ...valuesFiles.flatMap((f) => ['-f', path.join(CHART, 'ci', f)]),
    ...Object.entries(set).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
  ]);
}

export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

/** The manifests of a successful render; a failed render fails with helm's message. */
export function render(valuesFiles: string[], set: Record<string, string> = {}): Manifest[] {
  const r = template(valuesFiles, set);
  if (r.status !== 0) throw new Error(`helm template failed: ${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((doc) => {
      if (doc.errors.length) throw new Error(`helm rendered invalid YAML: ${doc.errors[0].message}`);
      return doc.toJSON() as Manifest | null;
    })
    .filter((m): m is Manifest => m !== null);
}

export function find(manifests: Manifest[], kind: string, nameSuffix: string): Manifest {
  const found = manifests.find((m) => m.kind === kind && m.metadata.name.endsWith(nameSuffix));
  if (!found) throw new Error(`no ${kind} *${nameSuffix} among ${manifests.map((m) => m.kind).join(', ')}`);
  return found;
}

export interface KubeconformSummary {
  valid: number;
  invalid: number;
  errors: number;
  skipped: number;
}

/** kubeconform -strict of a multi-document YAML text against the pinned schemas; CRD_KINDS skipped by kind. */
export function kubeconform(yamlText: string): { summary: KubeconformSummary; problems: string[] } {
  const location = path.join(schemaDir(), '{{ .ResourceKind }}{{ .KindSuffix }}.json');
  const r = run(
    kubeconformBin(),
    [
      '-strict',
      '-kubernetes-version',
      K8S_VERSION,
      '-schema-location',
      location,
      '-skip',
      CRD_KINDS.join(','),
      '-output',
      'json',
      '-summary',
      '-',
    ],
    yamlText,
  );
  const report = JSON.parse(r.stdout) as {
    resources?: { kind: string; name: string; status: string; msg: string }[];
    summary: KubeconformSummary;
  };
  const problems = (report.resources ?? [])
    .filter((x) => x.status !== 'statusValid' && x.status !== 'statusSkipped')
    .map((x) => `${x.kind} ${x.name}: ${x.msg}`);
  return { summary: report.summary, problems };
}

/**
 * The environment variables src/config reads (it is their only reader): every quoted upper-case name of its
 * files, and the names it builds (MODEL_PROVIDER_<NAME>_API_KEY) or hands to builds (PIP_*, NPM_CONFIG_*).
 */
export function readByConfig(name: string): boolean {
  return (
    configNames().has(name) || /^MODEL_PROVIDER_[A-Z0-9_]+_API_KEY$/.test(name) || /^(PIP_|NPM_CONFIG_)/.test(name)
  );
}

let names: Set<string> | undefined;
export function configNames(): Set<string> {
  const dir = path.join(REPO_ROOT, 'src', 'config');
  names ??= new Set(
    fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) =>
        [...fs.readFileSync(path.join(dir, f), 'utf8').matchAll(/'([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1]),
      ),
  );
  return names;
}

interface Container {
  name: string;
  env?: { name: string; value?: string }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
}
export interface PodOwner extends Manifest {
  spec: { template: { spec: { containers: Container[] } } };
}

/**
 * The environment of each container of the rendered Deployments and Jobs: its envFrom (the rendered ConfigMaps
 * and Secrets; `existing` for Secrets the chart does not make) and its own env, by "<kind>/<name>/<container>".
 */
export function containerEnvs(
  manifests: Manifest[],
  existing: Record<string, Record<string, string>> = {},
): Map<string, Record<string, string>> {
  const sources = new Map<string, Record<string, string>>(Object.entries(existing));
  for (const m of manifests) {
    if (m.kind === 'ConfigMap') sources.set(`ConfigMap/${m.metadata.name}`, m.data as Record<string, string>);
    if (m.kind === 'Secret') sources.set(`Secret/${m.metadata.name}`, m.stringData as Record<string, string>);
  }
  const envs = new Map<string, Record<string, string>>();
  for (const m of manifests.filter((x) => x.kind === 'Deployment' || x.kind === 'Job') as PodOwner[]) {
    for (const c of m.spec.template.spec.containers) {
      const env: Record<string, string> = {};
      for (const from of c.envFrom ?? []) {
        const ref = from.configMapRef ? `ConfigMap/${from.configMapRef.name}` : `Secret/${from.secretRef!.name}`;
        const data = sources.get(ref);
        if (!data) throw new Error(`${m.metadata.name} reads ${ref}, which is neither rendered nor given`);
        Object.assign(env, data);
      }
      for (const e of c.env ?? []) env[e.name] = e.value ?? '';
      envs.set(`${m.kind}/${m.metadata.name}/${c.name}`, env);
    }
  }
  return envs;
}
