#!/usr/bin/env node
// Node >= 22.19 runs the TypeScript sources directly (type stripping); there is no build step.
import { holdTickObjectShape } from '@gatehouse/gateway/tick-shape'

// Held before the rest of the program loads (its loading runs full collections too):
// gateway/src/core/tick-shape.ts. Hence the import below is a dynamic one.
holdTickObjectShape()
const { main } = await import('../src/cli/main.ts')
await main(process.argv.slice(2))
