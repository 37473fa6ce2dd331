/**
 * Writes crds/generated/gatehouse.dev_<plural>.yaml from the schema source, and the same files into
 * the Helm chart's crds/ folder (also read by its crds.install template) so
 * they never drift. `--check` compares instead of writing and exits 1 when anything is stale.
 */
import { readFile, writeFile, mkdir, readdir, rm } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import { renderCrdFiles } from './render.ts'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
export const OUTPUT_DIRS = ['crds/generated', 'charts/gatehouse/crds']

async function main(check: boolean): Promise<number> {
  const files = renderCrdFiles()
  let stale = 0
  for (const dir of OUTPUT_DIRS) {
    const abs = path.join(repoRoot, dir)
    await mkdir(abs, { recursive: true })
    const existing = new Set((await readdir(abs)).filter((f) => f.endsWith('.yaml')))
    for (const [name, text] of files) {
      existing.delete(name)
      const current = await readFile(path.join(abs, name), 'utf8').catch(() => undefined)
      if (current === text) continue
      stale++
      if (check) console.error(`stale: ${dir}/${name}`)
      else await writeFile(path.join(abs, name), text)
    }
    for (const leftover of existing) {
      stale++
      if (check) console.error(`not generated: ${dir}/${leftover}`)
      else await rm(path.join(abs, leftover))
    }
  }
  if (check && stale > 0) return 1
  console.log(check ? 'CRDs are up to date' : `wrote ${files.size} CRDs into ${OUTPUT_DIRS.join(', ')} (${stale} changed)`)
  return 0
}

process.exitCode = await main(process.argv.includes('--check'))
