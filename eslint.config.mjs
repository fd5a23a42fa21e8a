// Lint: the import boundaries of the architecture (docs/architecture.md) and promises nobody awaits.
// Formatting is Prettier's (.prettierrc.json); `npm run lint` runs both checks.
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.data/**', 'console/**'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.base],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
    },
  },
  {
    // The domain never depends on the HTTP layer: services throw errors the api renders.
    files: [
      'src/services/**/*.ts',
      'src/persistence/**/*.ts',
      'src/temporal/**/*.ts',
      'src/runtime/**/*.ts',
      'activities/**/*.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['**/api', '**/api/**'], message: 'only src/api imports the HTTP layer' }] },
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
    // Workflow code is deterministic and bundled alone: values only from the SDK, its own folder and the contracts.
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
    },
  },
);
