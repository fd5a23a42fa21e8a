// The `config` of a data connector: one member named like its type. Secret fields arrive in requests, are
// sealed at rest with the secrets key (AES-256-GCM, bound to the connector id) and never answered; sources
// get the opened config. Provider words (google_drive, confluence, s3, aws_*, atlassian_*) are renamed to the
// interface's words first (src/services/provider-words.ts).
import type { SecretBox } from '../../security/secret-box';
import { badRequest } from '../../errors';
import { neutralMember, PROVIDER_ALIASES } from '../provider-words';

export const CONNECTOR_TYPES = ['webscraper', 'data_lake', 'structure', 'objstore', 'drive', 'wiki'] as const;
export type ConnectorType = (typeof CONNECTOR_TYPES)[number];

/** Fields never answered and sealed at rest; `access_token`/`refresh_token` are what drive's exchange stores. */
export const SECRET_FIELDS: Record<ConnectorType, string[]> = {
  webscraper: [],
  data_lake: [],
  structure: [],
  objstore: ['objstore_secret_access_key'],
  drive: ['auth_code', 'access_token', 'refresh_token'],
  wiki: ['wiki_api_token'],
};

export type ConnectorConfig = Record<string, Record<string, unknown>>;

interface Sealed {
  sealed: string;
}
const isSealed = (v: unknown): v is Sealed =>
  typeof v === 'object' && v !== null && typeof (v as Sealed).sealed === 'string';

/** The request's config in the interface's words, checked against `type`; answers the member's type. */
export function checkConfig(type: string, config: ConnectorConfig, where = '/body/config'): ConnectorType {
  const neutral = neutralMember(config);
  const member = Object.keys(neutral)[0];
  if (!(CONNECTOR_TYPES as readonly string[]).includes(type)) {
    throw badRequest(
      `Data connector type "${type}" is unknown; use one of ${CONNECTOR_TYPES.join(', ')}`,
      '/body/type',
    );
  }
  if (member !== type) throw badRequest(`config must have the member "${type}" (the connector's type)`, where);
  return type as ConnectorType;
}

/** The config to store: the member in the interface's words, its secret fields sealed. */
export function sealConfig(box: SecretBox, connectorId: string, type: ConnectorType, config: ConnectorConfig) {
  const member = { ...neutralMember(config)[type] };
  for (const field of SECRET_FIELDS[type]) {
    const value = member[field];
    if (typeof value === 'string')
      member[field] = { sealed: box.seal(value, `${connectorId}:${field}`).toString('base64') };
  }
  return { [type]: member };
}

/** The stored config with its secret fields opened: what a source reads. */
export function openConfig(box: SecretBox, connectorId: string, type: string, stored: ConnectorConfig) {
  const member: Record<string, unknown> = { ...(stored[type] ?? {}) };
  for (const [field, value] of Object.entries(member)) {
    if (isSealed(value)) member[field] = box.open(Buffer.from(value.sealed, 'base64'), `${connectorId}:${field}`);
  }
  return member;
}

/** One secret field sealed for storing (a source that learns a token, like drive's exchange). */
export const sealField = (box: SecretBox, connectorId: string, field: string, value: string): Sealed => ({
  sealed: box.seal(value, `${connectorId}:${field}`).toString('base64'),
});

const PROVIDER_WORD = Object.fromEntries(Object.entries(PROVIDER_ALIASES).map(([p, n]) => [n, p]));
const providerWord = (w: string) => PROVIDER_WORD[w] ?? w;

/**
 * The config as answered: no secret field; drive answers `access_token` empty and data_lake `asset_paths` (the
 * interface requires both). wiki, drive and objstore are answered beside in the provider's words too
 * (`confluence`, `google_drive`, `s3`), which the generated griptape-cloud-client needs to parse the answer.
 */
export function presentConfig(type: string, stored: ConnectorConfig): ConnectorConfig {
  const member = Object.fromEntries(
    Object.entries(stored[type] ?? {}).filter(
      ([k, v]) => !isSealed(v) && !(SECRET_FIELDS[type as ConnectorType] ?? []).includes(k),
    ),
  );
  if (type === 'drive') member.access_token = '';
  if (type === 'data_lake') member.asset_paths ??= [];
  const provider = providerWord(type);
  if (provider === type) return { [type]: member };
  return {
    [type]: member,
    [provider]: Object.fromEntries(Object.entries(member).map(([k, v]) => [providerWord(k), v])),
  };
}
