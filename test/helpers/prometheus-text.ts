/**
 * A parser of the Prometheus text exposition format (0.0.4), for tests that read /metrics. No
 * installed package parses it (prom-client only writes it), so this small one does: `# HELP` and
 * `# TYPE` lines, and samples `name{label="value",...} value [timestamp]` with the format's escapes
 * in label values (\\, \", \n). Anything else is an error, so a malformed exposition fails a test.
 */

export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

export interface Family {
  readonly name: string
  type: string
  help: string
  readonly samples: Sample[]
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/
const SUFFIXES = ['_bucket', '_sum', '_count', '_total', '_created']

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity
  if (text === '-Inf') return -Infinity
  // Prometheus reads values with Go's ParseFloat, which takes NaN in any case; prom-client writes
  // `Nan` (an event-loop gauge has no sample yet right after start).
  if (text.toLowerCase() === 'nan') return NaN
  const value = Number(text)
  if (text === '' || Number.isNaN(value)) throw new Error(`not a sample value: '${text}'`)
  return value
}

function parseLabels(line: string, start: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {}
  let at = start + 1
  while (line[at] !== '}') {
    const name = LABEL_NAME.exec(line.slice(at))?.[0]
    if (!name || line[at + name.length] !== '=' || line[at + name.length + 1] !== '"') throw new Error(`bad label at ${at}: ${line}`)
    at += name.length + 2
    let value = ''
    for (;;) {
      const char = line[at]
      if (char === undefined) throw new Error(`unterminated label value: ${line}`)
      if (char === '"') break
      if (char === '\\') {
        const next = line[at + 1]
        value += next === 'n' ? '\n' : next === '\\' ? '\\' : next === '"' ? '"' : `\\${next ?? ''}`
        at += 2
      } else {
        value += char
        at++
      }
    }
    if (Object.hasOwn(labels, name)) throw new Error(`label ${name} twice: ${line}`)
    labels[name] = value
    at++
    if (line[at] === ',') at++
  }
  return { labels, end: at + 1 }
}

/** The families of an exposition, by name (samples of a histogram sit under its base name). */
export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>()
  const family = (name: string): Family => {
    let found = families.get(name)
    if (!found) {
      found = { name, type: 'untyped', help: '', samples: [] }
      families.set(name, found)
    }
    return found
  }
  const familyOf = (sampleName: string): Family => {
    if (families.has(sampleName)) return families.get(sampleName)!
    for (const suffix of SUFFIXES) {
      if (sampleName.endsWith(suffix) && families.has(sampleName.slice(0, -suffix.length))) return families.get(sampleName.slice(0, -suffix.length))!
    }
    return family(sampleName)
  }
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    if (line.startsWith('#')) {
      const match = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line)
      if (!match) continue
      const [, kind, name, rest] = match
      if (kind === 'TYPE') family(name!).type = rest!
      else family(name!).help = rest!
      continue
    }
    const name = NAME.exec(line)?.[0]
    if (!name) throw new Error(`not a sample line: ${line}`)
    let at = name.length
    let labels: Record<string, string> = {}
    if (line[at] === '{') ({ labels, end: at } = parseLabels(line, at))
    const [valueText] = line.slice(at).trim().split(/\s+/)
    familyOf(name).samples.push({ name, labels, value: parseValue(valueText ?? '') })
  }
  return families
}

/** Every sample of every family, flattened. */
export function allSamples(families: Map<string, Family>): Sample[] {
  return [...families.values()].flatMap((family) => family.samples)
}

/** The samples named `name` whose labels include `match`. */
export function samplesOf(families: Map<string, Family>, name: string, match: Readonly<Record<string, string>> = {}): Sample[] {
  return allSamples(families).filter((sample) => sample.name === name && Object.entries(match).every(([key, value]) => sample.labels[key] === value))
}

/** The sum of the matching samples' values (0 when none). */
export function sumOf(families: Map<string, Family>, name: string, match: Readonly<Record<string, string>> = {}): number {
  return samplesOf(families, name, match).reduce((sum, sample) => sum + sample.value, 0)
}
