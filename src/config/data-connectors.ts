// Data connectors (docs/data-connectors.md): data jobs, the webscraper's fetches, and the outside providers
// of the drive and wiki sources (src/services/data-connectors/sources).
import type { EnvReader, JobLimits } from './env';

export interface DataConnectorsConfig {
  /** Largest item a job stores; a larger one is a `TooLarge` entry of the job's errors (read no further). */
  maxItemBytes: number;
  /** Outside fetches (webscraper): per request, in seconds; redirects followed; the User-Agent sent. */
  fetchTimeoutSeconds: number;
  maxRedirects: number;
  userAgent: string;
  /** Pages fetched at once by one webscraper job; items read and written at once by one data job. */
  fetchConcurrency: number;
  /** Worker threads that read HTML pages (Readability) off the event loop; 0: on it. */
  extractThreads: number;
}

export interface DataConnectorSettings {
  /** One data job: its wall time (DATA_JOB_TIME_LIMIT_SECONDS, a workflow timer); past it the job ends FAILED. */
  dataJob: JobLimits;
  /** Data jobs (docs/data-connectors.md): item cap, and how the webscraper fetches. */
  dataConnectors: DataConnectorsConfig;
  /** The outside providers of data connector sources (src/services/data-connectors/sources). */
  dataSources: {
    /** Google Drive's wire protocol: OAuth token endpoint, files API origin, this installation's OAuth client. */
    drive: {
      tokenUrl: string;
      apiBaseUrl: string;
      clientId: string;
      clientSecret: string | undefined;
      redirectUri: string;
    };
    /**
     * Confluence Cloud's REST API at `https://<domain>/wiki/rest/api`; `baseUrl` replaces `https://<domain>` for
     * every connector (a proxy, tests). Domains must end with one of `domainSuffixes` (empty, from `*`: any host name).
     */
    wiki: { baseUrl: string | undefined; domainSuffixes: string[] };
  };
}

export function readDataConnectors(env: EnvReader): DataConnectorSettings {
  return {
    dataJob: env.jobLimits('DATA_JOB_TIME_LIMIT_SECONDS', 3600, 7 * 24 * 3600),
    dataConnectors: {
      maxItemBytes: env.int('DATA_CONNECTOR_MAX_ITEM_BYTES', 50 * 1024 * 1024, 1024),
      fetchTimeoutSeconds: env.int('DATA_CONNECTOR_FETCH_TIMEOUT_SECONDS', 30, 1, 3600),
      maxRedirects: env.int('DATA_CONNECTOR_MAX_REDIRECTS', 5, 0, 20),
      userAgent: env.string(
        'DATA_CONNECTOR_USER_AGENT',
        'TarmacDataConnector/1.0 (+https://github.com/tarmac; webscraper)',
      ),
      fetchConcurrency: env.int('DATA_CONNECTOR_FETCH_CONCURRENCY', 4, 1, 64),
      extractThreads: env.int('DATA_CONNECTOR_EXTRACT_THREADS', 2, 0, 16),
    },
    dataSources: {
      drive: {
        tokenUrl: env.url('DRIVE_OAUTH_TOKEN_URL', 'https://oauth2.googleapis.com/token'),
        apiBaseUrl: env.url('DRIVE_API_BASE_URL', 'https://www.googleapis.com'),
        clientId: env.string('DRIVE_DATA_CONNECTOR_CLIENT_ID', ''),
        clientSecret: env.optional('DRIVE_DATA_CONNECTOR_CLIENT_SECRET'),
        redirectUri: env.string('DRIVE_OAUTH_REDIRECT_URI', 'postmessage'),
      },
      wiki: {
        baseUrl: env.url('WIKI_BASE_URL'),
        domainSuffixes: env
          .list('WIKI_DOMAIN_SUFFIXES', 'atlassian.net')
          .map((d) => d.toLowerCase().replace(/^\.+/, ''))
          .filter((d) => d !== '' && d !== '*'), // `*`: any host name
      },
    },
  };
}
