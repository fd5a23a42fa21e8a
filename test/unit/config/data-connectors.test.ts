// Parsing of the data connector sources' provider settings (DRIVE_*, WIKI_*) and the webscraper's extraction threads.
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../../src/config';
import { configProblems } from '../../support/config-problems';

describe('config: data connector sources', () => {
  it('defaults to the real providers', () => {
    expect(loadConfig({}).dataSources).to.deep.equal({
      drive: {
        tokenUrl: 'https://oauth2.googleapis.com/token',
        apiBaseUrl: 'https://www.googleapis.com',
        clientId: '',
        clientSecret: undefined,
        redirectUri: 'postmessage',
      },
      wiki: { baseUrl: undefined, domainSuffixes: ['atlassian.net'] },
    });
  });

  it('reads the extraction threads of the webscraper: 2 by default, 0 (on the event loop) to 16', () => {
    expect(loadConfig({}).dataConnectors.extractThreads).to.equal(2);
    expect(loadConfig({ DATA_CONNECTOR_EXTRACT_THREADS: '0' }).dataConnectors.extractThreads).to.equal(0);
    expect(() => loadConfig({ DATA_CONNECTOR_EXTRACT_THREADS: '17' })).to.throw(ConfigError);
    expect(() => loadConfig({ DATA_CONNECTOR_EXTRACT_THREADS: 'many' })).to.throw(ConfigError);
  });

  it('reads the overrides, and the client id is the public one', () => {
    const config = loadConfig({
      DRIVE_DATA_CONNECTOR_CLIENT_ID: 'cid',
      DRIVE_DATA_CONNECTOR_CLIENT_SECRET: 'secret',
      DRIVE_OAUTH_TOKEN_URL: 'http://127.0.0.1:9/token',
      DRIVE_API_BASE_URL: 'http://127.0.0.1:9/',
      DRIVE_OAUTH_REDIRECT_URI: 'https://app.example/callback',
      WIKI_BASE_URL: 'http://127.0.0.1:8/',
      WIKI_DOMAIN_SUFFIXES: ' .atlassian.net, wiki.example.com ,',
    });
    expect(config.dataSources.drive).to.deep.equal({
      tokenUrl: 'http://127.0.0.1:9/token',
      apiBaseUrl: 'http://127.0.0.1:9',
      clientId: 'cid',
      clientSecret: 'secret',
      redirectUri: 'https://app.example/callback',
    });
    expect(config.publicConfig.drive_data_connector_client_id).to.equal('cid');
    expect(config.dataSources.wiki).to.deep.equal({
      baseUrl: 'http://127.0.0.1:8',
      domainSuffixes: ['atlassian.net', 'wiki.example.com'],
    });
    expect(loadConfig({ WIKI_DOMAIN_SUFFIXES: '*' }).dataSources.wiki.domainSuffixes).to.deep.equal([]);
  });

  it('refuses URLs that are not URLs', () => {
    try {
      loadConfig({ DRIVE_OAUTH_TOKEN_URL: 'not a url', WIKI_BASE_URL: 'nope' });
      expect.fail('expected a ConfigError');
    } catch (err) {
      expect(err).to.be.instanceOf(ConfigError);
      expect((err as ConfigError).problems).to.deep.equal([
        'DRIVE_OAUTH_TOKEN_URL must be a URL, got "not a url"',
        'WIKI_BASE_URL must be a URL, got "nope"',
      ]);
    }
  });
});

describe('config: blob store', () => {
  const problems = configProblems;

  it('is the filesystem by default, with an empty data lake in GET /api/config', () => {
    const config = loadConfig({});
    expect(config.blobS3).to.equal(undefined);
    expect(config.publicConfig.data_lake_objstore_bucket).to.equal('');
    expect(config.publicConfig.data_lake_objstore_url).to.equal('');
  });

  it('reads BLOB_S3_* and reports the bucket as the data lake unless DATA_LAKE_* say otherwise', () => {
    const env = {
      BLOB_STORE: 's3',
      BLOB_S3_BUCKET: 'tarmac-blobs',
      BLOB_S3_REGION: 'eu-west-1',
      BLOB_S3_ENDPOINT: 'http://minio:9000/',
      BLOB_S3_PUBLIC_URL: 'https://s3.example.com',
      BLOB_S3_FORCE_PATH_STYLE: 'true',
      BLOB_S3_ACCESS_KEY_ID: 'key',
      BLOB_S3_SECRET_ACCESS_KEY: 'secret',
    };
    const config = loadConfig(env);
    expect(config.blobS3).to.deep.equal({
      bucket: 'tarmac-blobs',
      region: 'eu-west-1',
      endpoint: 'http://minio:9000',
      publicEndpoint: 'https://s3.example.com',
      forcePathStyle: true,
      credentials: { accessKeyId: 'key', secretAccessKey: 'secret' },
    });
    expect(config.publicConfig).to.include({
      data_lake_objstore_bucket: 'tarmac-blobs',
      data_lake_objstore_region: 'eu-west-1',
      data_lake_objstore_url: 'https://s3.example.com',
    });
    const aws = loadConfig({ BLOB_STORE: 's3', BLOB_S3_BUCKET: 'b', BLOB_S3_REGION: 'us-west-2' });
    expect(aws.blobS3).to.deep.equal({ bucket: 'b', region: 'us-west-2', forcePathStyle: false });
    expect(aws.publicConfig.data_lake_objstore_url).to.equal('https://s3.us-west-2.amazonaws.com');
    const lake = loadConfig({
      ...env,
      DATA_LAKE_OBJSTORE_BUCKET: 'lake',
      DATA_LAKE_OBJSTORE_URL: 'https://lake.example',
    });
    expect(lake.publicConfig).to.include({
      data_lake_objstore_bucket: 'lake',
      data_lake_objstore_url: 'https://lake.example',
    });
  });

  it('names every problem of a bad S3 configuration', () => {
    expect(problems({ BLOB_STORE: 'nfs' })).to.deep.equal(['BLOB_STORE must be fs or s3, got "nfs"']);
    expect(
      problems({
        BLOB_STORE: 's3',
        BLOB_S3_FORCE_PATH_STYLE: 'maybe',
        BLOB_S3_ACCESS_KEY_ID: 'k',
        BLOB_S3_ENDPOINT: 'nope',
      }),
    ).to.deep.equal([
      'BLOB_S3_BUCKET is required when BLOB_STORE=s3',
      'BLOB_S3_FORCE_PATH_STYLE must be true or false, got "maybe"',
      'BLOB_S3_ACCESS_KEY_ID and BLOB_S3_SECRET_ACCESS_KEY are set together or not at all',
      'BLOB_S3_ENDPOINT must be a URL, got "nope"',
    ]);
  });
});
