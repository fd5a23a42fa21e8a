// The request schemas of a knowledge base's type, config and language (src/api/routes/knowledge-bases.ts):
// one member of the config per type, a pg_vector member with its outside database, PostgreSQL's text search
// configurations.
import { LANGUAGES } from '../../services/knowledge/index/full-text';
import { str } from './registry';

export const language = {
  type: 'string',
  enum: [...LANGUAGES],
  description:
    'The PostgreSQL text search configuration of the full text: stemming and stop words of that language (default english); `simple` for neither. Fixed once created.',
} as const;
export const kbType = {
  type: 'string',
  enum: ['gtc_pg_vector', 'gtc_hybrid_sql_pg_vector', 'pg_vector'],
  description:
    "gtc_pg_vector or gtc_hybrid_sql_pg_vector (chunks in this platform's PostgreSQL) or pg_vector (chunks in a table the platform creates in an outside PostgreSQL with pgvector); pgai_knowledge_base (Timescale's pgai extension) is not served: 400",
} as const;
const settingsInput = {
  type: 'object',
  properties: {
    embedding_model: str(1, 200),
    use_default_embedding_model: { type: 'boolean' },
    chunking: {
      type: 'string',
      enum: ['structure', 'length'],
      description:
        'How jobs cut chunks: `structure` (the default) along headings, paragraphs, list items, code blocks and table rows, each chunk starting with its title and heading path; `length` in overlapping windows of tokens only (the former chunking). A change applies at the next job.',
    },
    parent_child: {
      type: 'boolean',
      description:
        'Parent-child retrieval: small chunks (128 tokens) are matched, and each entry answers the section around its match (up to 4,000 characters). Default false; a change applies at the next job.',
    },
  },
} as const;
export const configInput = {
  type: 'object',
  minProperties: 1,
  maxProperties: 1,
  additionalProperties: false,
  properties: {
    gtc_pg_vector: settingsInput,
    gtc_hybrid_sql_pg_vector: settingsInput,
    pg_vector: {
      type: 'object',
      required: ['connection_string', 'password'],
      properties: {
        ...settingsInput.properties,
        connection_string: {
          type: 'string',
          maxLength: 2000,
          // No password (it goes in `password`), a host name or address, a port 1-65535, only the sslmode parameter.
          pattern:
            '^postgres(ql)?://([A-Za-z0-9._~-]+@)?[A-Za-z0-9._-]+(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3}))?(/[A-Za-z0-9._~-]*)?(\\?sslmode=(disable|prefer|require|verify-ca|verify-full|no-verify))?$',
          description:
            'postgres://user@host:port/database[?sslmode=...]: no password in it (give it in `password`), no other parameter; the database needs pgvector.',
        },
        password: { ...str(0, 1000), description: 'Stored encrypted; never answered.' },
      },
    },
  },
  description:
    'Exactly one member, named like the type: the embedding settings (pg_vector: also the outside database).',
} as const;
