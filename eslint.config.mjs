// Lint: the import boundaries of the architecture (docs/architecture.md) and promises nobody awaits.
// Formatting is Prettier's (.prettierrc.json); `npm run lint` runs both checks.
import tseslint from 'typescript-eslint';

/** Calls that reach PostgreSQL through a DataSource, an EntityManager, a repository or a pg client. */
const DATA_SOURCE_CALLS = [
  'query',
  'createQueryBuilder',
  'getRepository',
  'transaction',
  'findOne',
  'findOneBy',
  'findOneOrFail',
  'findOneByOrFail',
  'findBy',
  'findAndCount',
  'save',
  'insert',
  'upsert',
  'softDelete',
  'increment',
  'decrement',
];

/** The floors below the domain: they never import src/services or activities/ (docs/architecture.md). */
const LOWER_FLOORS = [
  'src/persistence',
  'src/temporal',
  'src/runtime',
  'src/jobs',
  'src/security',
  'src/blobs',
  'src/drivers',
  'src/observability',
  'src/config',
];

/** src/api, from any folder (and not a package such as @opentelemetry/api). */
const ONLY_API_IMPORTS_API = { regex: '^(\\.\\./)+(src/)?api(/|$)', message: 'only src/api imports the HTTP layer' };

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      '.data/**',
      'console/node_modules/**',
      'console/dist/**',
      'console/*.ts',
      'console/scripts/**',
    ],
  },
  {
    // The console is a client of the public API like any other: linted like the rest, and it imports nothing
    // of the server's (its API types are generated from the OpenAPI document into console/src/api/).
    files: ['console/src/**/*.ts', 'console/src/**/*.tsx'],
    extends: [tseslint.configs.base],
    languageOptions: {
      parserOptions: { project: 'console/tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { regex: '^(\\.\\./)+src/', message: 'the console imports nothing of the server: it calls the public API' },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.ts'],
    ignores: ['console/**'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
  {
    // The domain never depends on the HTTP layer: services throw errors the api renders.
    files: ['src/services/**/*.ts', 'activities/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [ONLY_API_IMPORTS_API] }] },
  },
  {
    // The lower floors serve the domain and never call up into it: no services, no activities (types included),
    // and no HTTP layer either.
    // src/*.ts: the loose modules every floor uses (config, errors, ids, logger, process lifecycle).
    files: [...LOWER_FLOORS.map((floor) => `${floor}/**/*.ts`), 'src/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ONLY_API_IMPORTS_API,
            {
              regex: '^(\\.\\./)+(services|activities)(/|$)',
              message:
                'the lower floors (persistence, temporal, runtime, jobs, ...) never import services or activities',
            },
          ],
        },
      ],
    },
  },
  {
    // One reader of the environment (src/config): everything else is given its settings. The spawner's child
    // gets only PATH, the platform's own, on purpose.
    files: ['src/**/*.ts', 'activities/**/*.ts', 'workflows/**/*.ts', 'migrations/**/*.ts'],
    ignores: ['src/config/**', 'src/runtime/process/spawn.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'only src/config reads the environment (docs/configuration.md)',
        },
      ],
    },
  },
  {
    // Workflow code is deterministic and bundled alone: values only from the SDK, its own folder and the contract;
    // types also from the activities' index (the `Activities` of proxyActivities), and from nowhere else.
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!@temporalio/workflow$|\\./[\\w-]+$|\\.\\./src/temporal/contracts$)',
              allowTypeImports: true,
              message: 'workflows import values only from @temporalio/workflow, workflows/ and src/temporal/contracts',
            },
          ],
        },
      ],
      // Every import, type or value (the rule above lets any type through).
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!@temporalio/workflow$|\\./[\\w-]+$|\\.\\./src/temporal/contracts$|\\.\\./activities$)',
              message:
                'workflows import types only from src/temporal/contracts (and Activities from activities/): move or re-export the type there',
            },
          ],
        },
      ],
    },
  },
  {
    // Activities are adapters (heartbeats, cancellation, turning errors into failures) that call the services:
    // they hold no SQL and never use the data source themselves (docs/architecture.md).
    files: ['activities/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...[
          'Literal[value=/^\\s*(SELECT|INSERT|UPDATE|DELETE|WITH|LOCK)\\s/i]',
          'TemplateElement[value.raw=/^\\s*(SELECT|INSERT|UPDATE|DELETE|WITH|LOCK)\\s/i]',
        ].map((selector) => ({ selector, message: 'SQL belongs in a service (src/services/), not in an activity' })),
        {
          selector: `CallExpression > MemberExpression.callee > Identifier.property[name=/^(${DATA_SOURCE_CALLS.join('|')})$/]`,
          message: 'activities call services; they do not use the data source (queries, repositories, transactions)',
        },
        {
          selector: "MemberExpression > Identifier.property[name='manager']",
          message: 'activities call services; they do not use the data source (queries, repositories, transactions)',
        },
      ],
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'typeorm', allowTypeImports: true, message: 'activities call services; TypeORM is theirs' }],
        },
      ],
    },
  },
  {
    // bench/ and the drills share test/harness/; test/support is mocha's own (docs/testing.md).
    files: ['bench/**/*.ts', 'test/drills/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)test/support/|^(\\.\\./)+support/',
              message: 'bench/ and the drills import test/harness/, not test/support/',
            },
          ],
        },
      ],
    },
  },
);
