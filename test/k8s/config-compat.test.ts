/**
 * The Config CRD and the gateway's routing-config validator must agree: every Config the CRD
 * accepts (examples, baselines) is a valid gateway config, and every invalid Config case is refused
 * by the gateway as well. The CRD may be stricter (nesting depth, list sizes), never looser.
 */
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { validateConfig } from '../../gateway/src/snapshot/config-schema.ts'
import { baseline, invalidCases, invalidObject } from '../../crds/src/testdata/cases.ts'
import { parseResource } from '../../crds/src/index.ts'
import { readYamlDir, repoRoot } from './kube.ts'

describe('Config CRD vs the gateway routing-config schema', () => {
  it('every example and baseline Config is a valid gateway config', async () => {
    const docs = await readYamlDir(path.join(repoRoot, 'examples/k8s'))
    const configs = [baseline.Config!(), ...docs.map((d) => d.obj).filter((o) => o.kind === 'Config')]
    expect(configs.length).toBeGreaterThan(1)
    for (const config of configs) {
      expect(parseResource(config).ok).toBe(true)
      const spec = config.spec as { config: unknown }
      const result = validateConfig(spec.config)
      expect(result.ok ? 'ok' : result.issues, JSON.stringify(config.metadata)).toBe('ok')
    }
  })

  for (const c of invalidCases.filter((c) => c.kind === 'Config')) {
    it(`the gateway refuses it too: ${c.name}`, () => {
      const spec = invalidObject(c).spec as { config: unknown }
      expect(validateConfig(spec.config).ok).toBe(false)
    })
  }
})
