// Provider words. The interface names outside providers with neutral words (codehost, chatapp, drive, wiki,
// objstore); the real clients (griptape, griptape-cloud-client) send and parse the providers' own words
// (github, slack, google_drive, confluence, s3). Requests may use either: handlers pass what they receive
// through `neutralMember` / `neutralWord` and store the interface's word. Answers carry the interface's word;
// where the generated client's model requires the provider's word to parse an answer, `withProviderWords`
// adds it beside, with the same value. The table is the one place these words are listed (docs/api-conventions.md: "Provider
// words"); routes for integrations, connections and data connectors use it when they are served.

/** Provider word → the interface's word: member names (object keys) and `type` values. */
export const PROVIDER_ALIASES: Readonly<Record<string, string>> = {
  // Code locations, deployment code_source, connection `type` and `credentials`.
  github: 'codehost',
  // Integration `type` and `config` member.
  github_app: 'codehost_app',
  slack: 'chatapp',
  // Data connector `type` and `config` member, and the members' own fields.
  google_drive: 'drive',
  confluence: 'wiki',
  atlassian_email: 'wiki_email',
  atlassian_api_token: 'wiki_api_token',
  s3: 'objstore',
  aws_access_key_id: 'objstore_access_key_id',
  aws_secret_access_key: 'objstore_secret_access_key',
  // GET /config.
  data_lake_s3_bucket: 'data_lake_objstore_bucket',
  data_lake_s3_region: 'data_lake_objstore_region',
  data_lake_s3_url: 'data_lake_objstore_url',
  google_drive_data_connector_client_id: 'drive_data_connector_client_id',
};

const PROVIDER_WORD: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(PROVIDER_ALIASES).map(([p, n]) => [n, p]),
);

/** A `type` value in the interface's word (`slack` → `chatapp`); other words unchanged. */
export const neutralWord = (word: string): string => PROVIDER_ALIASES[word] ?? word;

const renameKeys = (value: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(value).map(([k, v]) => [neutralWord(k), v]));

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A one-member union (`code`, `code_source`, `config`, `credentials`) in the interface's words, its member's
 * own fields included: `{confluence: {atlassian_email}}` → `{wiki: {wiki_email}}`. Validate first (a schema
 * allowing one member): a body naming a member in both words is refused there.
 */
export function neutralMember<T>(union: T): T {
  if (!isObject(union)) return union;
  return Object.fromEntries(
    Object.entries(union).map(([k, v]) => [neutralWord(k), isObject(v) ? renameKeys(v) : v]),
  ) as T;
}

/** An answer's object with the provider's word added beside each of the interface's words it has (same value). */
export function withProviderWords<T extends Record<string, unknown>>(answer: T): T {
  const out: Record<string, unknown> = { ...answer };
  for (const [key, value] of Object.entries(answer)) {
    const provider = PROVIDER_WORD[key];
    if (provider !== undefined) out[provider] = value;
  }
  return out as T;
}
