/**
 * The production build of the `gatehouse` command: the CLI and the modules it loads, bundled and
 * minified by rolldown into `dist/` (the image and the admission webhook's sidecar command run
 * `node dist/gatehouse.mjs`; development and the test suites run the TypeScript sources).
 *
 * Why a build when Node runs the sources: V8 keeps the source text of every module it loads for
 * as long as the process lives (lazy compilation and `Function.prototype.toString` need it), and
 * a whole file is stored two bytes per character when one character of it is outside Latin-1. An
 * idle sidecar held 8.7 MB of such text: our comment-rich sources, Fastify's, Zod's (124 of its
 * 212 files have a non-Latin-1 character). Minified, with non-ASCII characters escaped, and as a
 * few chunks instead of some 900 modules, the same process holds a third of that
 * (docs/operations.md "Memory"). Names stay readable (no mangling, `keepNames`): logs, stack
 * traces and code that reads `.name` (error classes, Fastify plugins) see what the sources say.
 *
 * Kept outside the bundle, loaded from node_modules at run time:
 *   - packages the code requires on first use (core/on-demand.ts, core/undici.ts,
 *     http/schema-compilers.ts, cache/semantic-index.ts): a bundled copy beside the required one
 *     would be a second instance (undici's errors would fail `instanceof`);
 *   - PGlite, which finds its WebAssembly and data files beside its own module.
 * The store's SQL migrations, read from a folder beside their module, are copied to `dist/`; the
 * first start's initdb process (store/pglite-init-child.ts) is an entry of its own beside the command.
 *
 * The benchmark builds its gateway process the same way (test/bench/server-env.ts), so it measures
 * the code as it ships.
 *
 *   node operator/scripts/bundle.ts [--out DIR]        (`make dist`; the Dockerfile's build stage)
 */
import { existsSync } from 'node:fs'
import { cp, rm } from 'node:fs/promises'
import { dirname, join, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { build, type Plugin } from 'rolldown'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/** Packages loaded at run time from node_modules, never bundled (see above). */
export const EXTERNAL_PACKAGES: readonly string[] = [
  'undici',
  'ioredis',
  'ws',
  'ajv',
  're2js',
  'jose',
  '@smithy/eventstream-codec',
  '@smithy/util-utf8',
  'usearch',
  '@electric-sql/pglite',
]

function isExternal(id: string): boolean {
  return EXTERNAL_PACKAGES.some((name) => id === name || id.startsWith(`${name}/`))
}

/**
 * The image's command: `node dist/gatehouse.mjs <command>`, and the process it starts to create
 * the embedded database on a first start (store/pglite-first-start.ts runs the file beside its chunk).
 */
export const COMMAND_ENTRY = {
  gatehouse: join(ROOT, 'operator/bin/gatehouse.js'),
  'pglite-init-child': join(ROOT, 'operator/src/store/pglite-init-child.ts'),
}

export interface BundleResult {
  outDir: string
  /** Each entry's file, by entry name: `node <file> ...`. */
  entries: Record<string, string>
  chunks: number
  bytes: number
  /** Every source module in the build (absolute paths). */
  moduleIds: string[]
}

/**
 * OpenTelemetry's packages as their ES module builds wherever one exists, `require()` included.
 * sdk-node is CommonJS only, so its requires pulled in the CommonJS builds of the SDK (tracer,
 * spans, samplers, propagators), which read the API as `api.trace`, `api.context`... on every
 * span. Bundled, such a module's `api` is the API's ES build wrapped for CommonJS: each member a
 * getter calling a getter, which V8 ran through its runtime (Runtime_GetProperty). As ES modules,
 * those reads are bound by the bundler. Callgrind (test/bench/instructions.ts, 50 connections,
 * request path): tracing at 0 % went from 467,644 to 451,786 instructions a request (the
 * untraced gateway: 415,184). Packages with no ES build (sdk-node, context-async-hooks) stay
 * CommonJS; they read the API at start-up, and once a request at most.
 */
export function openTelemetryAsEsm(): Plugin {
  return {
    name: 'opentelemetry-as-esm',
    async resolveId(source, importer, extra) {
      if (!source.startsWith('@opentelemetry/')) return null
      const resolved = await this.resolve(source, importer, { kind: extra.kind, skipSelf: true })
      if (resolved === null || resolved.external) return resolved
      const esm = esmTwin(resolved.id)
      return esm === null ? resolved : { ...resolved, id: esm }
    },
  }
}

/** An OpenTelemetry CommonJS module's ES twin, when the package ships one: its build/src and build/esm trees mirror each other. */
export function esmTwin(moduleId: string): string | null {
  const esm = moduleId.replace(`${sep}build${sep}src${sep}`, `${sep}build${sep}esm${sep}`)
  return esm !== moduleId && existsSync(esm) ? esm : null
}

/** Bundles `entries` (name → source file) into `outDir`, emptied first. */
export async function bundle(outDir: string, entries: Record<string, string> = COMMAND_ENTRY): Promise<BundleResult> {
  await rm(outDir, { recursive: true, force: true })
  const output = await build({
    input: entries,
    platform: 'node',
    external: isExternal,
    // Dead code of a module is dropped, never a module's side effects (a provider or a signer
    // registers itself when its module loads).
    treeshake: { moduleSideEffects: true },
    plugins: [openTelemetryAsEsm()],
    logLevel: 'warn',
    onLog(level, log, handler) {
      // PGlite's own eval calls: it stays outside the bundle.
      if (log.code === 'EVAL') return
      handler(level, log)
    },
    output: {
      dir: outDir,
      format: 'esm',
      entryFileNames: '[name].mjs',
      chunkFileNames: '[name]-[hash].mjs',
      charset: 'ascii',
      // Every comment goes, licence headers included: they are read from node_modules, which the image ships.
      comments: false,
      keepNames: true,
      minify: { compress: { keepNames: { function: true, class: true } }, mangle: false, codegen: { removeWhitespace: true } },
    },
  })
  await cp(join(ROOT, 'operator/src/store/migrations'), join(outDir, 'migrations'), { recursive: true })
  const chunks = output.output.filter((item) => item.type === 'chunk')
  return {
    outDir,
    entries: Object.fromEntries(Object.keys(entries).map((name) => [name, join(outDir, `${name}.mjs`)])),
    chunks: chunks.length,
    bytes: chunks.reduce((sum, chunk) => sum + Buffer.byteLength(chunk.code), 0),
    moduleIds: chunks.flatMap((chunk) => chunk.moduleIds),
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { out: { type: 'string', default: join(ROOT, 'dist') } } })
  const started = performance.now()
  const result = await bundle(resolve(values.out!))
  process.stdout.write(`${result.entries.gatehouse}: ${result.chunks} chunks, ${(result.bytes / 1e6).toFixed(1)} MB, in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
}
