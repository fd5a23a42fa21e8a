// What each template of the Helm chart (deploy/helm/tarmac) renders, read as the cluster would: the worker's
// pod per sandbox mode (docs/security.md), its drain time against SHUTDOWN_GRACE_MS, a Deployment per build with
// worker versioning on (docs/production.md#upgrades), the migrations hook, the
// probes, the Services against the pods and ports they point at, and the CRDs kubeconform cannot check.
import { expect } from 'chai';
import { find, kubeconform, render, REQUIRED_VALUES, template, type Manifest } from '../harness/deploy-tools';

const spec = (m: Manifest) => m.spec as any;
const pod = (m: Manifest) => spec(m).template.spec;
const container = (m: Manifest) => pod(m).containers[0];
const envOf = (m: Manifest) => Object.fromEntries(container(m).env.map((e: any) => [e.name, e.value]));

describe('deploy: the Helm chart templates', function () {
  this.timeout(60_000);
  const defaults = render([], REQUIRED_VALUES);
  const root = render(['root-workers-values.yaml']);
  const rootless = render(['rootless-workers-values.yaml']);

  describe('the worker', () => {
    it('root mode: a privileged container as root (writable control groups, uids, firewall, /dev/net/tun)', () => {
      const worker = find(root, 'Deployment', '-worker');
      expect(pod(worker).hostUsers).to.equal(undefined);
      expect(pod(worker).securityContext).to.include({ runAsUser: 0, runAsGroup: 0 });
      expect(container(worker).securityContext).to.deep.equal({ privileged: true });
      // Run uids are host uids: every worker pod of a node leases them from the node's one directory.
      expect(pod(worker).volumes).to.deep.include({
        name: 'sandbox-state',
        hostPath: { path: '/run/tarmac-sandbox', type: 'DirectoryOrCreate' },
      });
      expect(container(worker).volumeMounts).to.deep.include({
        name: 'sandbox-state',
        mountPath: '/run/tarmac-sandbox',
      });
      expect(envOf(worker).SANDBOX_STATE_DIR).to.equal('/run/tarmac-sandbox');
    });

    it('rootless mode: an unprivileged pod in a user namespace with only what bubblewrap and pasta need', () => {
      const worker = find(rootless, 'Deployment', '-worker');
      expect(pod(worker).hostUsers).to.equal(false);
      expect(pod(worker).securityContext).to.include({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000 });
      expect(container(worker).securityContext).to.deep.equal({
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'Unconfined' },
        appArmorProfile: { type: 'Unconfined' },
        procMount: 'Unmasked',
      });
      const tun = pod(worker).volumes.find((v: any) => v.name === 'tun');
      expect(tun.hostPath).to.deep.equal({ path: '/dev/net/tun', type: 'CharDevice' });
      expect(container(worker).volumeMounts).to.deep.include({ name: 'tun', mountPath: '/dev/net/tun' });
      expect(pod(worker).volumes.map((v: any) => v.name)).to.not.include('sandbox-state');
    });

    it('runs node itself as PID 1 (npm would stay in the control group the worker hands out)', () => {
      for (const manifests of [root, rootless])
        expect(container(find(manifests, 'Deployment', '-worker')).command).to.deep.equal([
          'node',
          'dist/src/worker/main.js',
        ]);
    });

    it('is given longer to stop than SHUTDOWN_GRACE_MS, in which its runs finish', () => {
      for (const [manifests, grace] of [
        [defaults, 300],
        [rootless, 600],
      ] as const) {
        const worker = find(manifests, 'Deployment', '-worker');
        expect(envOf(worker).SHUTDOWN_GRACE_MS).to.equal(String(grace * 1000));
        expect(pod(worker).terminationGracePeriodSeconds).to.equal(grace + 30);
      }
    });

    it('with worker.versioning on: a Deployment per build, kept by Helm, polling as that version', () => {
      const set = { 'worker.versioning.enabled': 'true', 'image.tag': '1.4.0_RC', 'worker.keda.enabled': 'true' };
      const versioned = render([], { ...REQUIRED_VALUES, ...set });
      expect(kubeconform(template([], { ...REQUIRED_VALUES, ...set }).stdout).problems).to.deep.equal([]);
      const worker = find(versioned, 'Deployment', '-worker-1-4-0-rc');
      // helm upgrade to the next build leaves this one serving the workflows pinned to it.
      expect(worker.metadata.annotations?.['helm.sh/resource-policy']).to.equal('keep');
      expect(spec(worker).selector.matchLabels['tarmac.dev/build']).to.equal('1-4-0-rc');
      expect(spec(worker).template.metadata.labels['tarmac.dev/build']).to.equal('1-4-0-rc');
      expect(envOf(worker).WORKER_BUILD_ID).to.equal('1.4.0_RC');
      expect(envOf(worker).WORKER_DEPLOYMENT_NAME).to.equal('tarmac');
      expect(spec(find(versioned, 'ScaledObject', '-worker-1-4-0-rc')).scaleTargetRef).to.deep.equal({
        name: worker.metadata.name,
      });
      // Off (the default): one Deployment, unversioned, rolled in place.
      expect(envOf(find(defaults, 'Deployment', '-worker')).WORKER_BUILD_ID).to.equal(undefined);
    });

    it('reaches the api by its Service, serves /metrics on its port', () => {
      const worker = find(defaults, 'Deployment', '-worker');
      const api = find(defaults, 'Service', '-api');
      expect(envOf(worker).RUN_API_BASE_URL).to.equal(`http://${api.metadata.name}:${spec(api).ports[0].port}`);
      expect(envOf(worker).WORKER_METRICS_PORT).to.equal('9464');
      expect(container(worker).livenessProbe.tcpSocket).to.deep.equal({ port: 'metrics' });
    });

    it('gives each worker pod its own BUILD_DIR (builds come through the blob store), or the claim named', () => {
      expect(pod(find(defaults, 'Deployment', '-worker')).volumes).to.deep.include({
        name: 'builds',
        emptyDir: { sizeLimit: '20Gi' },
      });
      expect(envOf(find(defaults, 'Deployment', '-worker')).BUILD_LOCAL_CACHE_MB).to.equal('16384');
      for (const manifests of [root, rootless])
        expect(pod(find(manifests, 'Deployment', '-worker')).volumes).to.deep.include({
          name: 'builds',
          persistentVolumeClaim: { claimName: 'tarmac-builds' },
        });
      const sets: Record<string, string>[] = [{ 'worker.replicas': '3' }, { 'worker.keda.enabled': 'true' }];
      for (const set of sets) {
        const r = template([], { ...REQUIRED_VALUES, ...set });
        expect(r.status, `${JSON.stringify(set)}: ${r.stderr}`).to.equal(0);
      }
    });

    it('has a PodDisruptionBudget over its pods, and KEDA scaling it on the queue and the busy activity slots', () => {
      const worker = find(root, 'Deployment', '-worker');
      const pdb = find(root, 'PodDisruptionBudget', '-worker');
      expect(spec(pdb).selector.matchLabels).to.deep.equal(spec(worker).selector.matchLabels);
      expect(spec(pdb).maxUnavailable).to.equal(1);
      const scaled = find(root, 'ScaledObject', '-worker');
      expect(scaled.apiVersion).to.equal('keda.sh/v1alpha1');
      expect(spec(scaled).scaleTargetRef).to.deep.equal({ name: worker.metadata.name });
      expect(spec(worker).replicas, 'KEDA owns the replicas').to.equal(undefined);
      const [trigger, queue] = spec(scaled).triggers;
      expect(trigger.type).to.equal('prometheus');
      expect(trigger.metadata.query).to.equal(
        'sum(100 - temporal_worker_task_slots_available{worker_type="ActivityWorker",task_queue="tarmac"})',
      );
      expect(trigger.metadata.threshold).to.equal('60');
      // The apis' gauge of jobs waiting for a slot (src/jobs/metric.ts): the same on every api.
      expect(queue.metadata).to.include({ query: 'max(tarmac_execution_slots{state="waiting"})', threshold: '10' });
      expect(defaults.some((m) => m.kind === 'ScaledObject')).to.equal(false);
    });
  });

  describe('the migrations', () => {
    it('run as a pre-install/pre-upgrade hook Job, after their own hook Secret', () => {
      const job = find(defaults, 'Job', '-migrations');
      const secret = find(defaults, 'Secret', '-migrations');
      for (const m of [job, secret])
        expect(m.metadata.annotations!['helm.sh/hook']).to.equal('pre-install,pre-upgrade');
      expect(Number(secret.metadata.annotations!['helm.sh/hook-weight'])).to.be.lessThan(
        Number(job.metadata.annotations!['helm.sh/hook-weight']),
      );
      expect(job.metadata.annotations!['helm.sh/hook-delete-policy']).to.include('before-hook-creation');
      expect(container(job).command).to.deep.equal(['node', 'dist/src/cli/migrate.js']);
      expect(container(job).envFrom).to.deep.equal([{ secretRef: { name: secret.metadata.name } }]);
      expect((secret.stringData as any).DATABASE_URL).to.equal(REQUIRED_VALUES['database.url']);
    });

    it('read an existing Secret of yours directly (it exists before the hook)', () => {
      const job = find(rootless, 'Job', '-migrations');
      expect(container(job).envFrom).to.deep.equal([{ secretRef: { name: 'tarmac-secrets' } }]);
      expect(rootless.filter((m) => m.kind === 'Secret')).to.deep.equal([]);
    });
  });

  describe('the api and the embedding server', () => {
    it('the api: /health live, /ready ready, on its http port; the HPA owns its replicas', () => {
      const api = find(defaults, 'Deployment', '-api');
      expect(container(api).livenessProbe.httpGet).to.deep.equal({ path: '/health', port: 'http' });
      expect(container(api).readinessProbe.httpGet).to.deep.equal({ path: '/ready', port: 'http' });
      expect(container(api).command).to.deep.equal(['node', 'dist/src/api/main.js']);
      const hpa = find(defaults, 'HorizontalPodAutoscaler', '-api');
      expect(spec(hpa).scaleTargetRef).to.deep.equal({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: api.metadata.name,
      });
      expect(spec(api).replicas).to.equal(undefined);
      expect(
        spec(api).strategy.rollingUpdate.maxUnavailable,
        'a new replica is ready before an old one stops',
      ).to.equal(0);
      expect(spec(find(rootless, 'Deployment', '-api')).replicas).to.equal(3);
    });

    it('the embedding server: /health probes, and LOCAL_EMBEDDINGS_URL at its Service; none when disabled', () => {
      const embeddings = find(defaults, 'Deployment', '-embeddings');
      expect(container(embeddings).readinessProbe.httpGet).to.deep.equal({ path: '/health', port: 'embeddings' });
      expect(container(embeddings).command).to.deep.equal(['node', 'dist/src/embeddings/main.js']);
      const service = find(defaults, 'Service', '-embeddings');
      const config = find(defaults, 'ConfigMap', 'rel-tarmac').data as Record<string, string>;
      expect(config.LOCAL_EMBEDDINGS_URL).to.equal(`http://${service.metadata.name}:8091/v1`);
      expect(rootless.some((m) => m.metadata.name.endsWith('-embeddings'))).to.equal(false);
      expect(find(rootless, 'ConfigMap', 'rel-tarmac').data).to.not.have.property('LOCAL_EMBEDDINGS_URL');
    });
  });

  describe('Temporal over TLS', () => {
    const external = render(['external-services-values.yaml']);

    it('mounts the client certificate of your Secret in the apis and workers, and names its files', () => {
      const config = find(external, 'ConfigMap', '').data as Record<string, string>;
      expect(config).to.include({
        TEMPORAL_TLS: 'true',
        TEMPORAL_TLS_CERT_FILE: '/etc/tarmac/temporal-tls/tls.crt',
        TEMPORAL_TLS_KEY_FILE: '/etc/tarmac/temporal-tls/tls.key',
      });
      // Temporal Cloud's certificate is checked against the system's roots.
      expect(config).to.not.have.property('TEMPORAL_TLS_CA_FILE');
      for (const name of ['-api', '-worker']) {
        const d = find(external, 'Deployment', name);
        expect(pod(d).volumes, name).to.deep.include({
          name: 'temporal-tls',
          secret: { secretName: 'tarmac-temporal-client-cert' },
        });
        expect(container(d).volumeMounts, name).to.deep.include({
          name: 'temporal-tls',
          mountPath: '/etc/tarmac/temporal-tls',
          readOnly: true,
        });
      }
    });

    it('keeps an API key in the Secret, and sets nothing of TLS by default', () => {
      const withKey = render([], { ...REQUIRED_VALUES, 'temporal.apiKey': 'tc-key' });
      expect(find(withKey, 'Secret', '').stringData).to.include({ TEMPORAL_API_KEY: 'tc-key' });
      const config = find(defaults, 'ConfigMap', '').data as Record<string, string>;
      expect(Object.keys(config).filter((k) => k.startsWith('TEMPORAL_TLS'))).to.deep.equal([]);
      expect(pod(find(defaults, 'Deployment', '-api')).volumes.map((v: any) => v.name)).to.not.include('temporal-tls');
    });
  });

  describe('Services and the ServiceMonitor', () => {
    it('every Service selects pods of a Deployment and targets a port they name', () => {
      for (const manifests of [defaults, root, rootless]) {
        for (const service of manifests.filter((m) => m.kind === 'Service')) {
          const owners = manifests.filter(
            (m) =>
              m.kind === 'Deployment' &&
              Object.entries(spec(service).selector).every(([k, v]) => spec(m).template.metadata.labels[k] === v),
          );
          expect(owners, `${service.metadata.name} selects one Deployment`).to.have.length(1);
          const ports = container(owners[0]).ports.map((p: any) => p.name);
          for (const p of spec(service).ports) expect(ports).to.include(p.targetPort);
        }
      }
    });

    it('the ServiceMonitor scrapes /metrics of the api and the workers with the token of the Secret', () => {
      const monitor = find(root, 'ServiceMonitor', '-metrics');
      expect(monitor.metadata.labels).to.include({ release: 'prometheus' });
      const selected = root.filter(
        (m) =>
          m.kind === 'Service' &&
          Object.entries(spec(monitor).selector.matchLabels).every(([k, v]) => m.metadata.labels![k] === v) &&
          ['api', 'worker'].includes(m.metadata.labels!['app.kubernetes.io/component']),
      );
      const scraped = spec(monitor).endpoints.map((e: any) => e.port);
      for (const service of selected)
        expect(
          spec(service).ports.some((p: any) => scraped.includes(p.name)),
          service.metadata.name,
        ).to.equal(true);
      expect(selected).to.have.length(2);
      const secret = find(root, 'Secret', 'rel-tarmac');
      for (const e of spec(monitor).endpoints) {
        expect(e.path).to.equal('/metrics');
        expect(e.authorization.credentials).to.deep.equal({ name: secret.metadata.name, key: 'METRICS_TOKEN' });
        expect((secret.stringData as any).METRICS_TOKEN).to.equal('scrape-token');
      }
    });
  });
});
