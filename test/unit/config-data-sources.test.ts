// Parsing of the data connector sources' provider settings (DRIVE_*, WIKI_*).
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config';

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
