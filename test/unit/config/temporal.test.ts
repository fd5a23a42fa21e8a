// Worker Versioning's settings: WORKER_BUILD_ID (unset: an unversioned worker, as `npm start` runs) and
// WORKER_DEPLOYMENT_NAME (default `tarmac`), whose names Temporal reads around a "." separator.
import { expect } from 'chai';
import { loadConfig } from '../../../src/config';
import { workerDeploymentOptions, workerVersionOf } from '../../../src/temporal/worker-versioning';
import { configProblems } from '../../support/config-problems';

const problems = configProblems;

describe('config: worker versioning', () => {
  it('is off without WORKER_BUILD_ID: the worker polls unversioned', () => {
    const config = loadConfig({});
    expect(config.temporal.workerBuildId).to.equal(undefined);
    expect(config.temporal.workerDeploymentName).to.equal('tarmac');
    expect(workerVersionOf(config)).to.equal(undefined);
    expect(workerDeploymentOptions(config)).to.equal(undefined);
  });

  it('polls as <deployment>:<build>, each workflow pinned to the build that started it', () => {
    const config = loadConfig({ WORKER_BUILD_ID: '1.4.0-rc.2', WORKER_DEPLOYMENT_NAME: 'tarmac-eu' });
    expect(workerVersionOf(config)).to.deep.equal({ deploymentName: 'tarmac-eu', buildId: '1.4.0-rc.2' });
    expect(workerDeploymentOptions(config)).to.deep.equal({
      version: { deploymentName: 'tarmac-eu', buildId: '1.4.0-rc.2' },
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'PINNED',
    });
  });

  it('refuses a build id with spaces or over 255 characters, a deployment name with "."', () => {
    expect(problems({ WORKER_BUILD_ID: 'build 7' })[0]).to.include('WORKER_BUILD_ID');
    expect(problems({ WORKER_BUILD_ID: 'x'.repeat(256) })[0]).to.include('WORKER_BUILD_ID');
    expect(problems({ WORKER_BUILD_ID: 'b1', WORKER_DEPLOYMENT_NAME: 'tarmac.eu' })[0]).to.include(
      'WORKER_DEPLOYMENT_NAME',
    );
  });
});
