/**
 * SCIM filters (RFC 7644 §3.4.2.2) and PATCH paths (§3.5.2), parsed into a small tree and
 * evaluated against a resource in its SCIM JSON form. No installed package parses SCIM filters, so
 * this is the grammar IdPs use, written out:
 *
 *   filter   = or
 *   or       = and *("or" and)
 *   and      = not *("and" not)
 *   not      = ["not"] "(" filter ")" / atom
 *   atom     = "(" filter ")" / attrPath "pr" / attrPath op value / attrPath "[" filter "]"
 *   op       = eq ne co sw ew gt ge lt le          (case-insensitive, like attribute names)
 *   value    = "string" / number / true / false / null
 *   path     = attrPath ["[" filter "]" ["." subAttr]]   (PATCH)
 *
 * Attribute names may carry their schema URN (`urn:ietf:params:scim:schemas:core:2.0:User:userName`).
 * Strings compare case-insensitively except for attributes RFC 7643 marks caseExact (id,
 * externalId, member values). A multi-valued attribute matches when any of its values does.
 */
export class ScimFilterError extends Error {
  override name = 'ScimFilterError'
}

type Operator = 'eq' | 'ne' | 'co' | 'sw' | 'ew' | 'gt' | 'ge' | 'lt' | 'le'
type Literal = string | number | boolean | null

export type FilterNode =
  | { kind: 'and' | 'or'; left: FilterNode; right: FilterNode }
  | { kind: 'not'; inner: FilterNode }
  | { kind: 'present'; path: string[] }
  | { kind: 'compare'; path: string[]; op: Operator; value: Literal }
  | { kind: 'valuePath'; path: string[]; inner: FilterNode }

export interface PatchPath {
  attribute: string[]
  /** `members[value eq "…"]`, `emails[type eq "work"]`. */
  filter: FilterNode | null
  subAttribute: string | null
}

const OPERATORS = new Set<string>(['eq', 'ne', 'co', 'sw', 'ew', 'gt', 'ge', 'lt', 'le'])
const CASE_EXACT = new Set(['id', 'externalid', 'members.value', 'value'])
const MAX_FILTER_CHARS = 4096
const SCHEMA_URN = /^urn:[a-z0-9:._-]+:(?=[^:]+$)/i

type Token = { type: 'word'; text: string } | { type: 'string'; text: string } | { type: 'punct'; text: '(' | ')' | '[' | ']' }

function tokenize(input: string): Token[] {
  if (input.length > MAX_FILTER_CHARS) throw new ScimFilterError(`the filter is longer than ${MAX_FILTER_CHARS} characters`)
  const tokens: Token[] = []
  let i = 0
  while (i < input.length) {
    const char = input[i]!
    if (char === ' ' || char === '\t' || char === '\n' || char === '\r') {
      i++
    } else if (char === '(' || char === ')' || char === '[' || char === ']') {
      tokens.push({ type: 'punct', text: char })
      i++
    } else if (char === '"') {
      // A JSON string literal (RFC 7644 says values are JSON): escapes as JSON reads them.
      let end = i + 1
      while (end < input.length && input[end] !== '"') end += input[end] === '\\' ? 2 : 1
      if (end >= input.length) throw new ScimFilterError('unterminated string in the filter')
      try {
        tokens.push({ type: 'string', text: JSON.parse(input.slice(i, end + 1)) as string })
      } catch {
        throw new ScimFilterError('invalid string escape in the filter')
      }
      i = end + 1
    } else {
      let end = i
      while (end < input.length && !' \t\n\r()[]"'.includes(input[end]!)) end++
      tokens.push({ type: 'word', text: input.slice(i, end) })
      i = end
    }
  }
  return tokens
}

/** `urn:…:User:name.givenName` → ['name', 'givenname'] (lower-cased: names are case-insensitive). */
function attributePath(text: string): string[] {
  const bare = text.replace(SCHEMA_URN, '')
  if (!/^[A-Za-z$][\w$-]*(\.[A-Za-z$][\w$-]*)?$/.test(bare)) throw new ScimFilterError(`"${text}" is not an attribute path`)
  return bare.toLowerCase().split('.')
}

class Parser {
  readonly #tokens: Token[]
  #at = 0

  constructor(tokens: Token[]) {
    this.#tokens = tokens
  }

  get done(): boolean {
    return this.#at >= this.#tokens.length
  }

  peek(): Token | undefined {
    return this.#tokens[this.#at]
  }

  next(): Token {
    const token = this.#tokens[this.#at++]
    if (!token) throw new ScimFilterError('the filter ends too early')
    return token
  }

  expect(text: string): void {
    const token = this.next()
    if (token.text !== text || token.type === 'string') throw new ScimFilterError(`expected "${text}" in the filter`)
  }

  isWord(text: string): boolean {
    const token = this.peek()
    return token?.type === 'word' && token.text.toLowerCase() === text
  }

  filter(depth = 0): FilterNode {
    if (depth > 32) throw new ScimFilterError('the filter is nested too deeply')
    let left = this.and(depth)
    while (this.isWord('or')) {
      this.next()
      left = { kind: 'or', left, right: this.and(depth) }
    }
    return left
  }

  and(depth: number): FilterNode {
    let left = this.unary(depth)
    while (this.isWord('and')) {
      this.next()
      left = { kind: 'and', left, right: this.unary(depth) }
    }
    return left
  }

  unary(depth: number): FilterNode {
    if (this.isWord('not')) {
      this.next()
      this.expect('(')
      const inner = this.filter(depth + 1)
      this.expect(')')
      return { kind: 'not', inner }
    }
    const token = this.peek()
    if (token?.type === 'punct' && token.text === '(') {
      this.next()
      const inner = this.filter(depth + 1)
      this.expect(')')
      return inner
    }
    return this.atom(depth)
  }

  atom(depth: number): FilterNode {
    const token = this.next()
    if (token.type !== 'word') throw new ScimFilterError('expected an attribute name in the filter')
    const path = attributePath(token.text)
    const after = this.peek()
    if (after?.type === 'punct' && after.text === '[') {
      this.next()
      const inner = this.filter(depth + 1)
      this.expect(']')
      return { kind: 'valuePath', path, inner }
    }
    const operator = this.next()
    const op = operator.type === 'word' ? operator.text.toLowerCase() : ''
    if (op === 'pr') return { kind: 'present', path }
    if (!OPERATORS.has(op)) throw new ScimFilterError(`unknown filter operator "${operator.text}"`)
    return { kind: 'compare', path, op: op as Operator, value: this.literal() }
  }

  literal(): Literal {
    const token = this.next()
    if (token.type === 'string') return token.text
    if (token.type === 'word') {
      const lower = token.text.toLowerCase()
      if (lower === 'true') return true
      if (lower === 'false') return false
      if (lower === 'null') return null
      if (/^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(token.text)) return Number(token.text)
    }
    throw new ScimFilterError(`"${token.text}" is not a value (strings are quoted)`)
  }
}

export function parseFilter(input: string): FilterNode {
  const parser = new Parser(tokenize(input))
  if (parser.done) throw new ScimFilterError('the filter is empty')
  const node = parser.filter()
  if (!parser.done) throw new ScimFilterError(`unexpected "${parser.peek()!.text}" in the filter`)
  return node
}

/** A PATCH `path`: `active`, `name.givenName`, `members[value eq "id"]`, `emails[type eq "work"].value`. */
export function parsePatchPath(input: string): PatchPath {
  const open = input.indexOf('[')
  if (open === -1) return { attribute: attributePath(input.trim()), filter: null, subAttribute: null }
  const close = input.lastIndexOf(']')
  if (close < open) throw new ScimFilterError(`"${input}" is not a valid path`)
  const rest = input.slice(close + 1)
  if (rest !== '' && !/^\.[A-Za-z$][\w$-]*$/.test(rest)) throw new ScimFilterError(`"${input}" is not a valid path`)
  return {
    attribute: attributePath(input.slice(0, open).trim()),
    filter: parseFilter(input.slice(open + 1, close)),
    subAttribute: rest === '' ? null : rest.slice(1).toLowerCase(),
  }
}

/** The property of `object` named `name`, ignoring case. */
export function propertyOf(object: unknown, name: string): unknown {
  if (typeof object !== 'object' || object === null || Array.isArray(object)) return undefined
  for (const [key, value] of Object.entries(object)) if (key.toLowerCase() === name) return value
  return undefined
}

/** Every value at `path` in `resource`, arrays flattened (a multi-valued attribute gives all). */
function valuesAt(resource: unknown, path: readonly string[]): unknown[] {
  let current: unknown[] = [resource]
  for (const name of path) {
    const next: unknown[] = []
    for (const item of current) {
      const value = propertyOf(item, name)
      if (Array.isArray(value)) next.push(...value)
      else if (value !== undefined && value !== null) next.push(value)
    }
    current = next
  }
  // `emails eq "x"` on a multi-valued complex attribute compares its `value` sub-attribute.
  return current.flatMap((value) => (typeof value === 'object' && value !== null ? [propertyOf(value, 'value')].filter((inner) => inner !== undefined) : [value]))
}

function compare(actual: unknown, op: Operator, expected: Literal, caseExact: boolean): boolean {
  if (expected === null) return op === 'eq' ? actual === null : op === 'ne' ? actual !== null : false
  if (typeof expected === 'string' && typeof actual === 'string') {
    const a = caseExact ? actual : actual.toLowerCase()
    const e = caseExact ? expected : expected.toLowerCase()
    switch (op) {
      case 'eq': return a === e
      case 'ne': return a !== e
      case 'co': return a.includes(e)
      case 'sw': return a.startsWith(e)
      case 'ew': return a.endsWith(e)
      case 'gt': return a > e
      case 'ge': return a >= e
      case 'lt': return a < e
      case 'le': return a <= e
    }
  }
  if (typeof expected === 'boolean') {
    // Entra sends "True"/"False" strings where booleans belong; compare them as the boolean they mean.
    const value = typeof actual === 'string' ? actual.toLowerCase() === 'true' : actual
    return op === 'eq' ? value === expected : op === 'ne' ? value !== expected : false
  }
  if (typeof expected === 'number' && typeof actual === 'number') {
    switch (op) {
      case 'eq': return actual === expected
      case 'ne': return actual !== expected
      case 'gt': return actual > expected
      case 'ge': return actual >= expected
      case 'lt': return actual < expected
      case 'le': return actual <= expected
      default: return false
    }
  }
  return op === 'ne'
}

export function matches(node: FilterNode, resource: unknown): boolean {
  switch (node.kind) {
    case 'and': return matches(node.left, resource) && matches(node.right, resource)
    case 'or': return matches(node.left, resource) || matches(node.right, resource)
    case 'not': return !matches(node.inner, resource)
    case 'present': return valuesAt(resource, node.path).some((value) => value !== '' && value !== null)
    case 'valuePath': {
      const items = node.path.reduce<unknown[]>((current, name) => current.flatMap((item) => {
        const value = propertyOf(item, name)
        return Array.isArray(value) ? value : value === undefined || value === null ? [] : [value]
      }), [resource])
      return items.some((item) => matches(node.inner, item))
    }
    case 'compare': {
      const values = valuesAt(resource, node.path)
      const caseExact = CASE_EXACT.has(node.path.join('.'))
      if (node.op === 'ne') return values.length === 0 || values.every((value) => compare(value, 'ne', node.value, caseExact))
      return values.some((value) => compare(value, node.op, node.value, caseExact))
    }
  }
}

/**
 * The value an `eq` on `attribute` pins down, when the whole filter is that one comparison
 * (`userName eq "x"`, Okta's lookup before every create): lets the caller use an index.
 */
export function equalityOn(node: FilterNode, attribute: string): string | null {
  return node.kind === 'compare' && node.op === 'eq' && node.path.length === 1 && node.path[0] === attribute.toLowerCase() && typeof node.value === 'string' ? node.value : null
}
