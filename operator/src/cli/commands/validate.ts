/**
 * `gatehouse validate -f FILE...`: the checks a start makes on resources files (syntax, every
 * object's shape, duplicates, references between the objects, Secrets), without starting, listing
 * every problem with its file and line. Exit status 0 when the set is valid, 1 when not, 2 for a
 * wrong command line, for CI.
 */
import { parseArgs } from 'node:util'
import { checkFileSet } from '../../resources/file-set.ts'
import { formatProblem } from '../../resources/files.ts'
import { CliError } from './admin-client.ts'
import type { CommandIo } from './io.ts'
import { outputFormat } from './output.ts'

export async function runValidate(argv: string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: { file: { type: 'string', short: 'f', multiple: true, default: [] }, output: { type: 'string', short: 'o' } },
    allowPositionals: true,
    strict: true,
  })
  const files = [...values.file, ...positionals]
  if (files.length === 0) throw new CliError('usage: gatehouse validate -f FILE [-f FILE ...]', 2)
  const format = outputFormat(values.output)
  // References are checked within the files: a name that only exists in a running Gatehouse's
  // store (created through the admin API) is reported here, though a start against that store accepts it.
  const { read, problems } = await checkFileSet(files, io.env)
  if (format === 'json') {
    io.stdout(`${JSON.stringify({ valid: problems.length === 0, objects: read.resources.length, problems }, null, 2)}\n`)
  } else if (problems.length === 0) {
    io.stdout(`${files.join(', ')}: ${read.resources.length} objects, valid\n`)
  } else {
    io.stderr(problems.map((problem) => `${formatProblem(problem)}\n`).join(''))
    io.stderr(`${problems.length} problem${problems.length === 1 ? '' : 's'} in ${files.join(', ')}\n`)
  }
  return problems.length === 0 ? 0 : 1
}
