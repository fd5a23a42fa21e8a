// BUILD_DISK_MB, BUILD_CACHE_MB and BUILD_LOCAL_CACHE_MB: defaults, overrides in MiB, and refusals of what cannot
// be a quota.
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../../src/config';

const MiB = 1024 * 1024;

describe('config: build quotas', () => {
  it('defaults to 4096 MB per build and 2048 MB per package cache', () => {
    expect(loadConfig({}).buildQuota).to.deep.equal({ diskBytes: 4096 * MiB, cacheBytes: 2048 * MiB });
  });

  it('reads both in MB; a cache of 0 keeps nothing', () => {
    expect(loadConfig({ BUILD_DISK_MB: '512', BUILD_CACHE_MB: '0' }).buildQuota).to.deep.equal({
      diskBytes: 512 * MiB,
      cacheBytes: 0,
    });
  });

  it('keeps 20 GiB of builds in the local build cache by default; 0 keeps only builds in use', () => {
    expect(loadConfig({}).buildLocalCacheBytes).to.equal(20480 * MiB);
    expect(loadConfig({ BUILD_LOCAL_CACHE_MB: '0' }).buildLocalCacheBytes).to.equal(0);
  });

  for (const [name, value] of [
    ['BUILD_LOCAL_CACHE_MB', '-5'],
    ['BUILD_DISK_MB', '0'],
    ['BUILD_DISK_MB', 'lots'],
    ['BUILD_CACHE_MB', '-1'],
  ]) {
    it(`refuses ${name}=${value}, naming it`, () => {
      expect(() => loadConfig({ [name]: value }))
        .to.throw(ConfigError)
        .with.property('message')
        .that.matches(new RegExp(name));
    });
  }
});
