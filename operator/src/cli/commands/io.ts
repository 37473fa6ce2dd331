/** What a command may touch: its output streams and the environment (tests pass their own). */
export interface CommandIo {
  stdout(text: string): void
  stderr(text: string): void
  env: NodeJS.ProcessEnv
}

export const processIo: CommandIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
}
