/**
 * Node's `http` module for the gateway's ES modules. `import { x } from 'node:http'` makes Node
 * build the module's namespace from every export, and `http`'s lazy `WebSocket`, `MessageEvent`
 * and `CloseEvent` getters then load and compile Node's bundled undici (its fetch), which the
 * gateway never uses: 12 MB of resident memory in a bare process, 2 MB in an idle sidecar (whose
 * budget is 80 MB) where much of what it pulls in is loaded anyway. Reading the module object does
 * not touch those getters. `import type` costs nothing and stays allowed (eslint.config.js
 * enforces both).
 */
export const nodeHttp = process.getBuiltinModule('node:http')
