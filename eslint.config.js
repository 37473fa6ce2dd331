import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import globals from 'globals'

export default tseslint.config(
  { ignores: ['node_modules/**', '.tools/**', '.data/**', 'bench-results/**', 'charts/**', 'dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // The gateway must run from a plain file: nothing from Kubernetes or the control plane.
    files: ['gateway/src/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['@kubernetes/*', '@gatehouse/operator', '@gatehouse/crds', '**/operator/**'] }],
    },
  },
  {
    // Imports that load far more than the gateway uses, into every process including the 80 MB
    // sidecar: `import { x } from 'node:http'` loads Node's bundled undici (2 to 12 MB of resident
    // memory, gateway/src/core/node-http.ts), undici's index all of undici (core/undici.ts).
    files: ['gateway/src/**/*.ts'],
    ignores: ['**/*.test.ts', 'gateway/src/core/undici.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [
        { name: 'node:http', allowTypeImports: true, message: "use nodeHttp from gateway/src/core/node-http.ts: a value import of 'node:http' loads Node's bundled undici" },
        { name: 'undici', allowTypeImports: true, message: 'use gateway/src/core/undici.ts: undici\'s index loads all of undici' },
      ] }],
    },
  },
  {
    // The operator reaches the gateway through its snapshot contract only; the embedded runner is
    // the one composition root that starts both planes in one process.
    files: ['operator/src/**/*.ts'],
    ignores: ['operator/src/cli/**'],
    rules: {
      'no-restricted-imports': ['error', { paths: ['@gatehouse/gateway'], patterns: ['**/gateway/src/**'] }],
    },
  },
)
