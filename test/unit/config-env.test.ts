// The environment reader (src/config/env.ts): every value trimmed, blank means unset, and a bad value is a
// problem naming the variable and the value; and the configuration it builds (src/config) is frozen.
import { expect } from 'chai';
import { ConfigError, EnvReader, loadConfig } from '../../src/config';

const read = (env: Record<string, string>) => new EnvReader(env);

describe('config: the environment reader', () => {
  it('trims every value and takes a blank one as unset', () => {
    const env = read({
      NAME: '  tarmac \n',
      BLANK: ' \t ',
      COUNT: ' 42 ',
      FLAG: ' TRUE ',
      KIND: ' S3 ',
      URL: ' http://x/ ',
    });
    expect(env.optional('NAME')).to.equal('tarmac');
    expect(env.optional('BLANK')).to.equal(undefined);
    expect(env.string('BLANK', 'fallback')).to.equal('fallback');
    expect(env.string('UNSET', 'fallback')).to.equal('fallback');
    expect(env.int('COUNT', 1, 0, 100)).to.equal(42);
    expect(env.int('BLANK', 7, 0, 100)).to.equal(7);
    expect(env.bool('FLAG', false)).to.equal(true);
    expect(env.oneOf('KIND', 'fs', ['fs', 's3'])).to.equal('s3');
    expect(env.url('URL')).to.equal('http://x');
    expect(env.problems).to.deep.equal([]);
  });

  it('reads lists, CIDRs and host:port pairs entry by entry', () => {
    const env = read({ LIST: ' a, ,b ,', CIDRS: '10.0.0.0/8 , fd00::/8', PAIRS: ' 127.0.0.1:11434, [::1]:80 ' });
    expect(env.list('LIST')).to.deep.equal(['a', 'b']);
    expect(env.list('UNSET', 'x,y')).to.deep.equal(['x', 'y']);
    expect(env.cidrs('CIDRS')).to.deep.equal(['10.0.0.0/8', 'fd00::/8']);
    expect(env.hostPorts('PAIRS')).to.deep.equal([
      { host: '127.0.0.1', port: 11434 },
      { host: '::1', port: 80 },
    ]);
    expect(env.problems).to.deep.equal([]);
  });

  it('names the variable and the (trimmed) value of every bad one, and goes on with the default', () => {
    const env = read({
      PORT: ' 80x ',
      SLOTS: '0',
      FLAG: 'maybe',
      KIND: 'nfs',
      LEVEL: 'loud',
      URL: 'not a url',
      MODEL_URL: 'ftp://x',
      CIDRS: 'db.internal',
      PAIRS: '10.0.0.0/8',
    });
    expect(env.int('PORT', 8080, 0, 65535)).to.equal(8080);
    expect(env.int('SLOTS', 100, 1, 10_000)).to.equal(100);
    expect(env.bool('FLAG', false)).to.equal(false);
    expect(env.oneOf('KIND', 'fs', ['fs', 's3'])).to.equal('fs');
    expect(env.oneOf('LEVEL', 'info', ['error', 'info', 'debug'])).to.equal('info');
    env.url('URL');
    env.httpUrl('MODEL_URL', 'https://api.example/v1');
    env.cidrs('CIDRS');
    env.hostPorts('PAIRS');
    expect(env.problems).to.deep.equal([
      'PORT must be an integer in [0, 65535], got "80x"',
      'SLOTS must be an integer in [1, 10000], got "0"',
      'FLAG must be true or false, got "maybe"',
      'KIND must be fs or s3, got "nfs"',
      'LEVEL must be one of error, info or debug, got "loud"',
      'URL must be a URL, got "not a url"',
      'MODEL_URL must be an http(s) URL, got "ftp://x"',
      'CIDRS entries must be CIDRs (10.1.0.0/16), got "db.internal"',
      'PAIRS takes host:port pairs only (ranges go in SANDBOX_ALLOW_CIDRS), got 10.0.0.0/8',
    ]);
    expect(() => env.throwIfProblems())
      .to.throw(ConfigError)
      .with.property('message')
      .that.matches(/^Invalid configuration:\n {2}- PORT must be/);
  });

  it('hands pass-through variables on untrimmed', () => {
    expect(
      read({ PIP_INDEX_URL: ' http://index/ ', OTHER: 'x' }).passThrough((n) => n.startsWith('PIP_')),
    ).to.deep.equal({
      PIP_INDEX_URL: ' http://index/ ',
    });
  });

  it('loadConfig trims what it reads: secrets, keys and names with stray whitespace mean what they say', () => {
    const config = loadConfig({
      SECRETS_KEY: ` ${Buffer.alloc(32, 1).toString('base64')}\n`,
      HOST: ' 127.0.0.1 ',
      CODEHOST_OAUTH_CLIENT_ID: ' id ',
      CODEHOST_OAUTH_CLIENT_SECRET: 'secret\n',
      LOG_LEVEL: ' WARN ',
      SANDBOX_STATE_DIR: ' /tmp/leases ',
    });
    expect(config.secretsKey).to.deep.equal(Buffer.alloc(32, 1));
    expect(config.host).to.equal('127.0.0.1');
    expect(config.codehostOAuth).to.include({ clientId: 'id', clientSecret: 'secret' });
    expect(config.logLevel).to.equal('warn');
    expect(config.sandbox.stateDir).to.equal('/tmp/leases');
  });

  it('loadConfig reports every bad variable at once, each named', () => {
    try {
      loadConfig({
        PORT: 'eighty',
        SANDBOX: 'maybe',
        DATA_CONNECTOR_ALLOW_PRIVATE_NETWORKS: 'sure',
        LOG_LEVEL: 'loud',
      });
      expect.fail('expected a ConfigError');
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      expect(err.problems.map((p) => p.split(' ')[0]).sort()).to.deep.equal([
        'DATA_CONNECTOR_ALLOW_PRIVATE_NETWORKS',
        'LOG_LEVEL',
        'PORT',
        'SANDBOX',
      ]);
    }
  });
});

describe('config: built once, frozen', () => {
  const config = loadConfig({ MODEL_PROVIDERS: 'local=http://127.0.0.1:1/v1', SANDBOX_ALLOW_CIDRS: '10.1.0.0/16' });

  /** Every object and array of the configuration, with its path. */
  function* parts(value: unknown, at: string): Generator<[string, object]> {
    if (typeof value !== 'object' || value === null || Buffer.isBuffer(value)) return;
    yield [at, value];
    for (const [key, child] of Object.entries(value)) yield* parts(child, `${at}.${key}`);
  }

  it('is frozen all the way down', () => {
    const all = [...parts(config, 'config')];
    expect(all.length).to.be.greaterThan(20);
    for (const [at, part] of all) expect(Object.isFrozen(part), at).to.equal(true);
  });

  it('refuses patches at run time (a TypeError in strict code; readonly to the compiler)', () => {
    const mutable = (o: object) => o as Record<string, unknown>;
    expect(() => (mutable(config).functionExecuteTimeoutSeconds = 1)).to.throw(TypeError);
    expect(() => Object.assign(config, { port: 1 })).to.throw(TypeError);
    expect(() => (mutable(config.models).providers = {})).to.throw(TypeError);
    expect(() => (mutable(config.models.providers).local = { baseUrl: 'http://elsewhere' })).to.throw(TypeError);
    expect(() => config.sandbox.allowCidrs.push('0.0.0.0/0')).to.throw(TypeError);
    expect(config.functionExecuteTimeoutSeconds).to.equal(60);
    expect(config.sandbox.allowCidrs).to.deep.equal(['10.1.0.0/16']);
  });

  it('is a new object per loadConfig: a process (or a test) with other settings reads another environment', () => {
    const other = loadConfig({ FUNCTION_EXECUTE_TIMEOUT_SECONDS: '1' });
    expect(other.functionExecuteTimeoutSeconds).to.equal(1);
    expect(config.functionExecuteTimeoutSeconds).to.equal(60);
  });
});
