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

/** The console's sources, linted with its own tsconfig (console/tsconfig.json, which includes vite.config.ts). */
const CONSOLE_FILES = ['console/src/**/*.ts', 'console/src/**/*.tsx', 'console/vite.config.ts'];

/** A relative import that leaves console/ for the server's src/. */
const CONSOLE_IMPORTS_NOTHING_OF_THE_SERVER = {
  regex: '^(\\.\\./)+src/',
  message: 'the console imports nothing of the server: it calls the public API',
};

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', '.data/**', 'console/node_modules/**', 'console/dist/**'],
  },
  {
    // The console is a client of the public API like any other: linted like the rest, and it imports nothing
    // of the server's (its API types are generated from the OpenAPI document into console/src/api/).
    files: CONSOLE_FILES,
    extends: [tseslint.configs.base],
    languageOptions: {
      parserOptions: { project: 'console/tsconfig.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      'no-restricted-imports': ['error', { patterns: [CONSOLE_IMPORTS_NOTHING_OF_THE_SERVER] }],
    },
  },
  {
    // Pages, components and the live readers reach the API through console/src/api only: a module a resource
    // declares its calls once, and query keys are named in console/src/api/query-keys.ts
    // (test/unit/house-console.test.ts checks the same).
    files: CONSOLE_FILES,
    ignores: ['console/src/api/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            CONSOLE_IMPORTS_NOTHING_OF_THE_SERVER,
            {
              group: ['**/api/client'],
              importNames: ['api', 'data'],
              message: 'call the function of console/src/api/<resource>.ts (or add one there)',
            },
            {
              group: ['openapi-fetch', '**/schema.gen'],
              message: 'the typed client and its generated types are console/src/api/client.ts',
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression[callee.name='fetch'], CallExpression > MemberExpression.callee[property.name='fetch']",
          message: 'only console/src/api calls the network: add the call to its resource module',
        },
        {
          selector: 'NewExpression[callee.name=/^(EventSource|XMLHttpRequest|WebSocket)$/]',
          message: 'only console/src/api calls the network: add the call to its resource module',
        },
        {
          selector: "Property[key.name='queryKey'] > ArrayExpression.value",
          message: 'query keys are named in console/src/api/query-keys.ts',
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
