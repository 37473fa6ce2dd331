/** Every check the gateway runs, by id. A new check is one module, listed here. */
import { addPrefix } from './add-prefix.ts'
import { allowedRequestTypes } from './allowed-request-types.ts'
import { characterCount } from './character-count.ts'
import type { AnyCheckDefinition } from './check.ts'
import { contains } from './contains.ts'
import { endsWith } from './ends-with.ts'
import { inlineImageUrls } from './inline-image-urls.ts'
import { jsonKeys } from './json-keys.ts'
import { jsonSchema } from './json-schema.ts'
import { isAllLowerCase } from './lower-case.ts'
import { modelWhitelist } from './model-whitelist.ts'
import { partnerChecks } from './partner.ts'
import { regexMatch } from './regex-match.ts'
import { requestParamsCheck } from './request-params.ts'
import { requiredMetadataKeyPairs } from './required-metadata-key-pairs.ts'
import { requiredMetadataKeys } from './required-metadata-keys.ts'
import { sentenceCount } from './sentence-count.ts'
import { allUpperCase } from './upper-case.ts'
import { validUrls } from './valid-urls.ts'
import { webhook } from './webhook.ts'
import { wordCount } from './word-count.ts'

const definitions: readonly AnyCheckDefinition[] = [
  requiredMetadataKeyPairs,
  requiredMetadataKeys,
  inlineImageUrls,
  requestParamsCheck,
  addPrefix,
  allowedRequestTypes,
  regexMatch,
  contains,
  wordCount,
  sentenceCount,
  characterCount,
  jsonSchema,
  jsonKeys,
  validUrls,
  modelWhitelist,
  webhook,
  isAllLowerCase,
  allUpperCase,
  endsWith,
  ...partnerChecks,
]

export const CHECKS: ReadonlyMap<string, AnyCheckDefinition> = new Map(definitions.map((definition) => [definition.id, definition]))
