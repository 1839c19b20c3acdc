// ESLint (`npm run lint`, and a test of `npm test`: test/unit/static-checks.test.ts): ESLint's recommended rules
// and typescript-eslint's type-checked ones over the service, its tools, examples and tests (tsconfig.json), the client
// package (packages/client/tsconfig.json) and the chat page (web/tsconfig.json).
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    ignores: [
      // Generated from docs/openapi.yaml (`npm run openapi`), and build output of the client package and the page.
      'packages/client/src/api-types.ts',
      'packages/*/dist/**',
      'web/dist/**',
      // Build output and local data, never hand-written.
      'cdk.out/**',
      '.data/**',
      'test-output/**',
      'node_modules/**',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Unused is an error, but an `_` name is the way to say "deliberately unused" (a callback's required
      // parameter, a caught error), and `const { pk, sk, ...rest } = item` is how an item drops its keys.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // The jest configuration files are CommonJS and outside tsconfig.json: plain JavaScript rules only.
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'readonly', require: 'readonly', __dirname: 'readonly' } },
    // jest loads its configuration files as CommonJS modules, whose only import is require().
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.mjs'],
    languageOptions: { sourceType: 'module' },
  },
  {
    // The client package's build script runs under Node.
    files: ['packages/client/build.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
  },
);
