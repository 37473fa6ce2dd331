/**
 * The import graph of a source tree, read from the text of its TypeScript files: every relative
 * `import`/`export ... from` (type-only ones too, since a type cycle is a design cycle all the same).
 * Package imports are outside the graph.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'

const IMPORT = /^\s*(?:import|export)\s[^;]*?\sfrom\s+['"](\.{1,2}\/[^'"]+)['"]/gm
const SIDE_EFFECT_IMPORT = /^\s*import\s+['"](\.{1,2}\/[^'"]+)['"]/gm

export type Graph = Map<string, Set<string>>

function sourceFiles(root: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(root)) {
    const full = path.join(root, entry)
    if (entry === 'node_modules' || entry === '__fixtures__') continue
    if (statSync(full).isDirectory()) out.push(...sourceFiles(full))
    else if (entry.endsWith('.ts') && !entry.endsWith('.test.ts') && !entry.endsWith('.d.ts')) out.push(full)
  }
  return out
}

/** Files (relative to `root`) and the files each imports; tests are left out (they may import anything). */
export function fileGraph(root: string): Graph {
  const graph: Graph = new Map()
  for (const file of sourceFiles(root)) {
    const text = readFileSync(file, 'utf8')
    const targets = new Set<string>()
    for (const pattern of [IMPORT, SIDE_EFFECT_IMPORT]) {
      for (const match of text.matchAll(pattern)) {
        const target = path.resolve(path.dirname(file), match[1]!)
        if (target.startsWith(root)) targets.add(path.relative(root, target))
      }
    }
    graph.set(path.relative(root, file), targets)
  }
  return graph
}

/** The folder graph: a file in `a/` importing one in `b/` is an edge a → b (top-level folders under root; files at the root are '.'). */
export function folderGraph(files: Graph): Graph {
  const folderOf = (file: string): string => (file.includes(path.sep) ? file.slice(0, file.indexOf(path.sep)) : '.')
  const graph: Graph = new Map()
  for (const [file, targets] of files) {
    const from = folderOf(file)
    const edges = graph.get(from) ?? new Set<string>()
    for (const target of targets) if (folderOf(target) !== from) edges.add(folderOf(target))
    graph.set(from, edges)
  }
  return graph
}

/** Strongly connected components with more than one node, or a node importing itself: each is a cycle. */
export function cycles(graph: Graph): string[][] {
  let index = 0
  const indices = new Map<string, number>()
  const lowLinks = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const connect = (node: string): void => {
    indices.set(node, index)
    lowLinks.set(node, index)
    index++
    stack.push(node)
    onStack.add(node)
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        connect(next)
        lowLinks.set(node, Math.min(lowLinks.get(node)!, lowLinks.get(next)!))
      } else if (onStack.has(next)) {
        lowLinks.set(node, Math.min(lowLinks.get(node)!, indices.get(next)!))
      }
    }
    if (lowLinks.get(node) === indices.get(node)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort())
    }
  }
  for (const node of graph.keys()) if (!indices.has(node)) connect(node)
  return found
}
