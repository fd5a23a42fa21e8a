// docker-compose.yml checked without a Docker daemon (none runs here): the file against the compose-spec JSON
// schema (compose-go's, from tools/obtain-k8s-tools.sh), every image pinned to a version, and the environment
// of the tarmac services (the image of the Dockerfile) one src/config reads and accepts.
import fs from 'node:fs';
import path from 'node:path';
import Ajv from 'ajv';
import { expect } from 'chai';
import { parse } from 'yaml';
import { loadConfig, requireRuntime } from '../../src/config';
import { composeSchemaFile, readByConfig } from '../harness/deploy-tools';
import { REPO_ROOT } from '../support/house';

interface Service {
  image?: string;
  build?: unknown;
  environment?: Record<string, string>;
  command?: string[];
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
}
const TEXT = fs.readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8');
const compose = parse(TEXT, { merge: true }) as { services: Record<string, Service> };
const services = Object.entries(compose.services);
const tarmac = services.filter(([, s]) => s.build !== undefined);

/** What compose makes of `${NAME:-default}`, `${NAME-default}` and `${NAME:?message}` with NAME unset. */
function interpolate(value: string, shell: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::?-([^}]*)|:\?[^}]*)?\}/g, (_, name: string, fallback?: string) => {
    if (shell[name] !== undefined) return shell[name];
    if (fallback !== undefined) return fallback;
    throw new Error(`${name} is required by docker-compose.yml`);
  });
}

describe('deploy: docker-compose.yml', () => {
  it('is valid for the compose specification', () => {
    const { $schema: _, ...schema } = JSON.parse(fs.readFileSync(composeSchemaFile(), 'utf8'));
    const validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
    // Validated as compose reads it: the YAML merge keys (`<<: *tarmac`) resolved.
    const valid = validate(compose);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).to.deep.equal([]);
    expect(valid).to.equal(true);
    expect(
      validate({ services: { api: { image: 'x', replicas: 'two' } } }),
      'the schema refuses unknown keys',
    ).to.equal(false);
  });

  it('pins every image it pulls to a version', () => {
    const pulled = services.filter(([, s]) => s.build === undefined);
    expect(pulled.length).to.be.greaterThan(5);
    for (const [name, s] of pulled) {
      expect(s.image, name).to.match(/^[\w./-]+:[\w.-]+$/);
      expect(s.image, name).to.not.match(/:(latest|stable|mainline)$/);
    }
    const images = pulled.map(([, s]) => s.image);
    expect(images).to.include.members(['temporalio/server:1.29.1', 'temporalio/admin-tools:1.29.1']);
    expect(TEXT).to.not.include('auto-setup');
  });

  it('runs the Temporal schema, then the server, then the namespace, before the api and the worker', () => {
    const s = compose.services;
    expect(s['temporal-schema'].command!.join('\n')).to.include('temporal-sql-tool');
    for (const db of ['temporal', 'temporal_visibility'])
      expect(s['temporal-schema'].command!.join('\n')).to.include(db);
    expect(s.temporal.depends_on!['temporal-schema'].condition).to.equal('service_completed_successfully');
    expect(s['temporal-namespace'].depends_on).to.have.property('temporal');
    for (const name of ['api', 'worker'])
      expect(s[name].depends_on!['temporal-namespace'].condition, name).to.equal('service_completed_successfully');
  });

  it('puts the api replicas behind the load balancer, the one service on port 8080', () => {
    const s = compose.services;
    expect(s.api.ports).to.equal(undefined);
    expect(s.lb.ports).to.deep.equal(['8080:8080']);
    expect(TEXT).to.match(/server api:8080;/);
  });

  it('gives the tarmac services only settings src/config reads, and an environment it accepts', () => {
    expect(tarmac.map(([name]) => name)).to.have.members(['migrate', 'api', 'embeddings', 'worker']);
    const shell = { SECRETS_KEY: 'q83vEjA6b8k0n3Pq1d5t7x9zB2c4e6g8i0k2m4o6q8s=' };
    for (const [name, s] of tarmac) {
      const env = s.environment!;
      expect(
        Object.keys(env).filter((k) => !readByConfig(k)),
        name,
      ).to.deep.equal([]);
      const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, interpolate(String(v), shell)]));
      const config = loadConfig(resolved);
      requireRuntime(config);
      expect(config.temporal.address, name).to.equal('temporal:7233');
      expect(config.blobS3?.bucket, name).to.equal('tarmac-blobs');
    }
    expect(() => interpolate(String(compose.services.api.environment!.SECRETS_KEY), {})).to.throw('SECRETS_KEY');
  });
});
