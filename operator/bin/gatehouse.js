#!/usr/bin/env node
// Node >= 22.19 runs the TypeScript sources directly (type stripping); there is no build step.
import { main } from '../src/cli/main.ts'

await main(process.argv.slice(2))
