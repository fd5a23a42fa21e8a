// The environment the Helm chart gives each process is one src/config reads, whole: every variable it sets
// (its ConfigMap, its Secret, each container's own env) is a name src/config reads (the only reader of
// process.env), and src/config accepts each process's environment as it is, with what that process requires.
import { expect } from 'chai';
import { loadConfig, requireRuntime } from '../../src/config';
import { CI_VALUES, configNames, containerEnvs, readByConfig, render, REQUIRED_VALUES } from '../harness/deploy-tools';

/** What ci/rootless-workers-values.yaml's own Secret (secrets.existingSecret) holds, as docs/production.md says. */
const EXISTING_SECRET = {
  'Secret/tarmac-secrets': {
    SECRETS_KEY: REQUIRED_VALUES['secrets.secretsKey'],
    DATABASE_URL: 'postgres://tarmac:secret@postgres.tarmac.svc:5432/tarmac',
    OPENAI_API_KEY: 'sk-test',
  },
};

describe('deploy: the Helm chart sets only what src/config reads, and all it requires', function () {
  this.timeout(60_000);
  const renders = [
    ['the defaults', render([], REQUIRED_VALUES)],
    ...CI_VALUES.map((f) => [f, render([f])] as const),
  ] as const;

  it('reads the names src/config reads from its files', () => {
    const names = configNames();
    expect([...names]).to.include.members(['DATABASE_URL', 'SECRETS_KEY', 'TEMPORAL_ADDRESS', 'WORKER_METRICS_PORT']);
    expect(names.size).to.be.greaterThan(100);
    expect(readByConfig('MODEL_PROVIDER_OLLAMA_API_KEY')).to.equal(true);
    expect(readByConfig('TEMPORAL_TLS_CERT')).to.equal(false);
  });

  for (const [label, manifests] of renders) {
    describe(label, () => {
      const envs = containerEnvs(manifests, EXISTING_SECRET);

      it('sets no variable src/config does not read', () => {
        expect(envs.size).to.be.greaterThan(2);
        const unread = [...envs].flatMap(([where, env]) =>
          Object.keys(env)
            .filter((name) => !readByConfig(name))
            .map((name) => `${where}: ${name}`),
        );
        expect(unread).to.deep.equal([]);
      });

      it('gives each process an environment src/config accepts, with what the process requires', () => {
        for (const [where, env] of envs) {
          const config = loadConfig(env);
          expect(config.databaseUrl, `${where}: DATABASE_URL`).to.be.a('string');
          if (!/\/(api|worker)\//.test(where)) continue;
          requireRuntime(config);
          expect(config.temporal.address, `${where}: TEMPORAL_ADDRESS`).to.be.a('string');
          // Blobs every api and worker shares: a bucket, or a volume mounted at BLOB_DIR.
          if (env.BLOB_STORE !== 's3') expect(env.BLOB_DIR, `${where}: BLOB_DIR`).to.be.a('string');
        }
      });
    });
  }

  it('sets the worker settings the chart exists for, as src/config reads them', () => {
    const [, manifests] = renders[0];
    const worker = [...containerEnvs(manifests)].find(([where]) => where.includes('-worker/'))![1];
    const config = loadConfig(worker);
    expect(config.shutdownGraceMs).to.equal(300_000);
    expect(config.metrics.workerPort).to.equal(9464);
    expect(config.execution.workerActivitySlots).to.equal(100);
    expect(config.databasePoolSize).to.equal(20);
    expect(config.localEmbeddings).to.not.equal(undefined);
    expect(config.models.providers).to.have.property('local');
  });
});
