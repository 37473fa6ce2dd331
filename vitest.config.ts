import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['gateway/src/**/*.test.ts', 'operator/src/**/*.test.ts', 'crds/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**', '.tools/**'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default'],
  },
})
