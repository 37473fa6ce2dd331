import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { IMAGE_COMMAND_SCRIPT, SIDECAR_ENV, SIDECAR_NODE_FLAGS } from '../webhook/inject.ts'
import { EMBEDDED_NODE_FLAGS, missingNodeFlags, SERVER_ALLOCATOR_PATH, SERVER_ENV, SERVER_NODE_FLAGS } from './node-flags.ts'

const root = new URL('../../../', import.meta.url)

// The flags cannot be set from inside the process, so the command lines that start it must carry
// them. Break tried: dropping a flag from the Dockerfile's entrypoint failed the first
// test, and so did warming the image's compile cache without it; dropping --liftoff-only from the
// Makefile failed the second.
describe('node flags of the servers', () => {
  it('the image entrypoint starts every server with them', async () => {
    const dockerfile = await readFile(new URL('Dockerfile', root), 'utf8')
    const entrypoint = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)![1]!) as string[]
    expect(entrypoint).toEqual(['node', ...SERVER_NODE_FLAGS, IMAGE_COMMAND_SCRIPT])
    // Node keys its compile cache by the V8 flags: a cache warmed without them would go unused.
    expect(dockerfile).toContain(`RUN node ${SERVER_NODE_FLAGS.join(' ')} ${IMAGE_COMMAND_SCRIPT} --help`)
    // The build stage writes the script the entrypoint runs.
    expect(dockerfile).toContain(`RUN node operator/scripts/bundle.ts --out /app/${IMAGE_COMMAND_SCRIPT.split('/')[0]}`)
  })

  it('the image sets the servers\' environment', async () => {
    const dockerfile = await readFile(new URL('Dockerfile', root), 'utf8')
    const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '))
    for (const [name, value] of Object.entries(SERVER_ENV)) expect(runtimeStage).toMatch(new RegExp(`^ENV ${name}=${value}$`, 'm'))
  })

  // Break tried: the symlink's path changed in the Dockerfile alone failed it.
  it('the image preloads jemalloc into its servers from the path it links, and the sidecar opts out', async () => {
    const dockerfile = await readFile(new URL('Dockerfile', root), 'utf8')
    const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '))
    expect(runtimeStage).toMatch(new RegExp(`^ENV LD_PRELOAD=${SERVER_ALLOCATOR_PATH}$`, 'm'))
    expect(runtimeStage).toMatch(/apt-get install -y --no-install-recommends libjemalloc2/)
    expect(runtimeStage).toContain(`ln -s "$(find /usr/lib -name libjemalloc.so.2 -print -quit)" ${SERVER_ALLOCATOR_PATH}`)
    // Installed and linked before the image drops to its unprivileged user.
    expect(runtimeStage.indexOf('libjemalloc2')).toBeLessThan(runtimeStage.indexOf('\nUSER '))
    expect(SIDECAR_ENV.LD_PRELOAD).toBe('')
  })

  it("the image warms the sidecar's compile cache with the sidecar's flags", async () => {
    const dockerfile = await readFile(new URL('Dockerfile', root), 'utf8')
    expect(dockerfile).toContain(`RUN node ${SIDECAR_NODE_FLAGS.join(' ')} ${IMAGE_COMMAND_SCRIPT} --help`)
  })

  it('make run starts the embedded process with them', async () => {
    const makefile = await readFile(new URL('Makefile', root), 'utf8')
    const flags = /^EMBEDDED_NODE_FLAGS := (.*)$/m.exec(makefile)![1]!.split(' ')
    expect(flags).toEqual([...EMBEDDED_NODE_FLAGS])
    expect(makefile).toMatch(/^\tnode \$\(EMBEDDED_NODE_FLAGS\) operator\/bin\/gatehouse\.js start /m)
  })

  it('names the flags a process was started without, from its command line or NODE_OPTIONS', () => {
    expect(missingNodeFlags(EMBEDDED_NODE_FLAGS, ['--liftoff-only'], '--max-semi-space-size=2')).toEqual(['--optimize-for-size'])
    expect(missingNodeFlags(EMBEDDED_NODE_FLAGS, [...EMBEDDED_NODE_FLAGS], '')).toEqual([])
    expect(missingNodeFlags(SERVER_NODE_FLAGS, [], '')).toEqual([...SERVER_NODE_FLAGS])
  })
})
