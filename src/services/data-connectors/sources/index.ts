// The registry of connector sources: type → factory. A factory gets the connector's opened config (secret
// fields in clear) and what a source may use, and answers a ConnectorSource (./source.ts):
//   (config: Record<string, unknown>, deps: SourceDeps) => ConnectorSource
// A type this build does not know ends its jobs FAILED with `SourceNotServed`.
import { dataLakeSource } from './data-lake';
import { driveSource, type DriveConfig, type DriveToken } from './drive';
import { objstoreSource, type ObjstoreConfig } from './objstore';
import { outboundPolicyFor } from '../../../security/outbound-policy';
import { wikiSource, type WikiConfig } from './wiki';
import type { ConnectorSource, SourceDeps, SourceFactory } from './source';
import { structureSource } from './structure';
import { webscraperSource } from './webscraper';

/** A source whose type is accepted but not served by this build: every job of it fails, saying so. */
const notServed =
  (type: string): SourceFactory =>
  () => ({
    async *list() {
      throw Object.assign(new Error(`Data connectors of type ${type} are not served yet by this installation`), {
        type: 'SourceNotServed',
      });
    },
    read: () => Promise.reject(new Error(`${type} is not served yet`)),
  });

/** objstore: its endpoint, and every connection to it, goes through the outbound address policy (SSRF). */
const objstore: SourceFactory = (config, deps) =>
  objstoreSource(config as unknown as ObjstoreConfig, { policy: outboundPolicyFor(deps.config) });

/**
 * drive: the OAuth token lives sealed in the connector's `access_token` field, as JSON (access and refresh
 * token, expiry); an access token given as it is (not JSON) is used until the drive refuses it.
 */
const drive: SourceFactory = (config, deps) => {
  const stored = typeof config.access_token === 'string' ? config.access_token : '';
  return driveSource(config as unknown as DriveConfig, {
    settings: deps.config.dataSources.drive,
    tokens: {
      load: async () => {
        if (!stored) return undefined;
        if (stored.startsWith('{')) return JSON.parse(stored) as DriveToken;
        return { accessToken: stored, expiresAt: Number.MAX_SAFE_INTEGER };
      },
      save: (token) => deps.saveSecret('access_token', JSON.stringify(token)),
    },
  });
};

const wiki: SourceFactory = (config, deps) =>
  wikiSource(config as unknown as WikiConfig, {
    settings: deps.config.dataSources.wiki,
    policy: outboundPolicyFor(deps.config),
  });

export const SOURCES: Record<string, SourceFactory> = {
  webscraper: webscraperSource,
  data_lake: dataLakeSource,
  structure: structureSource,
  objstore,
  drive,
  wiki,
};

export function sourceFor(type: string, config: Record<string, unknown>, deps: SourceDeps): ConnectorSource {
  const factory = SOURCES[type] ?? notServed(type);
  return factory(config, deps);
}
