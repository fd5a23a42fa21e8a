// The Helm chart (deploy/helm/tarmac) as helm and the Kubernetes API would take it: helm lint with its defaults
// and each ci/*-values.yaml, helm template, and every rendered manifest against the JSON schemas of the pinned
// Kubernetes version by kubeconform -strict (no unknown field). The CRDs (ServiceMonitor, ScaledObject) have no
// schema offline: they are skipped by kind here and checked field by field in helm-manifests.test.ts.
import { expect } from 'chai';
import { stringify } from 'yaml';
import {
  CI_VALUES,
  CRD_KINDS,
  find,
  helm,
  CHART,
  kubeconform,
  render,
  REQUIRED_VALUES,
  template,
} from '../harness/deploy-tools';

describe('deploy: the Helm chart renders valid Kubernetes manifests', function () {
  this.timeout(120_000);

  it('has values files for root workers, rootless workers and external services', () => {
    expect(CI_VALUES).to.have.members([
      'root-workers-values.yaml',
      'rootless-workers-values.yaml',
      'external-services-values.yaml',
    ]);
  });

  it('passes helm lint with its defaults and with each values file', () => {
    for (const args of [[], ...CI_VALUES.map((f) => ['-f', `${CHART}/ci/${f}`])]) {
      const r = helm(['lint', CHART, ...args]);
      expect(r.status, `helm lint ${args.join(' ')}:\n${r.stdout}${r.stderr}`).to.equal(0);
      expect(r.stdout).to.include('1 chart(s) linted, 0 chart(s) failed');
    }
  });

  it('refuses to render without the values an install must give, naming each', () => {
    const r = template([]);
    expect(r.status).to.not.equal(0);
    expect(r.stderr).to.match(
      /secrets\.secretsKey is required|database\.url is required|blobs\.s3\.bucket is required/,
    );
    for (const [name] of Object.entries(REQUIRED_VALUES)) {
      const others = Object.fromEntries(Object.entries(REQUIRED_VALUES).filter(([k]) => k !== name));
      const without = template([], others);
      expect(without.status, `rendered without ${name}`).to.not.equal(0);
      expect(without.stderr).to.include(`${name} is required`);
    }
  });

  it('refuses values its schema does not allow', () => {
    const bad = { ...REQUIRED_VALUES, 'worker.sandbox.mode': 'privileged', 'secrets.secretsKey': 'too-short' };
    const r = template([], bad);
    expect(r.status).to.not.equal(0);
    expect(r.stderr).to.include("at '/worker/sandbox/mode'");
    expect(r.stderr).to.include("at '/secrets/secretsKey'");
  });

  for (const [label, files, set] of [
    ['the defaults (with the required values)', [], REQUIRED_VALUES],
    ...CI_VALUES.map((f) => [f, [f], {}] as const),
  ] as const) {
    it(`renders ${label}, every manifest valid for Kubernetes (kubeconform -strict)`, () => {
      const manifests = render([...files], { ...set });
      expect(manifests.length).to.be.greaterThan(6);
      const { summary, problems } = kubeconform(manifests.map((m) => `---\n${stringify(m)}`).join('\n'));
      expect(problems).to.deep.equal([]);
      const crds = manifests.filter((m) => CRD_KINDS.includes(m.kind)).length;
      expect(summary).to.deep.equal({ valid: manifests.length - crds, invalid: 0, errors: 0, skipped: crds });
    });
  }

  it('is checked by a kubeconform that refuses an unknown field and a wrong type', () => {
    const manifests = render([], REQUIRED_VALUES);
    const worker = structuredClone(find(manifests, 'Deployment', '-worker')) as Record<string, any>;
    worker.spec.template.spec.containers[0].securityContext.privilegd = true;
    const service = structuredClone(find(manifests, 'Service', '-api')) as Record<string, any>;
    service.spec.ports[0].port = 'eighty';
    const { summary, problems } = kubeconform(`${stringify(worker)}\n---\n${stringify(service)}`);
    expect(summary.invalid).to.equal(2);
    expect(problems.join('\n')).to.include("additional properties 'privilegd' not allowed");
  });
});
