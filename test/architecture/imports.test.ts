/**
 * The source trees import in one direction. No import cycle between files or between folders (type
 * imports count: a type cycle is a design cycle too), and in the gateway every folder sits on a
 * layer and imports only its own layer and those below it, so low-level pieces (errors, headers,
 * secrets) never reach up into the request path.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { cycles, fileGraph, folderGraph } from './import-graph.ts'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/** Bottom to top. A new folder is placed here on purpose, not by accident. */
const GATEWAY_LAYERS: readonly (readonly string[])[] = [
  ['core'],
  ['providers'],
  ['upstream', 'pricing'],
  ['snapshot'],
  ['routing'],
  ['runtime'],
  ['validation', 'telemetry', 'sync', 'sidecar', 'guardrails', 'limits', 'cache', 'usage', 'relay', 'mcp', 'agents'],
  ['pipeline'],
  ['http'],
  ['.'],
]

describe.each(['gateway/src', 'operator/src', 'crds/src'])('%s', (tree) => {
  const files = fileGraph(path.join(repoRoot, tree))

  it('has no import cycle between files', () => {
    expect(cycles(files)).toEqual([])
  })

  it('has no import cycle between folders', () => {
    expect(cycles(folderGraph(files))).toEqual([])
  })
})

describe('gateway layers', () => {
  const folders = folderGraph(fileGraph(path.join(repoRoot, 'gateway/src')))
  const layerOf = new Map(GATEWAY_LAYERS.flatMap((names, layer) => names.map((name) => [name, layer] as const)))

  it('places every folder on a layer', () => {
    expect([...folders.keys()].filter((folder) => !layerOf.has(folder))).toEqual([])
  })

  it('imports only downwards', () => {
    const upward: string[] = []
    for (const [from, targets] of folders) {
      for (const to of targets) if ((layerOf.get(to) ?? Infinity) > (layerOf.get(from) ?? -1)) upward.push(`${from} -> ${to}`)
    }
    expect(upward).toEqual([])
  })
})
