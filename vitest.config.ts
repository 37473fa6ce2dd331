import { defineConfig } from 'vitest/config'

/**
 * The suites that talk to a kube-apiserver run in their own project, whose global setup starts one
 * API server (etcd + kube-apiserver, CRDs installed) for all of them: test/k8s/shared-apiserver.ts.
 * Vitest runs a project's global setup only when one of its files is queued, so a run without these
 * suites never starts it. The chart-rendering suites under test/k8s need helm or promtool only.
 */
const WITHOUT_API_SERVER = ['test/k8s/chart-observability.test.ts', 'test/k8s/config-compat.test.ts']

const common = {
  testTimeout: 30_000,
  hookTimeout: 120_000,
  pool: 'forks',
} as const

export default defineConfig({
  test: {
    reporters: ['default'],
    projects: [
      {
        test: {
          ...common,
          name: 'unit',
          include: ['gateway/src/**/*.test.ts', 'operator/src/**/*.test.ts', 'crds/**/*.test.ts', 'test/!(k8s)/**/*.test.ts', ...WITHOUT_API_SERVER],
          exclude: ['**/node_modules/**', '.tools/**'],
        },
      },
      {
        test: {
          ...common,
          name: 'k8s',
          include: ['test/k8s/**/*.test.ts'],
          exclude: ['**/node_modules/**', ...WITHOUT_API_SERVER],
          globalSetup: ['test/k8s/shared-apiserver.ts'],
        },
      },
    ],
  },
})
